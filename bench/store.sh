#!/bin/sh
# Benchmark: a realistic day into the store (bench/store_bench.c): write rate, merge latency
# and bytes on disk against the .pb.gz bytes of the same profiles. Prints the figures.
# usage: bench/store.sh [PROFILES] [THREADS]   (env: BENCH_NO_FSYNC=1 to skip fsyncs)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/store_bench" ] || make -C "$root" build >/dev/null
exec "$root/build/store_bench" "" "${1:-8640}" "${2:-16}"
