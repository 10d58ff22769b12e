"""clickhouse_shards.py - two clickhouse-server processes as the two shards of one cluster
under a `scorch server`. Usage: clickhouse_shards.py TMPDIR (env: SCORCH, SCORCH_SRC).

1. Data lands on both shards (each shard's own tables hold part of the profiles, together
   all of them) and queries through the cluster answer exactly what a SQLite server given
   the same pushes answers.
2. One shard is killed while profiles are pushed: every push is still acknowledged (its
   part waits in scorch's local log), queries answer 503 naming the shard that is down;
   the shard comes back (same data) and the log is inserted by itself. Every acknowledged
   push is stored exactly once."""
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clickhouse_common as chc  # noqa: E402
import store_conformance as conf  # noqa: E402
from server_common import Server, check, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
NOW = int(time.time())
NSERVICES = 12


def folded(n):
    """Push n's body: a stack of its own, so each push is found by name afterwards."""
    return ("main;handle;push_%d %d\nmain;common %d\n" % (n, n + 1, 1)).encode()


def service_of(n):
    return "svc%d" % (n % NSERVICES)


def stored_counts(srv, services):
    """{push number: how many times it is stored} from each service's render."""
    seen = {}
    for svc in services:
        tsv = srv.ok("/api/v1/render", {"query": '{service_name="%s"}' % svc,
                                        "type": "cpu:samples", "format": "tsv",
                                        "from": str(NOW - 3600), "until": str(NOW + 3600)})
        for line in tsv.decode().splitlines()[1:]:
            flat, _, fn = line.split("\t", 2)
            if fn.startswith("push_"):
                n = int(fn[5:])
                if int(flat) % (n + 1):
                    fail("push_%d: flat %s is not a multiple of %d" % (n, flat, n + 1))
                seen[n] = int(flat) // (n + 1)
    return seen


def phase_exact(ch, a, b):
    """Pushes spread over the shards; the cluster answers as SQLite does."""
    pushes = []
    for n in range(0, 4 * NSERVICES):
        t = NOW - 3000 + 60 * n
        pushes.append((dict(name="%s{env=prod}" % service_of(n), format="folded",
                            **{"from": str(t), "until": str(t + 10)}), folded(n)))
    heap = conf.gen_heap(3)
    for k in range(NSERVICES):
        for j in range(3):
            t = NOW - 2 * 86400 + 7200 * j + 61 * k
            pushes.append((dict(name="heapsvc%d{env=prod}" % k, format="pprof",
                                **{"from": str(t)}), heap))
    conf.push_all([a, b], pushes)
    b.ok("/api/v1/labels")  # a read waits for the acknowledged pushes' inserts
    per_shard, all_series = [], set()
    for s in ch:
        rows = int(s.sql("SELECT count() FROM scorch_profiles_local").strip())
        series = set(s.sql("SELECT DISTINCT series FROM scorch_profiles_local FORMAT TSV")
                     .split())
        all_series |= series
        per_shard.append((rows, len(series)))
    total_rows = sum(r for r, _ in per_shard)
    # a series' ten-minute buckets go round the shards: both hold profiles, together all
    check(all(r > 0 for r, _ in per_shard), "a shard holds no profiles: %s" % per_shard)
    check(len(all_series) == 2 * NSERVICES, "the shards hold %d series, want %d: %s"
          % (len(all_series), 2 * NSERVICES, per_shard))
    listed = json.loads(b.ok("/api/v1/series", {"query": "{}", "from": str(NOW - 3 * 86400),
                                                "until": str(NOW + 60)}))
    check(len(listed) == 2 * NSERVICES, "series through the cluster: %d" % len(listed))
    # the same answers as SQLite, read through the Distributed tables
    for path, params in (
            ("/api/v1/labels", {}), ("/api/v1/label_values", {"name": "service_name"}),
            ("/api/v1/profile_types", {}),
            ("/api/v1/series", {"query": '{env="prod"}', "from": str(NOW - 3 * 86400),
                                "until": str(NOW)})):
        conf.same([a, b], path, params)
    for typ in ("cpu:samples", "heap:alloc_space", "heap:inuse_space"):
        for f, u in ((NOW - 3 * 86400, NOW + 60), (NOW - 3000, NOW), (NOW - 1234, NOW - 99)):
            for fmt in ("tsv", "json", "pprof"):
                conf.same([a, b], "/api/v1/render", {"query": '{env="prod"}', "type": typ,
                                                     "format": fmt, "from": str(f),
                                                     "until": str(u)})
            conf.same([a, b], "/api/v1/timeline", {"query": '{env="prod"}', "type": typ,
                                                   "from": str(f), "until": str(u),
                                                   "step": "10m"})
        conf.same([a, b], "/api/v1/diff", {"type": typ, "base_query": '{env="prod"}',
                                           "query": '{service_name="svc3"}',
                                           "base_from": str(NOW - 3 * 86400),
                                           "base_until": str(NOW), "from": str(NOW - 3000),
                                           "until": str(NOW), "format": "json"})
    print("shards: %d and %d profile rows, of %d and %d series; answers equal to sqlite's"
          % (per_shard[0][0], per_shard[1][0], per_shard[0][1], per_shard[1][1]))
    return total_rows


