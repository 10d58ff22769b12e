#!/bin/sh
# ui.sh - benchmark of the web UI: starts `scorch server` on a fresh store and
#  1. pushes ../shared/testdata/pprof/synthetic-allocs-100k.pb.gz and runs bench/ui_bench.mjs
#     in headless Chromium (time to the first 100,000-node flame graph, redraw and zoom
#     times, hover frame times);
#  2. pushes an hour of `perf script` samples at 99 Hz on 2 CPUs (bench/gen_perf.py, one push
#     a minute) and times the heatmap: the server, and the first draw (bench/ui_heatmap.mjs);
#  3. pushes the 300,000-sample heap profile of bench/top.sh (bench/gen_pprof.py) and times
#     the server's call graph SVG beside `go tool pprof -svg` on the same file, in the same
#     run, with the ratio.
# Prints the numbers; not a test.
#
# usage: bench/ui.sh [build/scorch]   (env: SCORCH_TESTDATA, CHROMIUM, RUNS, SKIP=flame,heatmap,callgraph)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
scorch=${1:-$src/build/scorch}
data=${SCORCH_TESTDATA:-$src/../shared/testdata}
profile=$data/pprof/synthetic-allocs-100k.pb.gz
[ -f "$profile" ] || { echo "ui.sh: no $profile" >&2; exit 1; }
[ -x "$scorch" ] || { echo "ui.sh: build first (make build)" >&2; exit 1; }
if [ ! -d "$src/tests/ui/node_modules/playwright-core" ]; then
    (cd "$src/tests/ui" && npm ci --no-audit --no-fund >&2)
fi

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$scorch" server --data "$tmp/data" --listen 127.0.0.1:0 2>"$tmp/log" &
pid=$!
url=
for _ in $(seq 100); do
    url=$(sed -n 's/^scorch: listening on \(http:[^ ]*\).*/\1/p' "$tmp/log")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/log" >&2; exit 1; }
curl -sf -o /dev/null --data-binary "@$profile" \
    "$url/ingest?name=synth%7Benv%3Dbench%7D&format=pprof&from=$(( $(date +%s) - 60 ))"

skip=${SKIP:-}
case ",$skip," in *,flame,*) ;; *)
echo "== flame graph of 100,000 nodes"
SCORCH_URL="$url/" QUERY='{service_name="synth"}' TYPE=heap:alloc_space MAXNODES=100000 \
    PLAYWRIGHT="$src/tests/ui/package.json" CHROMIUM=${CHROMIUM:-/usr/bin/chromium} \
    node "$src/bench/ui_bench.mjs"
;; esac

# wall seconds of a GET (best of $2, default 3)
get_time() {
    best=
    for _ in $(seq "${2:-3}"); do
        t=$(curl -s -o "$tmp/get.out" -w '%{time_total}' "$1")
        best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    echo "$best"
}

case ",$skip," in *,heatmap,*) ;; *)
echo "== heatmap of an hour at 99 Hz on 2 CPUs"
perfdir="$src/bench/out/perf-1h"
[ -s "$perfdir/perf-059.txt" ] || python3 "$src/bench/gen_perf.py" "$perfdir" 3600 99 2
t0=$(( $(date +%s) - 4000 ))
i=0
for f in "$perfdir"/perf-*.txt; do
    curl -sf -o /dev/null --data-binary "@$f" \
        "$url/ingest?name=host%7Benv%3Dbench%7D&format=perf_script&from=$((t0 + i * 60))" ||
        { echo "ui.sh: push of $f failed" >&2; exit 1; }
    i=$((i + 1))
done
hq="query=%7Bservice_name%3D%22host%22%7D&type=cpu:cpu-clock&from=$t0&until=$((t0 + 3600))"
st=$(get_time "$url/api/v1/heatmap?$hq")
echo "samples: $(du -sm "$perfdir" | cut -f1) MB of perf script in $i pushes; heatmap JSON $(wc -c <"$tmp/get.out") bytes"
echo "  server: $(awk -v t="$st" 'BEGIN { printf "%.0f", t * 1000 }') ms for the hour (curl, best of 3)"
SCORCH_URL="$url/" QUERY='{service_name="host"}' TYPE=cpu:cpu-clock FROM=$t0 UNTIL=$((t0 + 3600)) \
    PLAYWRIGHT="$src/tests/ui/package.json" CHROMIUM=${CHROMIUM:-/usr/bin/chromium} \
    node "$src/bench/ui_heatmap.mjs"
;; esac

case ",$skip," in *,callgraph,*) ;; *)
echo "== call graph of a 300,000-sample heap profile"
heap="$src/bench/out/heap300000.pb.gz"
[ -s "$heap" ] || python3 "$src/bench/gen_pprof.py" "$heap" 300000
curl -sf -o /dev/null --data-binary "@$heap" \
    "$url/ingest?name=heap%7Benv%3Dbench%7D&format=pprof&from=$(( $(date +%s) - 120 ))"
cq="query=%7Bservice_name%3D%22heap%22%7D&type=heap:alloc_space&from=now-1h"
sv=$(get_time "$url/api/v1/callgraph?$cq")
grep -q '</svg>' "$tmp/get.out" || { echo "ui.sh: no SVG from the server" >&2; exit 1; }
shown=$(grep -o 'Showing top [0-9]* nodes out of [0-9]*' "$tmp/get.out" | head -1)
sv300=$(get_time "$url/api/v1/callgraph?$cq&nodecount=300" 1)
shown300=$(grep -o 'Showing top [0-9]* nodes out of [0-9]*' "$tmp/get.out" | head -1)
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
if command -v go >/dev/null; then
    set -- $(python3 "$src/bench/measure.py" -n 1 -o "$tmp/go.svg" -- go tool pprof -svg "$heap")
    gt=$1
    grep -q '</svg>' "$tmp/go.svg" || gt=
fi
printf '%-44s %8.2f s  (%s)\n' "scorch server /api/v1/callgraph (svg)" "$sv" "$shown"
printf '%-44s %8.2f s  (%s; asked for 300)\n' "  ... nodecount=300" "$sv300" "$shown300"
if [ -n "${gt:-}" ]; then
    printf '%-44s %8.2f s\n' "go tool pprof -svg (decode, graph, dot)" "$gt"
    awk -v g="$gt" -v s="$sv" 'BEGIN { printf "ratio: scorch %.1fx faster than go tool pprof -svg\n", g / s }'
else
    echo "go tool pprof -svg: not run (no go, or it failed)"
fi
;; esac
