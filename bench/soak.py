#!/usr/bin/env python3
"""soak.py SCORCH [options]: a soak benchmark of `scorch server` (not a test; bench/soak.sh
runs it). Starts a server on a fresh store, then for --seconds:

- pushes distinct realistic CPU profiles (bench/ingest_load.py's, ~35 KB gzipped) at a steady
  --rate over --conns keep-alive connections from --procs processes (each on a fixed
  schedule that catches up after a slow answer, by at most --behind seconds; prepared requests on
  raw sockets: 0.11-0.15 ms of driver CPU a push; against a null sink it reached 2,983 of
  3,000 pushes/s asked, so the rate achieved is the server's); each push is a 10 s profile
  of one of --series instances, as a fleet of agents would send;
- has the server scrape --targets simulated Go services every --interval seconds (all seven
  profile types; one helper process, tests/e2e/fake_pprof_target.py in mode "go", serves
  them all on free loopback ports, with the real profiles of ../shared/testdata/pprof when
  it is there);
- runs --queriers query clients at --qrate each, cycling through what a user does while it
  runs: the flame graph of the whole service's last 10 s, one instance's last hour (flame
  graph, timeline, profile list), the service names, and the scraped heap of the fleet.

Every --every seconds it prints the server's RSS and malloc's in-use memory (bench/
malloc_probe.c's module, build/malloc_probe.so, preloaded into the server; RSS also counts
freed memory malloc keeps), the window's push rate, errors and p50/p99 latencies, and the CPU
the server and this driver used. At the end: the achieved push rate against the target, the
slopes of RSS and of malloc's in-use memory (least squares over the samples after --warmup)
and whether they are flat (within --flat MiB per minute), the latencies of the whole run, the
scrapes done and failed (every target must have been scraped and stored, every type), and
the acknowledged pushes against the profiles the store holds (each push has its own series
and nanosecond time, so none replaces another). Exits 1 when they differ, a request or a
scrape failed, a target went unscraped, or the server died.

"""
import argparse
import array
import http.client
import json
import math
import multiprocessing
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import ingest_load  # noqa: E402  (the profile generator, request_ok)
from server_common import Server  # noqa: E402

SERVICE = "soak"
JOB = "fleet"  # the scraped targets' job, hence their service_name
TYPES = ["cpu", "heap", "allocs", "goroutine", "mutex", "block", "threadcreate"]


def pct(xs, p):
    """The p-th percentile of sorted xs (seconds) in ms; '-' when there is none."""
    if not xs:
        return "-"
    return "%.1f" % (xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000)


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def mem_mib(pid):
    """(VmRSS, RssAnon) of a process in MiB."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon"):
                    out[k] = int(v.split()[0]) / 1024.0
    except OSError:
        pass
    return out.get("VmRSS", 0.0), out.get("RssAnon", 0.0)


def heap_mib(path):
    """(in use, held from the system, SQLite's part of in use) MiB of glibc's malloc in the
    server, as bench/malloc_probe.c last wrote them; None before the first write."""
    try:
        with open(path) as f:
            inuse, held, _, sql = (int(x) for x in f.read().split())
        return inuse / 2**20, held / 2**20, max(0, sql) / 2**20
    except (OSError, ValueError):
        return None


def trend(a, s):
    """A slope in MiB/min in words."""
    return "flat" if abs(s) < a.flat else "falling" if s < 0 else "GROWING"


def slope(points):
    """Least-squares slope of (x, y) points; 0 with fewer than two."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else 0.0


class Log:
    """Every request's latency and outcome, by kind, in arrays (a 10-minute run at 1,000/s
    is 600,000 pushes); take() returns what arrived since the previous take()."""

    def __init__(self):
        self.mu = threading.Lock()
        self.lat, self.ok, self.seen = {}, {}, {}

    def add(self, kind, lats, oks):
        with self.mu:
            self.lat.setdefault(kind, array.array("d")).extend(lats)
            self.ok.setdefault(kind, array.array("b")).extend(oks)

    def take(self):
        """{kind: (latencies, failures)} of the requests logged since the last take."""
        out = {}
        with self.mu:
            for kind, lat in self.lat.items():
                i = self.seen.get(kind, 0)
                out[kind] = (lat[i:], self.ok[kind][i:].count(0))
                self.seen[kind] = len(lat)
        return out

    def all(self):
        with self.mu:
            return {k: (sorted(v), self.ok[k].count(0), self.ok[k].count(1))
                    for k, v in self.lat.items()}


# ---- the push processes -------------------------------------------------------------------

class RawConn:
    """A keep-alive HTTP/1.1 client for one request shape: a prepared head and body sent with
    one sendmsg, the answer read by Content-Length (http.client costs several times the
    CPU per request, and this driver has to reach 1,000 requests/s on a shared core)."""

    def __init__(self, port):
        self.port, self.sock, self.buf = port, None, b""

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock, self.buf = None, b""

    def post(self, head, body):
        """The answer's status, or None when the connection failed (it is reopened next)."""
        try:
            if self.sock is None:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock.sendmsg([head, body])
            while b"\r\n\r\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed")
                self.buf += chunk
            hdr, _, rest = self.buf.partition(b"\r\n\r\n")
            lines = hdr.split(b"\r\n")
            status = int(lines[0].split(b" ", 2)[1])
            length, close = 0, False
            for h in lines[1:]:
                k, _, v = h.partition(b":")
                k = k.strip().lower()
                if k == b"content-length":
                    length = int(v)
                elif k == b"connection" and v.strip().lower() == b"close":
                    close = True
            while len(rest) < length:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed")
                rest += chunk
            self.buf = rest[length:]
            if close:
                self.close()
            return status
        except (OSError, ValueError, IndexError):
            self.close()
            return None


