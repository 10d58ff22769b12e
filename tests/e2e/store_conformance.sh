#!/bin/sh
# store_conformance.sh - the same pushes into a server on SQLite and one on ClickHouse (a
# clickhouse-server started here on loopback ports): every query must answer the same, also
# after retention (tests/e2e/store_conformance.py does the work). Skips without
# clickhouse-server.
set -u
. "$SCORCH_SRC/tests/lib.sh"
clickhouse_py store_conformance
