#!/bin/sh
# Benchmark: a month of one service in the store, as it is now and as it was before the
# query-engine work (commit $OLD, built from git in a temp dir), side by side. The month:
# 259,200 ten-second CPU profiles, ~860 samples each over a 20,000-stack pool, written
# through the store API (bench/store_bench.c, fsync off to save time: the write path's
# durability is bench/store.sh's business). Prints bytes per sample on disk, the RSS of a
# fresh process after opening the store, and the flame-graph merges of the last 1 h, 24 h,
# 7 d and 30 d. Goals: 30 d < 300 ms, 24 h < 50 ms, RSS after open < 100 MB, < 2 bytes per
# sample.
# usage: bench/query_scale.sh [PROFILES]   (env OLD=<commit>, default 2371629)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-259200}
old=${OLD:-2371629}
tmp=$(mktemp -d /tmp/scorch-query-scale-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
make -C "$root" build >/dev/null

# the old store, with today's benchmark source (it uses only functions both versions have)
if git -C "$root" cat-file -e "$old^{commit}" 2>/dev/null; then
    mkdir -p "$tmp/old"
    git -C "$root" archive "$old" | tar -x -C "$tmp/old"
    cp "$tmp/old/bench/store_bench.c" "$tmp/old-store_bench.c"
    cp "$root/bench/store_bench.c" "$tmp/old/bench/store_bench.c"
    build_old() {
        cmake -S "$tmp/old" -B "$tmp/old/build" >/dev/null &&
            cmake --build "$tmp/old/build" -j "$(nproc)" --target store_bench >/dev/null 2>&1
    }
    # today's benchmark source may use what the old store lacks: then the old one's own
    build_old || { cp "$tmp/old-store_bench.c" "$tmp/old/bench/store_bench.c" && build_old; } ||
        { echo "cannot build the old store ($old)" >&2; old=""; }
else
    echo "commit $old not found: the old store is left out" >&2
    old=""
fi

run() { # LABEL BINARY DIR
    echo "== $1"
    BENCH_NO_FSYNC=1 BENCH_SCALE=1 "$2" "$3" "$n" 8 | grep -v '^merge 1 h\|^merge 10 min\|^merge 24 h:'
    "$2" --open "$3"
}
run "store now" "$root/build/store_bench" "$tmp/new"
[ -n "$old" ] && run "store at $old" "$tmp/old/build/store_bench" "$tmp/old-data"
exit 0
