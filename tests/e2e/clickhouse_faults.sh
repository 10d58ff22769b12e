#!/bin/sh
# clickhouse_faults.sh - the ClickHouse backend against a fake ClickHouse that hangs, errs,
# is overloaded, answers without end or is gone: bounded requests and answers, 503 with
# Retry-After, recovery (tests/e2e/clickhouse_faults.py does the work; no clickhouse needed).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/clickhouse_faults.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