def push_conn(port, k, a, profiles, t_start, t_end, rows, mu, drops):
    """Connection k of a.conns: pushes on a fixed schedule (its share of the rate, staggered
    against the others). Behind schedule it pushes at once, one after another, until it is
    back on time, as an agent's upload queue sends what a slow answer held back; but it
    stays at most --behind seconds behind and drops the slots past that (counted in
    drops[0]), so a server that cannot keep up shows as a lower achieved rate, not as a
    backlog. (Each connection stands for --series / --conns agents pushing in turn, so
    without that catch-up one slow answer would cost the pushes of all of them.)"""
    conn = RawConn(port)
    period = a.conns / a.rate
    nxt = t_start + k / a.rate
    i = k
    while True:
        now = time.time()
        if nxt > now:
            time.sleep(nxt - now)
        if time.time() >= t_end:
            break
        until = time.time_ns()
        q = urllib.parse.urlencode({
            "name": "%s.cpu{instance=host-%d}" % (SERVICE, i % a.series),
            "from": until - 10 * 10**9, "until": until, "format": "pprof"})
        body = profiles[i % len(profiles)]
        head = ("POST /ingest?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n"
                % (q, len(body))).encode()
        t = time.perf_counter()
        st = conn.post(head, body)
        lat = time.perf_counter() - t
        with mu:
            rows[0].append(lat)
            rows[1].append(1 if st == 200 else 0)
        i += a.conns
        nxt += period
        behind = time.time() - a.behind - nxt
        if behind > 0:
            with mu:
                drops[0] += int(behind / period) + 1
            nxt += (int(behind / period) + 1) * period
    conn.close()


def push_proc(port, ks, a, profiles, t_start, t_end, out):
    """One push process: a thread per connection in ks; every half second it sends what its
    threads logged to the driver, and at the end its own CPU seconds."""
    mu = threading.Lock()
    rows = [array.array("d"), array.array("b")]
    drops = [0]
    threads = [threading.Thread(target=push_conn, args=(port, k, a, profiles, t_start, t_end,
                                                        rows, mu, drops)) for k in ks]
    for t in threads:
        t.start()

    def flush():
        with mu:
            lat, ok = rows[0], rows[1]
            rows[0], rows[1] = array.array("d"), array.array("b")
        if lat:
            out.send((lat.tobytes(), ok.tobytes()))

    while any(t.is_alive() for t in threads):
        time.sleep(0.5)
        flush()
    for t in threads:
        t.join()
    flush()
    cpu = os.times()
    out.send(("done", cpu.user + cpu.system, drops[0]))
    out.close()


