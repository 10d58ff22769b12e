#!/bin/sh
# Benchmark: what 50 rules cost the server when evaluated every minute (bench/rules.py).
# usage: bench/rules.sh [INTERVAL_S] [ROUNDS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
make -C "$root" build >/dev/null
python3 -B "$root/bench/rules.py" "$root/build/scorch" "${1:-10}" "${2:-6}"
