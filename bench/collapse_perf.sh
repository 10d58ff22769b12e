#!/bin/sh
# Benchmark: `scorch collapse perf` against FlameGraph's stackcollapse-perf.pl on the same
# input in the same run. The input is the test data's system-wide capture repeated COPIES
# times (default 40, about 36 MB). Prints wall-clock seconds and the ratios.
# usage: bench/collapse_perf.sh [COPIES]   (env: SCORCH, FLAMEGRAPH_DIR, SCORCH_TESTDATA)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch="${SCORCH:-$root/build/scorch}"
fg="${FLAMEGRAPH_DIR:-$root/../fg}"
[ -f "$fg/stackcollapse-perf.pl" ] || fg=/work/fg
data="${SCORCH_TESTDATA:-$root/../shared/testdata}/perf/system-wide-go-xz.perf.txt"
copies="${1:-40}"
for f in "$scorch" "$fg/stackcollapse-perf.pl" "$data"; do
    [ -e "$f" ] || { echo "bench: missing $f" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$copies" ]; do
    cat "$data"
    i=$((i + 1))
done >"$tmp/in.txt"
bytes=$(wc -c <"$tmp/in.txt")

now() { date +%s.%N; }
run() { # label, command...: prints the seconds taken
    label=$1
    shift
    t0=$(now)
    "$@" >"$tmp/$label.out"
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}

cat "$tmp/in.txt" >/dev/null # page cache
t_perl=$(run perl perl "$fg/stackcollapse-perf.pl" "$tmp/in.txt")
t_one=$(run one "$scorch" collapse perf --threads 1 "$tmp/in.txt")
t_auto=$(run auto "$scorch" collapse perf "$tmp/in.txt")
LC_ALL=C sort "$tmp/perl.out" >"$tmp/perl.sorted"
same=yes
cmp -s "$tmp/perl.sorted" "$tmp/one.out" || same=NO
cmp -s "$tmp/perl.sorted" "$tmp/auto.out" || same=NO
printf 'input: %s copies of system-wide-go-xz.perf.txt, %s bytes; outputs identical: %s\n' \
    "$copies" "$bytes" "$same"
printf '%-36s %8.3f s\n' "stackcollapse-perf.pl" "$t_perl"
printf '%-36s %8.3f s  %6.1fx faster\n' "scorch collapse perf --threads 1" "$t_one" \
    "$(awk -v a="$t_perl" -v b="$t_one" 'BEGIN { print a / b }')"
printf '%-36s %8.3f s  %6.1fx faster\n' "scorch collapse perf (auto threads)" "$t_auto" \
    "$(awk -v a="$t_perl" -v b="$t_auto" 'BEGIN { print a / b }')"
