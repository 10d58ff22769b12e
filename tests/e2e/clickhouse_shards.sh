#!/bin/sh
# clickhouse_shards.sh - two clickhouse-server processes as two shards of one cluster under a
# scorch server: data lands on both, answers equal SQLite's; a shard killed mid-run makes its
# pushes wait in the local log and every acknowledged push is stored once after it returns
# (tests/e2e/clickhouse_shards.py does the work). Skips without clickhouse-server.
set -u
. "$SCORCH_SRC/tests/lib.sh"
clickhouse_py clickhouse_shards
