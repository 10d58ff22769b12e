#!/bin/sh
# clickhouse_replicas.sh - ZooKeeper and three clickhouse-servers as two shards, the first
# with two replicas, under a scorch server: pushes go on through a replica's and a whole
# shard's death, reads fail over to the live replica, and every acknowledged push is
# stored exactly once, answering as SQLite does (tests/e2e/clickhouse_replicas.py).
# Skips without clickhouse-server or ZooKeeper.
set -u
. "$SCORCH_SRC/tests/lib.sh"
command -v java >/dev/null 2>&1 && [ -d /usr/share/zookeeper ] ||
    skip "zookeeper is not installed (scripts/install-deps.sh test)"
clickhouse_py clickhouse_replicas
