#!/bin/sh
# clickhouse_shards.sh - two clickhouse-server processes as two shards of one cluster under a
# scorch server: data lands on both, answers equal SQLite's; a shard killed mid-run makes its
# pushes 503 (Retry-After) and nothing acknowledged is lost after it returns
# (tests/e2e/clickhouse_shards.py does the work). Skips without clickhouse-server.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
[ -x /usr/sbin/clickhouse-server ] || skip "clickhouse-server is not installed (scripts/install-deps.sh test)"
e2e_tmp
# the clickhouse-servers run in their own sessions: stopped here too, whatever happens
trap 'python3 -B "$SCORCH_SRC/tests/e2e/clickhouse_common.py" down "$tmp/ch" 2>/dev/null; e2e_cleanup' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/clickhouse_shards.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log "$tmp"/ch/*/log/*.err.log >&2; }
exit "$rc"
