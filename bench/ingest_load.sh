#!/bin/sh
# Benchmark (not a test): POST /ingest under load. Starts `scorch server` with the embedded
# store (durable: fsync on every commit) in a temporary directory, pushes distinct realistic
# ~35 KB gzipped CPU profiles over 4 keep-alive connections for N seconds
# (bench/ingest_load.py) and prints profiles/s, p50/p95/p99 latency and the server's CPU use.
# usage: bench/ingest_load.sh [SECONDS] [CONNECTIONS]
# env: SCORCH (the binary, build/scorch by default: A/B runs), BENCH_NO_FSYNC=1 (server --no-fsync), BENCH_PERF=1 (perf record the server: prints
#      its top functions; keeps perf.data in bench/out/), BENCH_DIR (data directory)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
conns=${2:-4}
bin=${SCORCH:-$root/build/scorch}
[ -x "$bin" ] || make -C "$root" build >/dev/null
tmp=$(mktemp -d /tmp/scorch-ingest-load-XXXXXX)
data=${BENCH_DIR:-$tmp/data}
pid=""
perfpid=""
cleanup() {
    [ -n "$perfpid" ] && kill -INT "$perfpid" 2>/dev/null && wait "$perfpid" 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

set -- server --data "$data" --listen 127.0.0.1:0
[ "${BENCH_NO_FSYNC:-}" = 1 ] && set -- "$@" --no-fsync
"$bin" "$@" 2>"$tmp/server.log" &
pid=$!
i=0
while ! grep -qs 'listening on' "$tmp/server.log"; do
    i=$((i + 1))
    [ $i -le 100 ] && kill -0 "$pid" 2>/dev/null || {
        cat "$tmp/server.log" >&2
        exit 1
    }
    sleep 0.1
done
url=$(sed -n 's|.*listening on \(http://[0-9.:]*\).*|\1|p' "$tmp/server.log")
fs=$(df -T "$data" 2>/dev/null | awk 'NR==2 {print $2}')
echo "server $url, data in $data ($fs), fsync $([ "${BENCH_NO_FSYNC:-}" = 1 ] && echo off || echo on), $(nproc) cores"

if [ "${BENCH_PERF:-}" = 1 ]; then
    mkdir -p "$root/bench/out"
    # start recording once the profiles are generated: the generator prints to stderr first
    (sleep 3 && exec perf record -F 999 -g -p "$pid" -o "$root/bench/out/ingest_load.perf.data" \
        -- sleep "$seconds") 2>"$tmp/perf.log" &
    perfpid=$!
fi
python3 "$root/bench/ingest_load.py" "$url" --seconds "$seconds" --conns "$conns" --pid "$pid"
curl -s "$url/metrics" 2>/dev/null | grep -E '^scorch_ingest_(profiles_total|duration_seconds_(sum|count))' || true
if [ -n "$perfpid" ]; then
    wait "$perfpid" || true
    perfpid=""
    perf report -i "$root/bench/out/ingest_load.perf.data" --no-children --sort symbol \
        --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
fi
kill "$pid"
wait "$pid" || true
pid=""
du -sh "$data" | awk '{print "store size: " $1}'
