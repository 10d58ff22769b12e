#!/usr/bin/env python3
"""soak.py SCORCH [options]: a soak benchmark of `scorch server` (not a test; bench/soak.sh
runs it). Starts a server on a fresh store, then for --seconds pushes distinct realistic CPU
profiles (bench/ingest_load.py's) at a steady --rate over --conns keep-alive connections while
--queriers threads query what is being written (render, timeline, the stored profiles, the
series) at --qrate each. Every --every seconds it prints the server's RSS and the window's
pushes, errors and p50/p99 latencies; at the end it counts the stored profiles against the
acknowledged pushes (each push has its own series and nanosecond time, so none replaces
another) and prints the latencies of the whole run. Exits 1 when an acknowledged profile is
missing, a request failed or the server died.

options: --seconds N (60)  --rate N pushes/s (20)  --conns N (2)  --queriers N (1)
         --qrate N queries/s per querier (4)  --every N (5)  --series N (16)
         --profiles N distinct profiles generated (40)
         --no-fsync  --keep (keep the store directory and say where)"""
import argparse
import http.client
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import ingest_load  # noqa: E402  (the profile generator)
from server_common import Server  # noqa: E402

SERVICE = "soak"


def pct(xs, p):
    """The p-th percentile of xs (seconds) in ms; '-' when there is none."""
    if not xs:
        return "-"
    xs = sorted(xs)
    return "%.1f" % (xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000)


class Log:
    """What the threads did: (wall time, seconds it took, ok) per request, by kind."""

    def __init__(self):
        self.mu = threading.Lock()
        self.rows = []  # (t, kind, latency, ok)

    def add(self, kind, t, lat, ok):
        with self.mu:
            self.rows.append((t, kind, lat, ok))

    def since(self, t0, t1=None):
        with self.mu:
            return [r for r in self.rows if r[0] >= t0 and (t1 is None or r[0] < t1)]


def paced(stop, rate, body):
    """Calls body() at rate per second on a fixed schedule (behind: at once, no burst)."""
    nxt = time.monotonic()
    while not stop.is_set():
        body()
        nxt = max(nxt + 1.0 / rate, time.monotonic())
        stop.wait(max(0.0, nxt - time.monotonic()))


def request(conn, method, path, body=None, headers=None):
    """(status, body) on a keep-alive connection; (None, b"") when it failed (the caller
    opens a new one)."""
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        conn.close()
        return None, b""


def pusher(srv, k, a, profiles, stop, log, acked):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    i = k

    def push():
        nonlocal conn, i
        until = time.time_ns()
        q = urllib.parse.urlencode({
            "name": "%s.cpu{instance=host-%d}" % (SERVICE, i % a.series),
            "from": until - 10 * 10**9, "until": until, "format": "pprof"})
        t = time.perf_counter()
        st, _ = request(conn, "POST", "/ingest?" + q, profiles[i % len(profiles)],
                        {"Content-Type": "application/octet-stream"})
        log.add("push", time.time(), time.perf_counter() - t, st == 200)
        if st is None:
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        elif st == 200:
            acked[k] += 1
        i += a.conns

    paced(stop, a.rate / a.conns, push)
    conn.close()


QUERIES = [
    ("render", "/api/v1/render", {"format": "json", "maxNodes": "2000"}),
    ("timeline", "/api/v1/timeline", {}),
    ("profiles", "/api/v1/profiles", {"limit": "100"}),
    ("series", "/api/v1/series", None),
]


def querier(srv, a, stop, log):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    n = 0

    def one():
        nonlocal conn, n
        kind, path, extra = QUERIES[n % len(QUERIES)]
        n += 1
        p = {} if extra is None else {"query": '{service_name="%s"}' % SERVICE,
                                      "type": "cpu:cpu", "from": "now-5m", "until": "now",
                                      **extra}
        t = time.perf_counter()
        st, _ = request(conn, "GET", path + ("?" + urllib.parse.urlencode(p) if p else ""))
        log.add(kind, time.time(), time.perf_counter() - t, st == 200)
        if st is None:
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)

    paced(stop, a.qrate, one)
    conn.close()


