#!/bin/sh
# ui.sh - benchmark of the web UI on a 100,000-node flame graph: starts `scorch server` on a
# fresh store, pushes ../shared/testdata/pprof/synthetic-allocs-100k.pb.gz, and runs
# bench/ui_bench.mjs in headless Chromium (time to the first flame graph, redraw and zoom
# times, hover frame times). Prints the numbers; not a test.
#
# usage: bench/ui.sh [build/scorch]   (env: SCORCH_TESTDATA, CHROMIUM, RUNS)
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

SCORCH_URL="$url/" QUERY='{service_name="synth"}' TYPE=heap:alloc_space MAXNODES=100000 \
    PLAYWRIGHT="$src/tests/ui/package.json" CHROMIUM=${CHROMIUM:-/usr/bin/chromium} \
    node "$src/bench/ui_bench.mjs"