class Pushers:
    """The push processes and a thread per process receiving their logs."""

    def __init__(self, port, a, profiles, log, t_start, t_end):
        self.log, self.cpu, self.procs, self.readers = log, [], [], []
        self.drops = []  # per process: schedule slots dropped, over --behind behind
        self.last = {}
        ctx = multiprocessing.get_context("fork")
        for p in range(a.procs):
            rd, wr = ctx.Pipe(duplex=False)
            ks = list(range(p, a.conns, a.procs))
            proc = ctx.Process(target=push_proc, args=(port, ks, a, profiles, t_start, t_end,
                                                       wr), daemon=True)
            proc.start()
            wr.close()
            self.procs.append(proc)
            self.readers.append(threading.Thread(target=self.read, args=(rd,)))
        for r in self.readers:
            r.start()

    def read(self, rd):
        while True:
            try:
                msg = rd.recv()
            except EOFError:
                return
            if msg[0] == "done":
                self.cpu.append(msg[1])
                self.drops.append(msg[2])
                return
            self.log.add("push", array.array("d", msg[0]), array.array("b", msg[1]))

    def cpu_now(self):
        """CPU seconds of the push processes so far (the last reading of one that ended)."""
        for p in self.procs:
            self.last[p.pid] = cpu_seconds(p.pid) or self.last.get(p.pid, 0.0)
        return sum(self.last.values())

    def join(self):
        for r in self.readers:
            r.join()
        for p in self.procs:
            p.join()


# ---- the query clients ----------------------------------------------------------------------

class Queries:
    """What query client k asks, in turn ('now' ranges are the server's clock): the whole
    service's flame graph of the last 10 s (~rate x 10 profiles, under the server's read
    budget of 20,000), one instance's last hour as flame graph, timeline and profile list
    (the next instance each time), the service names, and the fleet's scraped heap."""

    def __init__(self, a, k):
        self.a, self.n, self.inst = a, k, k * 7919
        self.kinds = ["render", "render1", "timeline", "profiles", "labels"]
        if a.targets:
            self.kinds.append("scraped")

    def next(self):
        """(kind, path and query string) of the next query."""
        kind = self.kinds[self.n % len(self.kinds)]
        self.n += 1
        self.inst += 1
        one = '{service_name="%s",instance="host-%d"}' % (SERVICE, self.inst % self.a.series)
        hour = {"query": one, "type": "cpu:cpu", "from": "now-1h"}
        path, p = {
            "render": ("/api/v1/render", {"query": '{service_name="%s"}' % SERVICE,
                                          "type": "cpu:cpu", "from": "now-10s",
                                          "format": "json", "maxNodes": "2000"}),
            "render1": ("/api/v1/render", dict(hour, format="json", maxNodes="2000")),
            "timeline": ("/api/v1/timeline", hour),
            "profiles": ("/api/v1/profiles", dict(hour, limit="1000")),
            "labels": ("/api/v1/label_values", {"name": "service_name"}),
            "scraped": ("/api/v1/render", {"query": '{job="%s"}' % JOB,
                                           "type": "heap:inuse_space", "from": "now-5m",
                                           "format": "json", "maxNodes": "2000"}),
        }[kind]
        return kind, path + "?" + urllib.parse.urlencode(p)


def querier(port, a, k, stop, log):
    """Query client k: one keep-alive connection, one query after another, at most a.qrate
    a second."""
    qs = Queries(a, k)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    nxt = time.monotonic()
    while not stop.is_set():
        kind, url = qs.next()
        t = time.perf_counter()
        ok = ingest_load.request_ok(conn, "GET", url)
        log.add(kind, [time.perf_counter() - t], [1 if ok else 0])
        nxt = max(nxt + 1.0 / a.qrate, time.monotonic())
        stop.wait(max(0.0, nxt - time.monotonic()))
    conn.close()


# ---- the scraped targets ----------------------------------------------------------------------

