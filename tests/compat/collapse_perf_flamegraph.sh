#!/bin/sh
# `scorch collapse perf --FLAG` against every result of FlameGraph's own test suite
# (stackcollapse-perf.pl's output for 13 perf script inputs and 6 flags), as sorted lines.
set -u
dir="${SCORCH_TESTDATA:-}/flamegraph-compat"
if [ -z "${SCORCH_TESTDATA:-}" ] || [ ! -d "$dir/results" ]; then
    echo "skip: no FlameGraph test data in ${SCORCH_TESTDATA:-../shared/testdata}" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
for input in "$dir"/perf-*.txt; do
    base=$(basename "$input" .txt)
    for flag in pid tid kernel jit all addrs; do
        want="$dir/results/$base-collapsed-$flag.txt"
        [ -f "$want" ] || continue
        n=$((n + 1))
        if ! "$SCORCH" collapse perf "--$flag" "$input" >"$tmp/out" 2>"$tmp/err"; then
            echo "FAIL $base --$flag: exit status $?: $(cat "$tmp/err")" >&2
            fails=$((fails + 1))
            continue
        fi
        LC_ALL=C sort "$tmp/out" >"$tmp/got"
        LC_ALL=C sort "$want" >"$tmp/want"
        if ! cmp -s "$tmp/got" "$tmp/want"; then
            echo "FAIL $base --$flag:" >&2
            diff "$tmp/want" "$tmp/got" | head -5 >&2
            fails=$((fails + 1))
        fi
    done
done
echo "$n comparisons, $fails failed"
[ "$n" -gt 0 ] && [ "$fails" -eq 0 ]
