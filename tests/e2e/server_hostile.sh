#!/bin/sh
# server_hostile.sh - bad input over HTTP to a real `scorch server`: truncated and random
# bodies, a gzip bomb, bodies over the size limit (declared and chunked), huge label sets,
# broken selectors, bad times and ranges, wrong methods and paths, broken multipart. Each
# gets a 4xx JSON error naming the problem or the limit, the server's RSS stays bounded,
# /metrics counts the errors by reason, and the server keeps serving
# (tests/e2e/server_hostile.py does the work; it needs no shared test data).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/server_hostile.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
