"""clickhouse_replicas.py - replicated shards under a `scorch server`. Usage:
clickhouse_replicas.py TMPDIR (env: SCORCH, SCORCH_SRC).

ZooKeeper (Debian's) and three clickhouse-servers on loopback ports: shard 1 with replicas
r1 and r2, shard 2 with one; scorch creates Replicated tables ({shard}/{replica} macros)
and is given both replicas' URLs. Under a stream of pushes (folded pushes to scorch on
ClickHouse; pprof and split perf script pushes to it and to a SQLite server alike):
1. shard 1's first replica is killed: pushes are acknowledged, inserts go to the other
   replica, reads answer (ClickHouse's Distributed tables and scorch's query URLs fail
   over); it comes back and catches up;
2. shard 2 is killed: pushes are acknowledged (its part waits in the local log), reads
   answer 503 naming the shard; it comes back.
Every acknowledged push is then stored exactly once, and the renders equal SQLite's."""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clickhouse_common as chc  # noqa: E402
import clickhouse_shards as shards  # noqa: E402
import store_conformance as conf  # noqa: E402
from server_common import Server, check, fail, free_ports, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
NOW = shards.NOW


def render_ok(b, within):
    """A render through the cluster answers 200 within `within` s (a failover may cost a
    503 or two first)."""
    t0 = time.time()
    while True:
        st, _, data = b.request("GET", "/api/v1/render", {"query": "{}", "type": "cpu:samples",
                                                          "format": "tsv",
                                                          "from": str(NOW - 3600),
                                                          "until": str(NOW)})
        if st == 200:
            return time.time() - t0
        if time.time() - t0 > within:
            fail("reads did not fail over within %d s: %d %s" % (within, st, data[:300]))
        time.sleep(0.5)