class Targets:
    """a.targets simulated Go services in one fake_pprof_target.py process, and the server
    config that scrapes them."""

    def __init__(self, a, tmp):
        td = os.environ.get("SCORCH_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata"))
        pp = os.path.join(td, "pprof")
        self.real = os.path.isdir(pp)
        args = [sys.executable, "-B", os.path.join(ROOT, "tests/e2e/fake_pprof_target.py")]
        if self.real:
            args += ["--profiles", pp]
        self.proc = subprocess.Popen(args + ["0=go"] * a.targets, stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        line = self.proc.stdout.readline().decode().split()
        if not line or line[0] != "ready":
            raise SystemExit("soak: the fake targets did not start")
        self.addrs = ["127.0.0.1:" + p for p in line[1:]]
        self.config = os.path.join(tmp, "scorch.yaml")
        with open(self.config, "w") as f:
            f.write("scrape_configs:\n  - job_name: %s\n    scrape_interval: %gs\n"
                    "    targets:\n" % (JOB, a.interval))
            f.writelines('      - "%s"\n' % t for t in self.addrs)
        self.errors, self.seen = {}, {}  # error text: count; task: its errors so far

    def poll(self, srv):
        """Remembers why scrapes failed since the last poll (a task's last_error is gone
        after its next good scrape); returns the tasks."""
        tasks = [t for t in srv.json("/api/v1/targets") if t["job"] == JOB]
        for t in tasks:
            k = (t["instance"], t["profile"])
            new = t["errors"] - self.seen.get(k, 0)
            if new > 0:
                why = "%s: %s" % (t["profile"], t["last_error"] or "(a later scrape was good)")
                self.errors[why] = self.errors.get(why, 0) + new
            self.seen[k] = t["errors"]
        return tasks

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def report(self, srv, a):
        """Prints the scrapes done and failed; returns the problems (empty when every task
        of every target was scraped and stored). A task not stored yet (a short run: CPU
        profiles and Go's deltas take most of an interval) gets up to two more intervals."""
        deadline = time.time() + 2 * a.interval + 10
        while True:
            tasks = self.poll(srv)
            if time.time() > deadline or (len(tasks) == len(self.addrs) * len(TYPES) and
                                          all(t["profiles"] for t in tasks)):
                break
            time.sleep(1)
        tot = {k: sum(t[k] for t in tasks) for k in ("scrapes", "errors", "skipped",
                                                     "profiles")}
        print("scrapes: %d targets x %d types, %d scrapes done, %d failed, %d slots skipped, "
              "%d profiles stored (%s profiles)" % (
                  len(self.addrs), len(TYPES), tot["scrapes"], tot["errors"], tot["skipped"],
                  tot["profiles"], "real" if self.real else "generated"))
        bad = []
        seen = {(t["instance"], t["profile"]): t for t in tasks}
        for addr in self.addrs:
            for typ in TYPES:
                t = seen.get((addr, typ))
                if t is None:
                    bad.append("%s %s: no scrape task" % (addr, typ))
                elif t["profiles"] < 1 or t["scrapes"] <= t["errors"]:
                    bad.append("%s %s: %d scrapes, %d failed, %d stored (%s)" % (
                        addr, typ, t["scrapes"], t["errors"], t["profiles"], t["last_error"]))
        series = srv.json("/api/v1/series", {"query": '{job="%s"}' % JOB, "from": "now-1h"})
        have = {s["labels"].get("instance") for s in series}
        bad += ["%s: no stored series" % x for x in self.addrs if x not in have]
        for why, n in sorted(self.errors.items(), key=lambda x: -x[1]):
            bad.append("%d failed with %s" % (n, why))
        return bad


# ---- the run ----------------------------------------------------------------------------------

def stored(srv, frm, until):
    """How many profiles the store holds in [frm, until) (ns), listed in halves when one
    list would be truncated."""
    d = srv.json("/api/v1/profiles", {"query": '{service_name="%s"}' % SERVICE,
                                      "type": "cpu:cpu", "from": str(frm), "until": str(until),
                                      "limit": "10000"}, timeout=300)
    if not d["truncated"]:
        return len(d["profiles"])
    mid = (frm + until) // 2
    return stored(srv, frm, mid) + stored(srv, mid, until)


def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\noptions:")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scorch", help="the scorch binary")
    arg = ap.add_argument
    arg("--seconds", type=float, default=60, help="how long to push and query (60)")
    arg("--rate", type=float, default=20, help="pushes a second asked for (20)")
    arg("--conns", type=int, default=0, help="push connections (auto: rate/20, 2..64)")
    arg("--procs", type=int, default=0,
        help="push processes (auto: one per 400 pushes/s, at most 4)")
    arg("--series", type=int, default=0,
        help="instances pushed to (auto: rate x 10, each a 10 s profile every 10 s)")
    arg("--profiles", type=int, default=40, help="distinct profiles generated (40)")
    arg("--queriers", type=int, default=4, help="query clients (4)")
    arg("--qrate", type=float, default=4, help="queries a second per client, at most (4)")
    arg("--targets", type=int, default=0, help="simulated Go targets the server scrapes (0)")
    arg("--interval", type=float, default=10, help="their scrape interval, seconds (10)")
    arg("--behind", type=float, default=1.0,
        help="how far, seconds, a push connection may fall behind its schedule and catch up; "
             "slots past that are dropped (1)")
    arg("--every", type=float, default=5, help="seconds between progress lines (5)")
    arg("--warmup", type=float,
        help="seconds left out of the RSS slope (auto: a fifth of the run, at most 60)")
    arg("--flat", type=float, default=0.5,
        help="how far from 0 a memory slope, MiB/min, may be and count as flat (0.5)")
    arg("--no-heap", action="store_true",
        help="do not preload bench/malloc_probe.c's module (build/malloc_probe.so) into the "
             "server; with it, malloc's totals show live memory apart from what malloc keeps")
    arg("--no-fsync", action="store_true", help="run the server with --no-fsync")
    arg("--cache-memory", metavar="SIZE",
        help="the server's storage.cache_memory (SQLite's heap in all; default the "
             "server's, 64MiB); a small one is reached inside the warm-up, so the slopes "
             "after it show what grows besides SQLite's filling caches")
    arg("--keep", action="store_true", help="keep the store directory and say where")
    a = ap.parse_args()
    if a.rate <= 0 or a.seconds <= 0:
        ap.error("--rate and --seconds must be positive")
    a.conns = a.conns or max(2, min(64, math.ceil(a.rate / 20)))
    a.procs = max(1, min(a.procs or min(4, math.ceil(a.rate / 400)), a.conns))
    a.series = a.series or max(1, int(a.rate * 10))
    if a.behind < 0:
        ap.error("--behind must be 0 or more seconds")
    if a.warmup is None:
        a.warmup = min(60.0, a.seconds / 5)
    return a


