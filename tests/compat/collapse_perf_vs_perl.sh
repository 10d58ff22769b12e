#!/bin/sh
# `scorch collapse perf` against stackcollapse-perf.pl itself, run side by side on random
# perf script text full of the script's corner cases (gen_perf_script.py) and on the real
# capture in the test data, with many flag combinations. Needs perl and a FlameGraph
# checkout: $FLAMEGRAPH_DIR, or ../fg beside the project, or /work/fg.
set -u
fg=""
for d in "${FLAMEGRAPH_DIR:-}" "$SCORCH_SRC/../fg" /work/fg; do
    if [ -n "$d" ] && [ -f "$d/stackcollapse-perf.pl" ]; then
        fg="$d"
        break
    fi
done
if [ -z "$fg" ] || ! command -v perl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "skip: needs perl, python3 and FlameGraph's stackcollapse-perf.pl (set FLAMEGRAPH_DIR)" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0

compare() { # input, flags...; $what names the input in messages
    input=$1
    shift
    n=$((n + 1))
    "$SCORCH" collapse perf "$@" "$input" >"$tmp/ours" 2>"$tmp/err" || {
        echo "FAIL $what $*: $(cat "$tmp/err")" >&2
        fails=$((fails + 1))
        return
    }
    perl "$fg/stackcollapse-perf.pl" "$@" "$input" 2>/dev/null >"$tmp/theirs"
    LC_ALL=C sort "$tmp/ours" >"$tmp/a"
    LC_ALL=C sort "$tmp/theirs" >"$tmp/b"
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL $what $*:" >&2
        diff "$tmp/b" "$tmp/a" | head -6 >&2
        fails=$((fails + 1))
    fi
}

seeds="${PERF_VS_PERL_SEEDS:-20}"
i=1
while [ "$i" -le "$seeds" ]; do
    python3 "$SCORCH_SRC/tests/compat/gen_perf_script.py" "$i" 40 >"$tmp/in.txt"
    what="gen_perf_script.py $i 40"
    for flags in "" "--pid" "--tid" "--all --addrs" "--kernel --tid" "--jit" \
        "--event-filter=instructions"; do
        # shellcheck disable=SC2086
        compare "$tmp/in.txt" $flags
    done
    i=$((i + 1))
done
real="${SCORCH_TESTDATA:-}/perf/system-wide-go-xz.perf.txt"
if [ -f "$real" ]; then
    what="$real"
    for flags in "" "--pid" "--tid --all" "--addrs"; do
        # shellcheck disable=SC2086
        compare "$real" $flags
    done
fi
echo "$n comparisons, $fails failed"
[ "$fails" -eq 0 ]
