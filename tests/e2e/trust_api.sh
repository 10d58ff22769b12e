#!/bin/sh
# trust_api.sh - what the diff and the timeline say, against numbers the test computes:
# empty sides, two profiles at one instant, new code, the default base, timed recordings,
# rates whatever the step (tests/e2e/trust_api.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/trust_api.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
