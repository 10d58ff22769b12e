#!/bin/sh
# Benchmark (not a test): a soak of `scorch server` (bench/soak.py). On a fresh store, for
# SECONDS (60 by default: a smoke run; the full-size soak is `bench/soak.sh 600 1000 50`):
# steady pushes of distinct realistic ~35 KB CPU profiles at PUSHES_PER_SECOND (20) into
# rate x 10 series (each a 10 s profile every 10 s, as a fleet of agents pushes), from
# keep-alive connections in several driver processes; the server scraping TARGETS (0)
# simulated Go services every 10 s, all seven types (one helper process serves them all,
# tests/e2e/fake_pprof_target.py, with ../shared/testdata/pprof's real profiles when
# present); 4 query clients at 4 queries/s each (the service's last 10 s flame graph, one
# instance's last hour as flame graph, timeline and profile list, service names, the
# fleet's scraped heap).
#
# Prints every 5 s the server's RSS, malloc's in-use memory (build/malloc_probe.so, from
# bench/malloc_probe.c, preloaded into the server: RSS also counts freed memory malloc
# keeps), the push rate achieved, errors, p50/p99 of pushes and queries and the CPU of server
# and driver; at the end the achieved push rate against the asked one, the CPU split (server,
# push processes and their ms a push, queriers, fake targets) and the load average, the
# slopes of RSS and of malloc's in-use memory after a warm-up (least squares, MiB per
# minute; flat under 0.5), the run's latencies per request kind, the scrapes done and
# failed (and why), and the acknowledged pushes against the profiles the store holds.
# Exits 1 when those differ, a request or scrape failed, a target or type went unscraped or
# the server died. The machine's load average is printed at the start and the end: on
# shared cores the rate achieved says as much about the neighbours as about the server.
#
# usage: bench/soak.sh [SECONDS] [PUSHES_PER_SECOND] [TARGETS]
# env: BENCH_NO_FSYNC=1 (server --no-fsync), SOAK_ARGS (more bench/soak.py options:
#      --targets --interval --conns --procs --series --profiles --queriers --qrate --every
#      --warmup --flat --behind --cache-memory --no-heap --keep; `python3 bench/soak.py --help`)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$root/build/scorch" ] || [ ! -f "$root/build/malloc_probe.so" ]; then
    make -C "$root" build >/dev/null
fi
set -- --seconds "${1:-60}" --rate "${2:-20}" --targets "${3:-0}"
[ "${BENCH_NO_FSYNC:-}" = 1 ] && set -- "$@" --no-fsync
# shellcheck disable=SC2086 # SOAK_ARGS is a list of options
exec python3 -B "$root/bench/soak.py" "$root/build/scorch" "$@" ${SOAK_ARGS:-}
