#!/bin/sh
# scorch heatmap against an independent implementation of docs/api-heatmap.md's heatmap rule
# (tests/compat/heatmap_ref.py parses perf script text itself, finds samples and idle
# stacks the way FlameScope does, and computes cells with exact decimals):
# - every cell equal, plus start, rows and cols, for several row counts, on the shared
#   system-wide perf trace and the FlameGraph suite's single-event perf inputs;
# - a trace spanning more columns than allowed is refused, not allocated.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata perf
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
ref="$SCORCH_SRC/tests/compat/heatmap_ref.py"

compare() { # compare GOT WANT LABEL
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
from decimal import Decimal
got = json.load(open(sys.argv[1]), parse_float=Decimal)
want = json.load(open(sys.argv[2]), parse_float=Decimal)
label = sys.argv[3]
for k in ("start", "rows", "cols"):
    if Decimal(got[k]) != Decimal(want[k]):
        sys.exit("%s: %s is %s, want %s" % (label, k, got[k], want[k]))
if got["values"] != want["values"]:
    for c, (g, w) in enumerate(zip(got["values"], want["values"])):
        if g != w:
            r = next(i for i in range(len(w)) if i >= len(g) or g[i] != w[i])
            sys.exit("%s: first different cell [%d][%d]: %s, want %s"
                     % (label, c, r, g[r] if r < len(g) else None, w[r]))
    sys.exit("%s: values differ in shape" % label)
cells = sum(map(sum, want["values"]))
print("%s: %d columns x %d rows, %d busy samples, all cells equal (FlameScope's floats "
      "would move %d)" % (label, want["cols"], want["rows"], cells,
                          want["flamescope_float_cells"]))
PY
}

inputs="$SCORCH_TESTDATA/perf/system-wide-go-xz.perf.txt"
# the FlameGraph suite's inputs with timestamps and a single event (scorch keeps the first
# event only, as stackcollapse-perf.pl does; FlameScope counts every event)
if [ -d "$SCORCH_TESTDATA/flamegraph-compat" ]; then
    for f in dd-stacks-01 funcab-cmd-01 iperf-stacks-pidtid-01 java-faults-01 \
        java-stacks-01 mirageos-stacks-01 numa-stacks-01 rust-Yamakaky-dcpu; do
        inputs="$inputs $SCORCH_TESTDATA/flamegraph-compat/perf-$f.txt"
    done
fi
cases=0
for f in $inputs; do
    for rows in 50 1 7 1000; do
        "$SCORCH" heatmap --rows "$rows" "$f" >"$tmp/got" || fail "scorch heatmap failed on $f"
        python3 "$ref" "$rows" "$f" >"$tmp/want" || fail "heatmap_ref.py failed on $f"
        compare "$tmp/got" "$tmp/want" "$(basename "$f") rows=$rows" || exit 1
        cases=$((cases + 1))
    done
done
[ "$cases" -ge 4 ] || fail "expected at least 4 cases, ran $cases"

# two samples a year apart: refused with a limit error instead of ~32M columns
frame='\tffffffff81000000 f ([kernel.kallsyms])\n\n'
printf "prog 1 [000] 100.000001: 1 cpu-clock:\n$frame" >"$tmp/year.txt"
printf "prog 1 [000] 31536100.5: 1 cpu-clock:\n$frame" >>"$tmp/year.txt"
if "$SCORCH" heatmap "$tmp/year.txt" >"$tmp/out" 2>"$tmp/err"; then
    fail "a year of timestamps was accepted"
fi
grep -q "more than" "$tmp/err" ||
    fail "unexpected error for a year of timestamps: $(cat "$tmp/err")"
echo "ok: $cases heatmaps equal to the reference; a year-long trace is refused"