class Samples:
    """What windows() measured: RSS [(t, rss, anon)], malloc [(t, in use, held)] (with the
    probe), the CPU seconds of the server, the push processes, this process and the fake
    targets, and whether the server died."""

    def __init__(self):
        self.rss, self.heap, self.cpu, self.died = [], [], [0.0] * 4, False


def windows(a, srv, log, pushers, t0, tgt):
    """Prints a line every a.every seconds until the run ends; returns its Samples."""
    print("%5s %7s %7s %7s %7s %6s %6s %8s %8s %5s %8s %8s %7s %7s" % (
        "t s", "rss MiB", "anon", "malloc", "sqlite", "push/s", "errors", "push p50",
        "push p99", "query", "qry p50", "qry p99", "srv cpu", "drv cpu"))

    def cpu():
        return (cpu_seconds(srv.proc.pid), pushers.cpu_now(), sum(os.times()[:2]),
                cpu_seconds(tgt.proc.pid) if tgt else 0.0)

    out = Samples()
    time.sleep(max(0.0, t0 - time.time()))
    out.rss.append((0.0,) + mem_mib(srv.proc.pid))
    w0, c0 = t0, cpu()
    while time.time() - t0 < a.seconds and not out.died:
        time.sleep(min(a.every, max(0.0, t0 + a.seconds - time.time())))
        w1 = time.time()
        got = log.take()
        push, pfail = got.pop("push", ((), 0))
        push = sorted(push)
        qry = sorted(x for lat, _ in got.values() for x in lat)
        fails = pfail + sum(f for _, f in got.values())
        out.rss.append((w1 - t0,) + mem_mib(srv.proc.pid))
        h = heap_mib(a.probe) if a.probe else None
        if h:
            out.heap.append((w1 - t0,) + h)
        c1 = cpu()
        for i in range(4):
            out.cpu[i] += c1[i] - c0[i]
        print("%5.0f %7.1f %7.1f %7s %7s %6.0f %6d %8s %8s %5d %8s %8s %7.2f %7.2f" % (
            w1 - t0, out.rss[-1][1], out.rss[-1][2], "%.1f" % h[0] if h else "-",
            "%.1f" % h[2] if h else "-", len(push) / (w1 - w0), fails,
            pct(push, 50), pct(push, 99), len(qry), pct(qry, 50), pct(qry, 99),
            (c1[0] - c0[0]) / (w1 - w0), (c1[1] + c1[2] - c0[1] - c0[2]) / (w1 - w0)),
            flush=True)
        w0, c0 = w1, c1
        out.died = not srv.alive()
        if out.died:
            break
        if tgt:
            tgt.poll(srv)
    return out