class Pusher:
    """Pushes first..first+total-1 to srv, a client per service (each retries its push
    until acknowledged, as Pyroscope's clients do, while the others go on)."""

    def __init__(self, srv, first, total):
        self.srv, self.first, self.total = srv, first, total
        self.acked, self.refused = set(), {}
        self.statuses, self.retry_after, self.error = {}, set(), None
        self.t_refused = None
        self.pause = 0.15
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.client, args=(k,), daemon=True)
                        for k in range(NSERVICES)]

    def start(self):
        for t in self.threads:
            t.start()

    def join(self, timeout):
        deadline = time.time() + timeout
        for t in self.threads:
            t.join(max(0, deadline - time.time()))

    def is_alive(self):
        return any(t.is_alive() for t in self.threads)

    def client(self, k):
        try:
            for n in range(self.first, self.first + self.total):
                if n % NSERVICES != k:
                    continue
                t = NOW - 600 + n % 500
                params = dict(name="%s{env=prod}" % service_of(n), format="folded",
                              **{"from": str(t), "until": str(t + 10)})
                deadline = time.time() + 120
                while True:
                    st, hdr, data = self.srv.request("POST", "/ingest", params, body=folded(n),
                                                     timeout=30)
                    with self.lock:
                        self.statuses[st] = self.statuses.get(st, 0) + 1
                        if st == 200:
                            self.acked.add(n)
                    if st == 200:
                        break
                    if st != 503:
                        raise RuntimeError("push %d: status %d: %s" % (n, st, data[:200]))
                    with self.lock:
                        self.refused[n] = self.refused.get(n, 0) + 1
                        self.retry_after.add(hdr.get("retry-after"))
                    msg = json.loads(data)["error"]
                    if "unavailable" not in msg:
                        raise RuntimeError("push %d: 503 without saying why: %s" % (n, msg))
                    self.t_refused = self.t_refused or time.time()
                    if time.time() > deadline:
                        raise RuntimeError("push %d refused for 120 s" % n)
                    time.sleep(0.2)  # Retry-After says 1 s; the test is impatient
                time.sleep(self.pause)  # a stream that outlasts the failure
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e


class Mixed:
    """pprof and perf script pushes (a perf push is split into a series per process, over
    both shards) sent to SQLite and to ClickHouse alike, each retried until acknowledged."""

    def __init__(self, a, b, n):
        self.a, self.b, self.n = a, b, n
        self.done, self.error = 0, None
        self.heap = [conf.gen_heap(s) for s in range(3)]
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        try:
            for j in range(self.n):
                t = NOW - 1800 + 11 * j
                if j % 2:
                    params = dict(name="mixheap{env=prod}", format="pprof",
                                  **{"from": str(t), "until": str(t + 10)})
                    body = self.heap[j % 3]
                else:
                    params = dict(name="mixperf{host=h1}", format="perf_script",
                                  **{"from": str(t), "until": str(t + 3)})
                    body = conf.gen_perf(j)
                for srv in (self.a, self.b):
                    deadline = time.time() + 120
                    while True:
                        st, _, data = srv.request("POST", "/ingest", params, body=body,
                                                  timeout=30)
                        if st == 200:
                            break
                        if st != 503 or time.time() > deadline:
                            raise RuntimeError("mixed push %d: %d %s" % (j, st, data[:200]))
                        time.sleep(0.2)
                self.done += 1
                time.sleep(0.05)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e


