#!/bin/sh
# clickhouse_log.sh - the ClickHouse backend's local log: pushes acknowledged while
# ClickHouse hangs, scorch killed (SIGKILL) with them in its log and an insert perhaps in
# flight, then restarted: every acknowledged push is stored exactly once, and a client's
# retry of a stored push is not stored again (tests/e2e/clickhouse_log.py does the work).
# Skips without clickhouse-server.
set -u
. "$SCORCH_SRC/tests/lib.sh"
clickhouse_py clickhouse_log
