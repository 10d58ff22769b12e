"""clickhouse_log.py - a `scorch server` on ClickHouse killed with pushes in its local log.
Usage: clickhouse_log.py TMPDIR (env: SCORCH, SCORCH_SRC).

1. Pushes acknowledged, read back: each stored once.
2. ClickHouse stopped (SIGSTOP: it holds the connections, answers nothing, the flusher's
   insert hangs in flight); more pushes are acknowledged all the same (from the log);
   scorch is killed (SIGKILL); ClickHouse continues (and may finish the insert scorch never
   heard back from); scorch restarts on the same data directory: every acknowledged push is
   stored exactly once, none lost, none twice.
3. The same pushes sent again (a client whose answers were lost) are not stored again;
   the log's segments are gone once inserted.
4. A backlog (ClickHouse stopped again under 2,000 more pushes, some sent twice, a
   thousand records apart): the flusher prepares each batch while the one before it is
   inserted, and every push is stored once.
5. The rollups (summed by scorch, stored by the insert that stores their profiles) are the
   raw profiles summed, per resolution, series, bucket and stack: each push counted once,
   also after the crash. The rollup view of older versions (made here before scorch
   starts) is dropped: a ClickHouse that runs the views of a view's target would count
   every profile twice.
6. An insert whose profiles were stored and its rollups not (a view that fails between
   the two): the retry stores the rollups and not the profiles again.
7. A shard that comes back without its tables: made again by the next insert, whose pushes
   are stored once each."""
import os
import signal
from concurrent.futures import ThreadPoolExecutor
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clickhouse_common as chc  # noqa: E402
from server_common import Server, check, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
NOW = int(time.time())
NSERVICES = 5


def push(srv, n):
    """Push n: a stack of its own with n + 1 samples, so its count is read back by name."""
    t = NOW - 6000 + 2 * n
    body = ("main;handle;push_%d %d\nmain;common 1\n" % (n, n + 1)).encode()
    return srv.request("POST", "/ingest", {"name": "svc%d{env=prod}" % (n % NSERVICES),
                                           "format": "folded", "from": str(t),
                                           "until": str(t + 10)}, body=body, timeout=30)


def stored(srv):
    """{push number: times stored}, from each service's flame graph."""
    seen = {}
    for k in range(NSERVICES):
        tsv = srv.ok("/api/v1/render", {"query": '{service_name="svc%d"}' % k,
                                        "type": "cpu:samples", "format": "tsv",
                                        "from": str(NOW - 7200), "until": str(NOW + 60)})
        for line in tsv.decode().splitlines()[1:]:
            flat, _, fn = line.split("\t", 2)
            if fn.startswith("push_"):
                n = int(fn[5:])
                check(int(flat) % (n + 1) == 0, "push_%d: flat %s" % (n, flat))
                seen[n] = int(flat) // (n + 1)
    return seen


def metric(srv, name, shard=0):
    """A sample of shard's from /metrics (the ClickHouse store's write counters)."""
    want = '%s{shard="%d"} ' % (name, shard)
    for line in srv.ok("/metrics").decode().splitlines():
        if line.startswith(want):
            return int(line[len(want):])
    fail("/metrics has no %s" % want.strip())


def exactly_once(srv, acked, what):
    seen = stored(srv)
    missing = sorted(n for n in acked if n not in seen)
    twice = sorted(n for n, c in seen.items() if c != 1)
    extra = sorted(n for n in seen if n not in acked)
    check(not missing, "%s: %d acknowledged pushes missing, e.g. %s" % (what, len(missing),
                                                                       missing[:5]))
    check(not twice, "%s: pushes stored more than once: %s" % (what, twice[:5]))
    # a push that was never acknowledged may be stored (its answer lost), once
    return len(seen), len(extra)