def summary(a, log, pushers, smp, load0):
    """Prints the run's rates, CPU, latencies and RSS slope; returns (acknowledged pushes,
    failed requests)."""
    runs = log.all()
    push, pfail, pok = runs.pop("push", ([], 0, 0))
    rate = len(push) / a.seconds
    print("push rate: %.0f/s achieved of %g/s asked (%.0f%%), %d pushes in %.0f s; %d "
          "schedule slots dropped by connections over --behind (%g s) behind" % (
              rate, a.rate, 100 * rate / a.rate, len(push), a.seconds, sum(pushers.drops),
              a.behind))
    cpu, rss = smp.cpu, smp.rss
    push_cpu = sum(pushers.cpu) or cpu[1]
    print("cpu, cores busy over the run: server %.2f, push processes %.2f (%.2f ms a push), "
          "queriers and driver %.2f, fake targets %.2f; load average %.2f %.2f %.2f at the "
          "start, %.2f %.2f %.2f at the end" % (
              cpu[0] / a.seconds, push_cpu / a.seconds, 1000 * push_cpu / max(1, len(push)),
              cpu[2] / a.seconds, cpu[3] / a.seconds, *load0, *os.getloadavg()))
    print("latency ms over the run (p50 / p99 / max, count, failed):")
    for kind, (xs, fail, _) in [("push", (push, pfail, pok))] + sorted(runs.items()):
        if xs:
            print("  %-9s %7s / %7s / %8.1f  %7d %5d" % (kind, pct(xs, 50), pct(xs, 99),
                                                      xs[-1] * 1000, len(xs), fail))
    after = [(t / 60, r) for t, r, _ in rss if t >= a.warmup]
    s_rss, s_anon = slope(after), slope([(t / 60, x) for t, _, x in rss if t >= a.warmup])
    print("rss MiB: start %.1f, after the %.0f s warm-up %.1f, max %.1f, end %.1f; slope "
          "after the warm-up %+.2f MiB/min (anonymous %+.2f), %.1f bytes a push: %s "
          "(flat: within %g MiB/min)" % (
              rss[0][1], a.warmup, after[0][1] if after else 0, max(r for _, r, _ in rss),
              rss[-1][1], s_rss, s_anon, s_rss * 2**20 / 60 / max(1.0, rate),
              trend(a, s_rss), a.flat))
    heap = [x for x in smp.heap if x[0] >= a.warmup]
    if heap:
        cols = {"in use": lambda x: x[1], "SQLite's": lambda x: x[3],
                "the rest": lambda x: x[1] - x[3], "held": lambda x: x[2]}
        fig = {k: (f(heap[0]), f(heap[-1]), slope([(x[0] / 60, f(x)) for x in heap]))
               for k, f in cols.items()}
        print("malloc MiB (bench/malloc_probe.c) after the warm-up, at the end, slope a "
              "minute: " + "; ".join("%s %.1f, %.1f, %+.2f" % ((k,) + v) for k, v in fig.items())
              + " (SQLite's heap is bounded by storage.cache_memory, %s; RSS also counts what "
              "malloc keeps after free): the rest is %s"
              % (a.cache_memory or "64MiB by default", trend(a, fig["the rest"][2])))
    elif a.probe:
        print("malloc: no figures (the probe wrote nothing)")
    return pok, pfail + sum(f for _, f, _ in runs.values())


