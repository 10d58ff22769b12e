#!/bin/sh
# Benchmark: the store benchmark's day (bench/store_bench.c: 8,640 ten-second CPU profiles
# of one service, ~1,000 samples each over a 20,000-stack pool, 16 writers) into SQLite and
# into ClickHouse (Debian's clickhouse-server, started here on loopback ports) with one and
# with two shards, in the same run: write rate, bytes on disk and the merges of 24 h, 1 h
# and 10 min, side by side. ClickHouse 18.16 does not fsync its parts, so SQLite is shown
# with and without fsync.
# `bench/clickhouse.sh http [SECONDS] [CONNS]` instead pushes over HTTP (bench/ingest_load.py)
# into a scorch server on SQLite and one on ClickHouse in the same run: each one's
# profiles/s (ClickHouse's counted until every acknowledged push is inserted) and
# ClickHouse's CPU per profile, inserts, rollups and merges (bench/clickhouse_http.py).
# usage: bench/clickhouse.sh [PROFILES] [THREADS] | bench/clickhouse.sh http [SECONDS] [CONNS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x /usr/sbin/clickhouse-server ] || { echo "clickhouse-server is not installed" >&2; exit 77; }
make -C "$root" build >/dev/null
if [ "${1:-}" = http ]; then
    tmp=$(mktemp -d /tmp/scorch-clickhouse-http-XXXXXX)
    trap 'python3 -B "$root/tests/e2e/clickhouse_common.py" down "$tmp/ch" 2>/dev/null; rm -rf "$tmp"' EXIT
    python3 -B "$root/bench/clickhouse_http.py" "$root" "$tmp" "${2:-20}" "${3:-8}"
    exit
fi
n=${1:-8640}
threads=${2:-16}
tmp=$(mktemp -d /tmp/scorch-clickhouse-bench-XXXXXX)
ch="python3 -B $root/tests/e2e/clickhouse_common.py"
cleanup() {
    for d in "$tmp"/one "$tmp"/two; do [ -d "$d" ] && $ch down "$d"; done
    rm -rf "$tmp"
}
trap cleanup EXIT
bench="$root/build/store_bench"

run() { # LABEL [ENV...]
    label=$1
    shift
    env "$@" "$bench" "$tmp/sqlite-$label" "$n" "$threads" >"$tmp/$label.out" 2>&1 ||
        { cat "$tmp/$label.out" >&2; exit 1; }
    echo "$label" >>"$tmp/labels"
}
run "sqlite"
run "sqlite-nofsync" BENCH_NO_FSYNC=1
mkdir -p "$tmp/one" "$tmp/two"
# after the fresh merges, ClickHouse merges its parts (OPTIMIZE ... FINAL on every shard)
# and the merges are timed again: a store under steady ingest has its parts merged
settle() { # URL...
    for u in "$@"; do
        for t in profiles rollup; do
            printf "$ch sql %s 'OPTIMIZE TABLE scorch_%s_local FINAL' >/dev/null; " "$u" "$t"
        done
    done
}
url=$($ch up "$tmp/one" 1)
run "clickhouse-1" BENCH_ENGINE=clickhouse BENCH_CH_URL="$url" BENCH_SETTLE="$(settle "$url")"
$ch down "$tmp/one"
urls=$($ch up "$tmp/two" 2)
u0=$(echo "$urls" | sed -n 1p)
u1=$(echo "$urls" | sed -n 2p)
run "clickhouse-2" BENCH_ENGINE=clickhouse BENCH_CH_URL="$u0" BENCH_CH_CLUSTER=scorch \
    BENCH_CH_SHARDS="$u0,$u1" BENCH_SETTLE="$(settle "$u0" "$u1")"
for s in "$u0" "$u1"; do
    printf 'shard %s holds %s profile rows\n' "$s" \
        "$($ch sql "$s" 'SELECT count() FROM scorch_profiles_local' | tr -d '\n')"
done >"$tmp/shards"
$ch down "$tmp/two"

# one column per run
python3 - "$tmp" <<'PY'
import re, sys
tmp = sys.argv[1]
labels = open(tmp + "/labels").read().split()
rows = [("write rate (profiles/s)", r"write rate:\s+(\d+)"),
        ("CPU per profile (us)", r"; (\d+) us of CPU"),
        ("bytes on disk", r"bytes on disk:\s+(\d+)"),
        ("bytes per sample", r"([\d.]+) bytes/sample"),
        ("merge 24 h (ms)", r"merge 24 h:\s+([\d.]+)"),
        ("merge 1 h aligned (ms)", r"merge 1 h \(aligned\):\s+([\d.]+)"),
        ("merge 1 h unaligned (ms)", r"merge 1 h \(unaligned\):\s+([\d.]+)"),
        ("merge 10 min (ms)", r"merge 10 min:\s+([\d.]+)"),
        ("stacks in the 24 h merge", r"merge 24 h:.*\((\d+) stacks"),
        ("24 h, parts not merged (ms)", r"right after writing: 24 h ([\d.]+)"),
        ("10 min, not merged (ms)", r"right after writing:.*10 min ([\d.]+)")]
out = {l: open("%s/%s.out" % (tmp, l)).read() for l in labels}
print("%-30s" % "" + "".join("%16s" % l for l in labels))
for name, rx in rows:
    vals = []
    for l in labels:
        m = re.search(rx, out[l])
        vals.append(m.group(1) if m else "-")
    print("%-30s" % name + "".join("%16s" % v for v in vals))
base = re.search(r"merge 24 h:\s+([\d.]+)", out["sqlite"])
for l in labels[1:]:
    m = re.search(r"merge 24 h:\s+([\d.]+)", out[l])
    w = re.search(r"write rate:\s+(\d+)", out[l])
    w0 = re.search(r"write rate:\s+(\d+)", out["sqlite"])
    if base and m and w and w0:
        print("%s vs sqlite: write rate %.2fx, 24 h merge %.2fx the time"
              % (l, float(w.group(1)) / float(w0.group(1)), float(m.group(1)) / float(base.group(1))))
PY
cat "$tmp/shards"