def phase_failure(ch, a, b):
    """A shard killed and restarted under a stream of pushes."""
    total, first = 400, 1000
    pusher = Pusher(b, first, total)
    pusher.start()
    mixed = Mixed(a, b, 40)
    mixed.thread.start()
    deadline = time.time() + 60
    while len(pusher.acked) < 40:
        if pusher.error or time.time() > deadline:
            fail("pushes before the failure: %s" % (pusher.error or "too slow"))
        time.sleep(0.05)
    ch[1].stop(signal.SIGKILL)
    t_down = time.time()
    acked_down = len(pusher.acked)
    # while it is down: pushes go on; queries say which shard is missing once scorch has
    # seen it fail
    port = ch[1].url.rsplit(":", 1)[1]
    while True:
        st, _, data = b.request("GET", "/api/v1/render", {"query": "{}", "type": "cpu:samples",
                                                          "format": "tsv",
                                                          "from": str(NOW - 3600),
                                                          "until": str(NOW)})
        check(st == 503, "a query with a shard down: status %d, want 503: %s" % (st, data[:200]))
        msg = json.loads(data)["error"]
        if "clickhouse shard 1" in msg and port in msg:
            break
        if pusher.error or time.time() > t_down + 30:
            fail("a query with a shard down does not name it: %r (%s)" % (msg, pusher.error))
        time.sleep(0.2)
    check("unavailable" in msg, "a query with a shard down says %r" % msg)
    time.sleep(2)
    acked_while_down = len(pusher.acked) - acked_down
    ch[1].start().wait()
    t_up = time.time()
    pusher.join(180)
    if pusher.is_alive():
        fail("pushes did not finish within 180 s of the shard's return")
    if pusher.error:
        fail("pusher: %s" % pusher.error)
    check(not pusher.refused, "pushes refused: %s" % sorted(pusher.refused)[:5])
    check(acked_while_down > 0, "no push acknowledged while a shard was down")
    pushed = set(range(first, first + total))
    # the returned shard's flusher retries within its backoff (5 s at most), then inserts
    # what waited in the log
    deadline = time.time() + 60
    while True:
        try:
            seen = stored_counts(b, ["svc%d" % k for k in range(NSERVICES)])
        except Exception:  # noqa: BLE001 - 503 until scorch has seen the shard back
            if time.time() > deadline:
                raise
            time.sleep(0.5)
            continue
        missing = sorted(n for n in pushed if seen.get(n, 0) < 1)
        if not missing or time.time() > deadline:
            break
        time.sleep(0.5)
    check(not missing, "%d acknowledged pushes are not stored, e.g. %s" % (len(missing),
                                                                        missing[:5]))
    extra = sorted(n for n in seen if n not in pushed and n >= first)
    check(not extra, "stored pushes never sent: %s" % extra[:5])
    twice = sorted(n for n in pushed if seen[n] != 1)
    check(not twice, "pushes stored more than once: %s" % twice[:5])
    mixed.thread.join(120)
    check(not mixed.thread.is_alive() and not mixed.error, "mixed pushes: %s" % mixed.error)
    # pprof and split perf script pushes sent through the failure answer as on SQLite
    # (sums per series and stack: each stored once)
    deadline = time.time() + 60
    while True:
        try:
            perf_types = [t["id"] for t in json.loads(conf.same(
                [a, b], "/api/v1/profile_types", {"query": '{service_name="mixperf"}'}))]
            check(perf_types, "no types of the perf pushes")
            for svc, typ in [("mixheap", "heap:inuse_space"), ("mixheap", "heap:alloc_space")] + \
                    [("mixperf", t) for t in perf_types]:
                for fmt in ("tsv", "json"):
                    conf.same([a, b], "/api/v1/render", {
                        "query": '{service_name="%s"}' % svc, "type": typ, "format": fmt,
                        "from": str(NOW - 3600), "until": str(NOW)})
                conf.same([a, b], "/api/v1/series", {"query": '{service_name="%s"}' % svc,
                                                     "from": str(NOW - 3600),
                                                     "until": str(NOW)})
            break
        except Exception:  # noqa: BLE001 - the returned shard may still be inserting
            if time.time() > deadline:
                raise
            time.sleep(1)
    print("failure: shard down %.1f s, %d pushes acknowledged meanwhile (their parts for the "
          "dead shard in the local log); queries named the shard; all %d pushes stored exactly "
          "once %.1f s after its return" % (t_up - t_down, acked_while_down, total,
                                           time.time() - t_up))


def main():
    if not chc.available():
        print("SKIP: clickhouse-server is not installed (scripts/install-deps.sh test)",
              file=sys.stderr)
        sys.exit(77)
    conf.TMP = TMP
    ch = chc.cluster(os.path.join(TMP, "ch"), 2)
    try:
        cfg = os.path.join(TMP, "scorch.yaml")
        with open(cfg, "w") as f:
            f.write("storage:\n  engine: clickhouse\n  url: \"%s\"\n  cluster: %s\n"
                    "  shards: [\"%s\", \"%s\"]\n  write_timeout: 20s\n  query_timeout: 30s\n"
                    % (ch[0].url, chc.CLUSTER, ch[0].url, ch[1].url))
        a = conf.started(Server(SCORCH, os.path.join(TMP, "sqlite"),
                                os.path.join(TMP, "sqlite.log"), None, ["--no-fsync"]))
        b = conf.started(Server(SCORCH, os.path.join(TMP, "unused"),
                                os.path.join(TMP, "clickhouse.log"), cfg))
        phase_exact(ch, a, b)
        phase_failure(ch, a, b)
        a.stop()
        b.stop()
    finally:
        for srv in conf.STARTED:
            srv.kill()
        for s in ch:
            s.stop()


if __name__ == "__main__":
    main_wrapper(main)
