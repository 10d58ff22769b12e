#!/bin/sh
# server_drain.sh - SIGTERM's drain: pushes on kept-alive connections stop
# being served (a new request on an open connection is 503 with Connection: close and is
# not stored), an upload begun before SIGTERM is still answered and stored, one that never
# ends is cut at server.shutdown_timeout, and after a restart the stored pushes are exactly
# the ones answered 200: none stored without an answer (a client would retry and duplicate
# it), none answered and lost (tests/e2e/server_drain.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/server_drain.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
