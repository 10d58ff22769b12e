#!/bin/sh
# store_conformance.sh - the same pushes into a server on SQLite and one on ClickHouse (a
# clickhouse-server started here on loopback ports): every query must answer the same, also
# after retention (tests/e2e/store_conformance.py does the work). Skips without
# clickhouse-server.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
[ -x /usr/sbin/clickhouse-server ] || skip "clickhouse-server is not installed (scripts/install-deps.sh test)"
e2e_tmp
# the clickhouse-servers run in their own sessions: stopped here too, whatever happens
trap 'python3 -B "$SCORCH_SRC/tests/e2e/clickhouse_common.py" down "$tmp/ch" 2>/dev/null; e2e_cleanup' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/store_conformance.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log "$tmp"/ch/*/log/*.err.log >&2; }
exit "$rc"
