#!/bin/sh
# Benchmark: `scorch top` against `go tool pprof -top` on the same 300,000-sample heap
# profile in the same run; prints best-of-N wall time, peak memory and both ratios, and
# checks the two outputs are identical. The profile is made by gen_pprof.py (cached in
# bench/out/). usage: bench/top.sh [SAMPLES] [RUNS]   (env: SCORCH)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch="${SCORCH:-$root/build/scorch}"
samples="${1:-300000}"
runs="${2:-3}"
out="$root/bench/out"
mkdir -p "$out"
prof="$out/heap$samples.pb.gz"
[ -s "$prof" ] || python3 "$root/bench/gen_pprof.py" "$prof" "$samples"
command -v go >/dev/null || { echo "bench: go not found (Debian golang-go)" >&2; exit 1; }
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
m="python3 $root/bench/measure.py -n $runs"
set -- $($m -o "$out/top.scorch.txt" -- "$scorch" top "$prof")
st=$1 sm=$2
set -- $($m -o "$out/top.go.txt" -- go tool pprof -top "$prof")
gt=$1 gm=$2
same=yes
cmp -s "$out/top.scorch.txt" "$out/top.go.txt" || same=NO
printf 'input: %s samples, %s bytes gzipped; outputs identical: %s\n' "$samples" \
    "$(wc -c <"$prof")" "$same"
printf '%-26s %8.3f s %8.1f MiB\n' "go tool pprof -top" "$gt" "$gm"
printf '%-26s %8.3f s %8.1f MiB\n' "scorch top" "$st" "$sm"
awk -v gt="$gt" -v st="$st" -v gm="$gm" -v sm="$sm" \
    'BEGIN { printf "speed: %.1fx faster; memory: %.1fx less (1/%.1f)\n", gt / st, gm / sm, gm / sm }'
[ "$same" = yes ]
