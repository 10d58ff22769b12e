#!/bin/sh
# fnseries.sh - benchmark of a function over time: /api/v1/timeline?function=NAME beside the
# plain timeline of the same range, in the same run, over a month of one service (the store
# of bench/query_scale.sh: 259,200 ten-second CPU profiles written by bench/store_bench.c,
# ~860 samples each over a 20,000-stack pool, rollups built). Starts `scorch server` on it
# and times, best of RUNS, the last 30 d, 7 d and 24 h at the default step (120 steps, from
# an unaligned instant as a UI asks), for the heaviest function by self and by total, as
# value=total and value=self; prints each beside the plain timeline with the ratio. Goal: a
# function over 30 d under 300 ms.
# usage: bench/fnseries.sh [PROFILES]   (env: RUNS (5), DATA=DIR: a store written before
#        by `BENCH_NO_FSYNC=1 build/store_bench DIR PROFILES` to use instead of a new one)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-259200}
runs=${RUNS:-5}
make -C "$src" build >/dev/null
scorch=$src/build/scorch
tmp=$(mktemp -d /tmp/scorch-fnseries-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

data=${DATA:-}
if [ -z "$data" ]; then
    data=$tmp/data
    echo "== writing $n profiles (bench/store_bench)"
    t0=$(date +%s)
    BENCH_NO_FSYNC=1 "$src/build/store_bench" "$data" "$n" 2 | grep -E '^(write rate|rollup|bytes on disk)'
    echo "store written in $(( $(date +%s) - t0 )) s"
fi
# the store's profiles are from 2023: no retention to take them
printf 'storage: {engine: sqlite, path: "%s", retention: 36500d}\n' "$data" >"$tmp/scorch.yaml"
"$scorch" server --config "$tmp/scorch.yaml" --listen 127.0.0.1:0 2>"$tmp/log" &
pid=$!
url=
for _ in $(seq 300); do
    url=$(sed -n 's/^scorch: listening on \(http:[^ ]*\).*/\1/p' "$tmp/log")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/log" >&2; exit 1; }

# store_bench's profiles: every 10 s from 1700006400; the ranges end 37 s before the last
end=$((1700006400 + n * 10 - 37))
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
sel=$(enc '{service_name="checkout"}')
base="$url/api/v1/timeline?query=$sel&type=cpu:cpu"

# the server's CPU time so far, in clock ticks (utime + stime)
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)

# best wall seconds of a GET over $runs runs; the answer in $tmp/get.out, the server's CPU
# milliseconds a request in $tmp/cpu (wall time follows the neighbours on a shared machine;
# CPU time does not, and it counts the timeline's thread beside the rows')
get_time() {
    best=
    c0=$(ticks)
    for _ in $(seq "$runs"); do
        t=$(curl -s -o "$tmp/get.out" -w '%{http_code} %{time_total}' "$1")
        case $t in 200\ *) ;; *) echo "GET $1: $t: $(head -c 300 "$tmp/get.out")" >&2; exit 1 ;; esac
        t=${t#* }
        best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    awk -v a="$c0" -v b="$(ticks)" -v hz="$hz" -v n="$runs" \
        'BEGIN { printf "%.0f", (b - a) * 1000 / hz / n }' >"$tmp/cpu"
    echo "$best"
}

# the functions: the heaviest by self and by total over the last hour
curl -sf -o "$tmp/top.tsv" "$url/api/v1/render?query=$sel&type=cpu:cpu&format=tsv&from=$((end - 3600))&until=$end"
by_self=$(awk -F '\t' 'NR > 1 { print; exit }' "$tmp/top.tsv" | cut -f3)
by_total=$(awk -F '\t' 'NR > 1' "$tmp/top.tsv" | sort -t "$(printf '\t')" -k2,2nr | head -1 | cut -f3)
echo "functions: heaviest by self '$by_self', by total '$by_total'"

for span in 30d:2592000 7d:604800 24h:86400; do
    label=${span%%:*}
    from=$((end - ${span#*:}))
    t_plain=$(get_time "$base&from=$from&until=$end")
    steps=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("%d steps of %d s" % (len(d["timestamps"]), d["step"]))' "$tmp/get.out")
    c_plain=$(cat "$tmp/cpu")
    printf '%-4s %s: timeline %.0f ms (CPU %s ms)\n' "$label" "$steps" \
        "$(awk -v t="$t_plain" 'BEGIN { print t * 1000 }')" "$c_plain"
    for fn in "$by_self" "$by_total"; do
        for value in total self; do
            t=$(get_time "$base&from=$from&until=$end&function=$(enc "$fn")&value=$value")
            python3 - "$tmp/get.out" "$value" "$fn" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["function"] == sys.argv[3] and d["value"] == sys.argv[2], d
assert any(v for v in d["series"][0]["values"]), "an empty line"
EOF
            awk -v t="$t" -v p="$t_plain" -v v="$value" -v f="$fn" -v c="$(cat "$tmp/cpu")" \
                -v cp="$c_plain" 'BEGIN { printf "     %-5s of %s: %.0f ms (%.2fx the timeline), CPU %d ms (%.2fx)\n", v, f, t * 1000, t / p, c, c / (cp ? cp : 1) }'
        done
    done
done
