#!/bin/sh
# server_shutdown.sh - SIGTERM to a real `scorch server` while several clients push: it
# exits 0 within a few seconds, no request hangs, and after a restart on the same data
# every push that was answered 200 is there (render, timeline and series agree)
# (tests/e2e/server_shutdown.py does the work; the shared test data adds bigger pushes).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/server_shutdown.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