# the materialized view older versions made
LEGACY_VIEW = (
    "CREATE MATERIALIZED VIEW scorch_rollup_sum_mv TO scorch_rollup_local AS SELECT tenant, "
    "type, arrayJoin([600, 3600, 86400]) AS res, series, "
    "intDiv(intDiv(time_ns, 1000000000), res) * res AS bucket, unit, count() AS profiles, "
    "sum(duration_ns) AS duration, sum(total) AS total, "
    "tupleElement(sumMap(stacks, values), 1) AS `stackMap.stack`, "
    "tupleElement(sumMap(stacks, values), 2) AS `stackMap.value` "
    "FROM scorch_profiles_local GROUP BY tenant, type, res, series, bucket, unit")


def rollups_agree(ch):
    """The rollups are the raw profiles summed: per resolution, series, bucket (profiles,
    durations, totals, push ids) and stack."""
    for res in (600, 3600, 86400):
        b = "intDiv(intDiv(time_ns, 1000000000), %d) * %d" % (res, res)
        raw = ch.sql("SELECT type, series, %s AS b, count(), sum(duration_ns), sum(total), "
                     "sum(push) FROM "
                     "scorch_profiles_local GROUP BY type, series, b ORDER BY type, series, b"
                     % b)
        rolled = ch.sql("SELECT type, series, bucket, sum(profiles), sum(duration), sum(total), "
                        "sum(pushes) FROM scorch_rollup_local WHERE res = %d GROUP BY type, series, bucket "
                        "ORDER BY type, series, bucket" % res)
        check(raw == rolled and raw, "res %d: rollups %r, raw profiles %r" % (res, rolled[:300],
                                                                          raw[:300]))
        raw = ch.sql("SELECT type, series, %s AS b, s, sum(v) AS x FROM scorch_profiles_local "
                     "ARRAY JOIN stacks AS s, values AS v GROUP BY type, series, b, s "
                     "HAVING x != 0 ORDER BY type, series, b, s" % b)
        rolled = ch.sql("SELECT type, series, bucket, s, sum(v) AS x FROM scorch_rollup_local "
                        "ARRAY JOIN stackMap.stack AS s, stackMap.value AS v WHERE res = %d "
                        "GROUP BY type, series, bucket, s HAVING x != 0 "
                        "ORDER BY type, series, bucket, s" % res)
        check(raw == rolled and raw, "res %d: the rollups' stacks differ from the raw "
              "profiles' (%d and %d lines)" % (res, rolled.count("\n"), raw.count("\n")))


def half_stored(ch, srv, acked):
    """6. An insert half stored: ClickHouse runs an insert's views one after the other (by
    name), so a failure between them leaves the profiles stored and their rollups not. A
    view that fails, between the two, makes it happen; once it is gone the flusher's retry
    stores the rollups, and not the profiles again."""
    pushes = "SELECT uniqExact(push) FROM scorch_profiles_local"
    rows = "SELECT count() FROM scorch_profiles_local"
    rolled = "SELECT sum(profiles) FROM scorch_rollup_local WHERE res = 600"
    before, rolled_before = int(ch.sql(pushes)), ch.sql(rolled).strip()
    ch.sql("CREATE TABLE scorch_test_sink (x UInt8) ENGINE = Null")
    ch.sql("CREATE MATERIALIZED VIEW scorch_ingest_q_mv TO scorch_test_sink AS "
           "SELECT throwIf(push != 0) AS x FROM scorch_ingest_local")
    nums = list(range(2300, 2320))
    for n in nums:
        st, _, body = push(srv, n)
        check(st == 200, "push %d: %d %s" % (n, st, body[:200]))
        acked.add(n)
    deadline = time.time() + 30
    while int(ch.sql(pushes)) == before:  # the first batch's profiles
        if time.time() > deadline:
            fail("the half-stored insert did not store its profiles")
        time.sleep(0.2)
    half = ch.sql(rows).strip()
    time.sleep(2)  # a retry or two while the failing view is there
    check(ch.sql(rows).strip() == half, "profiles stored again while the rollups' view "
          "fails: %s rows, %s after the first try" % (ch.sql(rows).strip(), half))
    check(ch.sql(rolled).strip() == rolled_before, "rollups stored past a failing view")
    check(metric(srv, "scorch_clickhouse_shard_down") == 1, "the shard is not said to be down")
    errors = metric(srv, "scorch_clickhouse_insert_errors_total")
    check(errors > 0, "no failed insert counted")
    ch.sql("DROP TABLE scorch_ingest_q_mv")
    ch.sql("DROP TABLE scorch_test_sink")
    deadline = time.time() + 30
    while (int(ch.sql(pushes)) < before + len(nums) or ch.sql(rolled) != ch.sql(rows)) \
            and time.time() < deadline:
        time.sleep(0.2)
    exactly_once(srv, acked, "after an insert half stored")
    dups = ch.sql("SELECT count() FROM (SELECT push, type, count() AS c FROM "
                  "scorch_profiles_local GROUP BY push, type HAVING c > 1)").strip()
    check(dups == "0", "profiles stored again with their rollups: %s" % dups)
    rollups_agree(ch)
    check(metric(srv, "scorch_clickhouse_shard_down") == 0, "the shard is still said to be down")