def stored(srv, frm, until):
    """How many profiles the store holds in [frm, until) (ns), listed in halves when one
    list would be truncated."""
    d = srv.json("/api/v1/profiles", {"query": '{service_name="%s"}' % SERVICE,
                                      "type": "cpu:cpu", "from": str(frm), "until": str(until),
                                      "limit": "10000"})
    if not d["truncated"]:
        return len(d["profiles"])
    mid = (frm + until) // 2
    return stored(srv, frm, mid) + stored(srv, mid, until)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scorch")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--conns", type=int, default=2)
    ap.add_argument("--queriers", type=int, default=1)
    ap.add_argument("--qrate", type=float, default=4)
    ap.add_argument("--every", type=float, default=5)
    ap.add_argument("--series", type=int, default=16)
    ap.add_argument("--profiles", type=int, default=40)
    ap.add_argument("--no-fsync", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    profiles = ingest_load.make_profiles(a.profiles, False)
    tmp = tempfile.mkdtemp(prefix="scorch-soak-")
    srv = Server(a.scorch, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                 extra=["--no-fsync"] if a.no_fsync else [])
    srv.start()
    print("server on port %d, store in %s, fsync %s; %g pushes/s over %d connections, "
          "%d querier(s) at %g/s, %g s" % (srv.port, tmp, "off" if a.no_fsync else "on",
                                          a.rate, a.conns, a.queriers, a.qrate, a.seconds))
    log, stop, acked = Log(), threading.Event(), [0] * a.conns
    start_ns = time.time_ns()
    threads = [threading.Thread(target=pusher, args=(srv, k, a, profiles, stop, log, acked))
               for k in range(a.conns)]
    threads += [threading.Thread(target=querier, args=(srv, a, stop, log))
                for _ in range(a.queriers)]
    t0 = time.time()
    for t in threads:
        t.start()
    rss = [srv.rss_mb()]
    print("%6s %9s %7s %6s %9s %9s %7s %9s %9s" % ("t s", "rss MiB", "pushes", "errors",
                                                  "push p50", "push p99", "queries",
                                                  "query p50", "query p99"))
    w0 = t0
    died = False
    while time.time() - t0 < a.seconds and not died:
        time.sleep(min(a.every, max(0.0, t0 + a.seconds - time.time())))
        w1 = time.time()
        rows = log.since(w0, w1)
        push = [r[2] for r in rows if r[1] == "push"]
        qry = [r[2] for r in rows if r[1] != "push"]
        rss.append(srv.rss_mb())
        died = not srv.alive()
        print("%6.0f %9.1f %7d %6d %9s %9s %7d %9s %9s" % (
            w1 - t0, rss[-1], len(push), sum(1 for r in rows if not r[3]), pct(push, 50),
            pct(push, 99), len(qry), pct(qry, 50), pct(qry, 99)), flush=True)
        w0 = w1
    stop.set()
    for t in threads:
        t.join()
    rows = log.since(0)
    failed = sum(1 for r in rows if not r[3])
    print("latency ms over the run (p50 / p99 / max, count):")
    for kind in ["push"] + [q[0] for q in QUERIES]:
        xs = [r[2] for r in rows if r[1] == kind]
        if xs:
            print("  %-9s %7s / %7s / %7.1f  %6d" % (kind, pct(xs, 50), pct(xs, 99),
                                                    max(xs) * 1000, len(xs)))
    rc = 0
    if died or not srv.alive():
        print("the server died:\n" + srv.tail())
        return 1
    n_acked = sum(acked)
    n_stored = stored(srv, start_ns - 60 * 10**9, time.time_ns() + 60 * 10**9)
    print("pushes: %d acknowledged, %d stored, %d requests failed (pushes and queries)" %
          (n_acked, n_stored, failed))
    if n_stored < n_acked:
        print("LOST: %d acknowledged profiles are not in the store" % (n_acked - n_stored))
        rc = 1
    if failed:
        rc = 1
    print("rss MiB: start %.1f, max %.1f, end %.1f" % (rss[0], max(rss), rss[-1]))
    code, secs = srv.stop()
    print("SIGTERM: exit %s in %.2f s; store %.1f MiB" % (
        code, secs, sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in
                        os.walk(os.path.join(tmp, "data")) for f in fs) / 2**20))
    if a.keep:
        print("kept " + tmp)
    else:
        shutil.rmtree(tmp)
    return rc or (1 if code else 0)


if __name__ == "__main__":
    sys.exit(main())