def run(a, srv, tgt, profiles):
    """The soak against a started server; its exit status."""
    load0 = os.getloadavg()
    print("server pid %d on port %d, store in %s, fsync %s; %g pushes/s into %d series over "
          "%d connections from %d process(es); %d querier(s) at %g/s; %d scraped target(s) "
          "every %g s; %g s; load average %.2f %.2f %.2f" % (
              srv.proc.pid, srv.port, os.path.dirname(srv.data),
              "off" if a.no_fsync else "on", a.rate, a.series, a.conns, a.procs, a.queriers,
              a.qrate, a.targets, a.interval, a.seconds, *load0), flush=True)
    log, stop = Log(), threading.Event()
    start_ns = time.time_ns()
    t0 = time.time() + 0.2
    pushers = Pushers(srv.port, a, profiles, log, t0, t0 + a.seconds)
    qthreads = [threading.Thread(target=querier, args=(srv.port, a, k, stop, log))
                for k in range(a.queriers)]
    for t in qthreads:
        t.start()
    smp = windows(a, srv, log, pushers, t0, tgt)
    stop.set()
    pushers.join()
    for t in qthreads:
        t.join()
    acked, failed = summary(a, log, pushers, smp, load0)
    if smp.died or not srv.alive():
        print("the server died:\n" + srv.tail())
        return 1
    rc = 0
    if tgt:
        bad = tgt.report(srv, a)
        for b in bad[:10]:
            print("SCRAPE: " + b)
        rc = 1 if bad else 0
        tgt.stop()
    n_stored = stored(srv, start_ns - 60 * 10**9, time.time_ns() + 60 * 10**9)
    print("pushes: %d acknowledged, %d stored; %d requests failed (pushes and queries)" %
          (acked, n_stored, failed))
    if n_stored != acked:
        print("MISMATCH: %d acknowledged profiles, %d in the store" % (acked, n_stored))
        rc = 1
    if failed:
        rc = 1
    code, secs = srv.stop()
    print("SIGTERM: exit %s in %.2f s; store %.1f MiB" % (
        code, secs, sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in
                        os.walk(srv.data) for f in fs) / 2**20))
    return rc or (1 if code else 0)


def start_server(srv, a, tmp):
    """Starts srv, with the malloc probe preloaded when it is built and wanted; returns the
    file the probe writes (None without it)."""
    so = os.path.join(os.path.dirname(os.path.abspath(a.scorch)), "malloc_probe.so")
    if a.no_heap or not os.path.exists(so):
        srv.start()
        return None
    path = os.path.join(tmp, "malloc.txt")
    env = {"LD_PRELOAD": so, "SCORCH_MALLOC_PROBE": path}
    os.environ.update(env)  # for the server only: the probe takes them out of its environment
    try:
        srv.start()
    finally:
        for k in env:
            del os.environ[k]
    return path


def main():
    a = options()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # sockets: pushes and scrapes
    profiles = ingest_load.make_profiles(a.profiles, False)
    tmp = tempfile.mkdtemp(prefix="scorch-soak-")
    tgt = srv = None
    rc = 1
    try:
        tgt = Targets(a, tmp) if a.targets else None
        config = tgt.config if tgt else None
        if a.cache_memory:
            config = config or os.path.join(tmp, "scorch.yaml")
            with open(config, "a") as f:
                f.write("storage:\n  cache_memory: %s\n" % a.cache_memory)
        srv = Server(a.scorch, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                     config=config,
                     extra=["--no-fsync"] if a.no_fsync else [])
        a.probe = start_server(srv, a, tmp)
        rc = run(a, srv, tgt, profiles)
    finally:
        if srv:
            srv.kill()
        if tgt:
            tgt.stop()
        if a.keep or rc:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp)
    return rc


if __name__ == "__main__":
    sys.exit(main())
