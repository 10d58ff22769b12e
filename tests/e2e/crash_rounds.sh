#!/bin/sh
# crash_rounds.sh - kill -9 at random moments while pushing, scraping and querying, 20
# rounds: every push answered 200 is in the store after each restart, the store opens
# cleanly (integrity check) each time (tests/e2e/crash_rounds.py does the work; a full
# disk is tests/e2e/store_full_disk).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
need_cmd sqlite3 "sqlite3 (the integrity check)"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/crash_rounds.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
