#!/bin/sh
# listen_default.sh - loopback by default: `scorch server` with no --listen and no config
# listens on 127.0.0.1:4040 and nowhere else (tests/e2e/listen_default.py does the work;
# skipped, saying so, when port 4040 is taken on this machine).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/listen_default.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