def came_back_empty(ch, srv):
    """7. A shard that comes back without its tables (a server rebuilt, a disk replaced): the
    next batch's insert meets "unknown table", scorch makes the tables again and inserts the
    batch, its stacks, frames and series too; each push is stored once."""
    tables = ch.sql("SELECT name FROM system.tables WHERE database = 'default' AND "
                    "name LIKE 'scorch_%' AND (name LIKE '%_local' OR name LIKE '%_mv') "
                    "ORDER BY name LIKE '%_mv' DESC").split()
    check(len(tables) >= 7, "the shard's tables: %s" % tables)
    for t in tables:  # the views first: they name the tables
        ch.sql("DROP TABLE %s" % t)
    nums = list(range(2400, 2420))
    for n in nums:
        st, _, body = push(srv, n)
        check(st == 200, "push %d to a shard without tables: %d %s" % (n, st, body[:200]))
    seen = stored(srv)  # a read waits for the acknowledged pushes' inserts
    check(all(seen.get(n) == 1 for n in nums),
          "pushes to a shard that came back empty: %s" % {n: seen.get(n) for n in nums})
    check(not [n for n in seen if n not in nums], "pushes of before the tables were gone shown")
    rollups_agree(ch)
    check(metric(srv, "scorch_clickhouse_shard_down") == 0, "the shard is still said to be down")


