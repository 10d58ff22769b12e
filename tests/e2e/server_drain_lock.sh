#!/bin/sh
# server_drain_lock.sh - SIGTERM with a push still in its handler at the drain's end (issue
# 15, Shutdown): the test holds the store's write lock from outside (python's sqlite3,
# BEGIN IMMEDIATE), so the push's commit waits with no hook in the product. (1) The lock
# goes after the drain's end, within the push's own bound: the push is answered 200, the
# server exits, and after a restart the push is stored exactly once. (2) The lock outlasts
# the push's bound (the store waits 10 s for another process's lock): the push is refused
# 503 naming the lock, nothing of it is stored, and the server exits within shutdown_timeout
# + twice that wait + a margin, the lock still held. (3) A push on a connection kept alive
# across SIGTERM is 503 with Connection: close and not stored (tests/e2e/server_drain_lock.py
# does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/server_drain_lock.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
