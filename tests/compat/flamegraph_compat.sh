#!/bin/sh
# flamegraph_compat.sh - `scorch collapse perf` against stackcollapse-perf.pl's own results:
# every FlameGraph test input with every flag, and the system-wide capture in shared testdata
# (expected output made once with the Perl script, stored in tests/data). Lines compare
# sorted, as the Perl script's line order varies with its version.
set -u
: "${SCORCH:?SCORCH must point at the scorch binary}"
dir=${SCORCH_TESTDATA:-}/flamegraph-compat
if [ -z "${SCORCH_TESTDATA:-}" ] || [ ! -d "$dir/results" ]; then
    echo "skip: no FlameGraph test data in '${SCORCH_TESTDATA:-}/flamegraph-compat'" >&2
    exit 77
fi
src=${SCORCH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C
export LC_ALL

cases=0
failed=0
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1" >&2
    diff "$2" "$3" | head -5 >&2
}

for input in "$dir"/*.txt; do
    name=$(basename "$input" .txt)
    for flag in pid tid kernel jit all addrs; do
        want=$dir/results/$name-collapsed-$flag.txt
        [ -f "$want" ] || continue
        cases=$((cases + 1))
        sort "$want" > "$tmp/want"
        if ! "$SCORCH" collapse perf "--$flag" "$input" > "$tmp/out" 2> "$tmp/err"; then
            failed=$((failed + 1))
            echo "FAIL: $name --$flag: exit status $?: $(head -1 "$tmp/err")" >&2
            continue
        fi
        sort "$tmp/out" > "$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" || fail "$name --$flag" "$tmp/want" "$tmp/got"
    done
done

# The system-wide capture: plain, gzipped, from stdin, and with 1 to 4 threads.
sw=$SCORCH_TESTDATA/perf/system-wide-go-xz.perf.txt
if [ -f "$sw" ]; then
    sort "$src/tests/data/system-wide-go-xz.collapsed.txt" > "$tmp/want"
    gzip -c "$sw" > "$tmp/sw.gz"
    for how in file gzip stdin t1 t2 t3 t4; do
        cases=$((cases + 1))
        case $how in
        file) "$SCORCH" collapse perf "$sw" ;;
        gzip) "$SCORCH" collapse perf "$tmp/sw.gz" ;;
        stdin) "$SCORCH" collapse perf - < "$sw" ;;
        t*) "$SCORCH" collapse perf --threads "${how#t}" "$sw" ;;
        esac > "$tmp/out" 2> "$tmp/err" || { fail "system-wide ($how): $(head -1 "$tmp/err")" /dev/null /dev/null; continue; }
        sort "$tmp/out" > "$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" || fail "system-wide ($how)" "$tmp/want" "$tmp/got"
    done
fi

# The CLI's errors: an unknown collapser, an unknown flag, a missing file.
cases=$((cases + 1))
if "$SCORCH" collapse nope > /dev/null 2> "$tmp/err" || ! grep -q "unknown collapser 'nope'" "$tmp/err"; then
    fail "collapse nope should fail with a clear error" /dev/null "$tmp/err"
fi
cases=$((cases + 1))
if "$SCORCH" collapse perf --bogus "$sw" > /dev/null 2>&1; then
    fail "collapse perf --bogus should fail" /dev/null /dev/null
fi
cases=$((cases + 1))
if "$SCORCH" collapse perf "$tmp/missing.txt" > /dev/null 2> "$tmp/err" || ! grep -q "missing.txt" "$tmp/err"; then
    fail "a missing file should fail naming it" /dev/null "$tmp/err"
fi

echo "flamegraph_compat: $cases cases compared, $failed failed"
[ "$failed" -eq 0 ]