def main():
    if not chc.available():
        print("SKIP: clickhouse-server is not installed (scripts/install-deps.sh test)",
              file=sys.stderr)
        sys.exit(77)
    ch = chc.cluster(os.path.join(TMP, "ch"), 1)[0]
    data = os.path.join(TMP, "data")
    cfg = os.path.join(TMP, "scorch.yaml")
    with open(cfg, "w") as f:
        # a cluster of one shard: reads go through its Distributed tables (which met a
        # ClickHouse 18.16 bug: "Cannot convert column k because it is non constant")
        f.write("storage:\n  engine: clickhouse\n  url: \"%s\"\n  cluster: %s\n"
                "  shards: [\"%s\"]\n  write_timeout: 20s\n  query_timeout: 30s\n"
                % (ch.url, chc.CLUSTER, ch.url))
    srv = Server(SCORCH, data, os.path.join(TMP, "scorch.log"), cfg)
    try:
        srv.start()
        srv.stop()
        ch.sql(LEGACY_VIEW)
        srv.start()
        left = ch.sql("SELECT count() FROM system.tables WHERE database = 'default' AND "
                      "name = 'scorch_rollup_sum_mv'").strip()
        check(left == "0", "the rollup view of older versions is still there")
        acked = set()
        for n in range(40):
            st, _, body = push(srv, n)
            check(st == 200, "push %d: %d %s" % (n, st, body[:200]))
            acked.add(n)
        exactly_once(srv, acked, "before the crash")

        os.kill(ch.proc.pid, signal.SIGSTOP)
        try:
            for n in range(40, 240):
                t = time.time()
                st, _, body = push(srv, n)
                check(st == 200, "push %d with clickhouse stopped: %d %s" % (n, st, body[:200]))
                check(time.time() - t < 5, "push %d took %.1f s" % (n, time.time() - t))
                acked.add(n)
            time.sleep(1)  # a flush is on its way to the stopped server
            logdir = os.path.join(data, "clickhouse-log", "shard-0")
            inlog = sum(os.path.getsize(os.path.join(logdir, f)) for f in os.listdir(logdir))
            check(inlog > 0, "nothing in the local log while clickhouse is stopped")
            srv.kill()  # SIGKILL
        finally:
            os.kill(ch.proc.pid, signal.SIGCONT)
        srv.start()
        total, extra = exactly_once(srv, acked, "after the crash")
        check(total == len(acked), "stored %d pushes, %d acknowledged" % (total, len(acked)))

        # a client sending pushes again (its answers lost): stored once all the same
        for n in list(range(0, 10)) + list(range(200, 240)):
            st, _, body = push(srv, n)
            check(st == 200, "push %d again: %d %s" % (n, st, body[:200]))
        exactly_once(srv, acked, "after pushes sent again")
        dups = metric(srv, "scorch_clickhouse_duplicates_total")
        check(dups >= 50, "scorch_clickhouse_duplicates_total %d after 50 pushes sent again" % dups)

        os.kill(ch.proc.pid, signal.SIGSTOP)
        try:
            # the repeats come a thousand records after the first ones: the next batch
            nums = (list(range(240, 1300)) + list(range(240, 300)) + list(range(1300, 2300))
                    + list(range(1200, 1260)))
            with ThreadPoolExecutor(8) as pool:
                for n, (st, _, body) in zip(nums, pool.map(lambda n: push(srv, n), nums)):
                    check(st == 200, "push %d under a backlog: %d %s" % (n, st, body[:200]))
                    acked.add(n)
        finally:
            os.kill(ch.proc.pid, signal.SIGCONT)
        total, _ = exactly_once(srv, acked, "after a backlog")
        # the flusher prepared batches while others were inserted, and the log is empty
        ahead = metric(srv, "scorch_clickhouse_batches_ahead_total")
        check(ahead > 0, "no batch prepared ahead under a backlog of 2,120 pushes")
        check(metric(srv, "scorch_clickhouse_log_pending_bytes") == 0,
              "bytes left in the local log once every push is stored")
        check(total == len(acked), "stored %d pushes, %d acknowledged" % (total, len(acked)))
        segs = [f for f in os.listdir(logdir) if f.endswith(".log")]
        check(len(segs) == 1, "inserted segments left in the local log: %s" % segs)
        dups = ch.sql("SELECT count() FROM (SELECT push, type, count() AS c FROM "
                      "scorch_profiles_local GROUP BY push, type HAVING c > 1)").strip()
        check(dups == "0", "profile rows with the same push id: %s" % dups)
        rollups_agree(ch)

        half_stored(ch, srv, acked)
        came_back_empty(ch, srv)
        rc, _ = srv.stop()
        check(rc == 0, "server exit status %s" % rc)
        print("local log: %d pushes acknowledged (%d while clickhouse was stopped), scorch "
              "killed and restarted: each stored exactly once, rollups too; 50 sent again, none "
              "stored twice; a backlog of %d with 120 repeats, each stored once"
              % (len(acked), 200, len(nums)))
    finally:
        srv.kill()
        ch.stop()


if __name__ == "__main__":
    main_wrapper(main)
