#!/bin/sh
# Benchmark (not a test): a soak of `scorch server`. Steady pushes of distinct realistic CPU
# profiles and steady queries of what is being written, for SECONDS (60 by default: a smoke
# run; give hours for a real soak); prints the server's RSS and the p50/p99 latencies every
# 5 s, then the acknowledged pushes against the profiles the store holds (exit 1 when one is
# missing) and the run's latencies (bench/soak.py).
# usage: bench/soak.sh [SECONDS] [PUSHES_PER_SECOND]
# env: BENCH_NO_FSYNC=1 (server --no-fsync), SOAK_ARGS (more bench/soak.py options:
#      --conns --queriers --qrate --every --series --profiles --keep)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/scorch" ] || make -C "$root" build >/dev/null
set -- --seconds "${1:-60}" --rate "${2:-20}"
[ "${BENCH_NO_FSYNC:-}" = 1 ] && set -- "$@" --no-fsync
# shellcheck disable=SC2086 # SOAK_ARGS is a list of options
exec python3 -B "$root/bench/soak.py" "$root/build/scorch" "$@" ${SOAK_ARGS:-}
