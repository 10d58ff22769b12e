#!/bin/sh
# watch_api.sh - /api/v1/changes finds the changes the test plants (a step at a version
# change, a trend, new code, a leaking heap) and nothing in unchanged services; markers at
# label value changes (tests/e2e/watch_api.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/watch_api.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