def main():
    if not chc.available() or not chc.zookeeper_available():
        print("SKIP: clickhouse-server or zookeeper is not installed (scripts/install-deps.sh "
              "test)", file=sys.stderr)
        sys.exit(77)
    conf.TMP = TMP
    zk = chc.ZooKeeper(os.path.join(TMP, "ch", "zk"), free_ports(1)[0]).start()
    ch = None
    try:
        ch = chc.replicated(os.path.join(TMP, "ch"), [2, 1], zk.port)
        (r1, r2), (s2,) = ch
        cfg = os.path.join(TMP, "scorch.yaml")
        with open(cfg, "w") as f:
            f.write("storage:\n  engine: clickhouse\n  url: \"%s,%s,%s\"\n  cluster: %s\n"
                    "  shards: [\"%s,%s\", \"%s\"]\n  write_timeout: 3s\n  query_timeout: 20s\n"
                    % (r1.url, r2.url, s2.url, chc.CLUSTER, r1.url, r2.url, s2.url))
        a = conf.started(Server(SCORCH, os.path.join(TMP, "sqlite"),
                                os.path.join(TMP, "sqlite.log"), None, ["--no-fsync"]))
        b = conf.started(Server(SCORCH, os.path.join(TMP, "data"),
                                os.path.join(TMP, "clickhouse.log"), cfg))
        engine = r2.sql("SELECT engine FROM system.tables WHERE name = 'scorch_profiles_local'")
        check(engine.strip() == "ReplicatedMergeTree", "shard 1's engine: %r" % engine)
        total, first = 900, 1000
        pusher = shards.Pusher(b, first, total)
        pusher.pause = 0.4  # some 35 s of pushes: through both failures
        pusher.start()
        mixed = shards.Mixed(a, b, 60)
        mixed.thread.start()
        deadline = time.time() + 60
        while len(pusher.acked) < 30:
            if pusher.error or time.time() > deadline:
                fail("pushes before the failures: %s" % (pusher.error or "too slow"))
            time.sleep(0.05)

        # 1. a replica
        r1.stop(signal.SIGKILL)
        n0 = len(pusher.acked)
        rows0 = int(r2.sql("SELECT count() FROM scorch_profiles_local").strip())
        took = render_ok(b, 30)
        # inserts reach r2 directly: with r1 dead nothing else can give it new rows
        deadline = time.time() + 30
        while int(r2.sql("SELECT count() FROM scorch_profiles_local").strip()) <= rows0:
            check(time.time() < deadline, "no insert reached replica r2 while r1 was down")
            time.sleep(0.3)
        time.sleep(2)
        check(len(pusher.acked) > n0, "no push acknowledged while a replica was down")
        check(pusher.is_alive(), "the stream ended before the replica's failure was seen")
        render_ok(b, 30)
        print("replica r1 of shard 1 down: %d pushes acknowledged meanwhile, reads answered "
              "(the first after %.1f s)" % (len(pusher.acked) - n0, took))
        r1.start().wait()

        # 2. a whole shard
        s2.stop(signal.SIGKILL)
        n1 = len(pusher.acked)
        port = s2.url.rsplit(":", 1)[1]
        t0 = time.time()
        while True:
            st, _, data = b.request("GET", "/api/v1/render", {"query": "{}", "type":
                                                              "cpu:samples", "format": "tsv",
                                                              "from": str(NOW - 3600),
                                                              "until": str(NOW)})
            msg = json.loads(data).get("error", "") if st != 200 else ""
            if st == 503 and "clickhouse shard 1" in msg and port in msg:
                break
            if time.time() - t0 > 30:
                fail("a read with shard 2 down: %d %s" % (st, data[:300]))
            time.sleep(0.3)
        time.sleep(1)
        check(len(pusher.acked) > n1, "no push acknowledged while shard 2 was down")
        print("shard 2 down: %d pushes acknowledged meanwhile, reads named it" %
              (len(pusher.acked) - n1))
        s2.start().wait()

        pusher.join(180)
        check(not pusher.is_alive() and not pusher.error, "pusher: %s" % pusher.error)
        mixed.thread.join(120)
        check(not mixed.thread.is_alive() and not mixed.error, "mixed: %s" % mixed.error)
        pushed = set(range(first, first + total))
        deadline = time.time() + 90
        while True:
            try:
                seen = shards.stored_counts(b, ["svc%d" % k for k in range(shards.NSERVICES)])
                missing = sorted(n for n in pushed if seen.get(n, 0) < 1)
                if not missing:
                    break
            except Exception:  # noqa: BLE001 - the returned servers may still catch up
                missing = ["(a read failed)"]
            if time.time() > deadline:
                fail("acknowledged pushes not stored: %s" % missing[:5])
            time.sleep(1)
        twice = sorted(n for n in pushed if seen[n] != 1)
        check(not twice, "pushes stored more than once: %s" % twice[:5])
        extra = sorted(n for n in seen if n not in pushed and n >= first)
        check(not extra, "stored pushes never sent: %s" % extra[:5])
        # both replicas of shard 1 hold the same rows once they have caught up
        deadline = time.time() + 60
        while True:
            c1 = r1.sql("SELECT count() FROM scorch_profiles_local").strip()
            c2 = r2.sql("SELECT count() FROM scorch_profiles_local").strip()
            if c1 == c2 or time.time() > deadline:
                break
            time.sleep(1)
        check(c1 == c2, "shard 1's replicas hold %s and %s profile rows" % (c1, c2))
        perf_types = [t["id"] for t in json.loads(conf.same(
            [a, b], "/api/v1/profile_types", {"query": '{service_name="mixperf"}'}))]
        for svc, typ in [("mixheap", "heap:inuse_space"), ("mixheap", "heap:alloc_space")] + \
                [("mixperf", t) for t in perf_types]:
            for fmt in ("tsv", "json"):
                conf.same([a, b], "/api/v1/render", {"query": '{service_name="%s"}' % svc,
                                                     "type": typ, "format": fmt,
                                                     "from": str(NOW - 3600), "until": str(NOW)})
        print("replicas: all %d pushes stored exactly once; shard 1's replicas hold %s rows "
              "each; pprof and perf script renders equal to SQLite's" % (total, c1))
        a.stop()
        b.stop()
    finally:
        for srv in conf.STARTED:
            srv.kill()
        for row in ch or []:
            for s in row:
                s.stop()
        zk.stop()


if __name__ == "__main__":
    main_wrapper(main)
