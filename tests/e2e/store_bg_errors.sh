#!/bin/sh
# store_bg_errors.sh - trouble in the store's background work is not silent and does not
# stop it: a profile's block is made unreadable behind a stopped server's back. Once
# restarted, the compaction's first round leaves that block out of its rollup, stderr says
# so with the reason, /metrics counts it (scorch_store_background_errors_total), the other
# series' rollups are built in the same round, a raw read of the damaged profile is a 500
# naming it, and pushes and queries go on
# (tests/e2e/store_bg_errors.py does the work; about 12 s: the compaction's first round).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/store_bg_errors.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
