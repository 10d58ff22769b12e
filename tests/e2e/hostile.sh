#!/bin/sh
# hostile.sh - hostile per-input cases replayed against a real `scorch server`: a 60 MiB
# function name, a location of 1M inlined lines, pushes dated 2500, 2100 and 1970, from
# after until, random bytes without a format, 'bad}' as a name, 2^20+1 stack lines (each
# refused with its status and the limit's name, nothing stored, RSS bounded), INT64_MAX
# pushed twice (saturates in every view) and invalid UTF-8 in labels and frames (valid JSON
# with U+FFFD), each answered within 10 s; then the heavy queries: each view over
# server.query_memory refused naming it (a diff's statistics too), 503 with Retry-After past
# server.max_queries while light routes answer, SIGTERM with a call graph's layout running
# (exit 0 within the shutdown bound). tests/e2e/hostile.py does the work; it needs no shared
# test data.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/hostile.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
