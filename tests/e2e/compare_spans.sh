#!/bin/sh
# compare_spans.sh - two spans of one stored recording compared with replicates: a perf
# script capture (made here, fixed seed) whose second half moves time from b() to a() is
# pushed once; the diff of a span of each half (as the heatmap's two selections ask it)
# cuts each span by time into replicates, finds a() grown and b() shrunk, and two spans of
# the same half differ in nothing (tests/e2e/compare_spans.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/compare_spans.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
