#!/usr/bin/env python3
"""ingest_load.py URL [options]: a load generator for scorch's POST /ingest (a benchmark, not
a test). Generates a set of distinct, realistic gzipped Go CPU profiles (~35 KB each, one
binary's call graph, different samples in each, as consecutive pushes of a fleet look),
then pushes them over keep-alive HTTP/1.1 connections, one thread per connection, for a
fixed time, and prints profiles/s, ingest latency percentiles and CPU use (this process, and
the server's when --pid is given).

options: --seconds N (20)  --conns N (4)  --profiles N (200)  --series N (64)
         --pid PID (the server, for its CPU use)  --token T  --quiet"""
import argparse
import gzip
import http.client
import os
import random
import sys
import threading
import time
import urllib.parse


def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def ln(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def u(field, v):
    return key(field, 0) + varint(v) if v else b""


class Binary:
    """One program: functions in packages, a call graph, locations per call site."""

    def __init__(self, rnd, nfuncs=1500):
        self.strings, self.sindex = [""], {"": 0}
        s = self.s
        pkgs = ["github.com/acme/shop/%s%d" % (rnd.choice(["api", "db", "cache", "codec",
                                                            "net", "auth", "search"]), i)
                for i in range(60)] + ["runtime", "net/http", "encoding/json", "sync",
                                       "syscall", "compress/flate", "bufio", "crypto/tls"]
        self.funcs = []
        for i in range(nfuncs):
            pkg = rnd.choice(pkgs)
            name = "%s.(*%s%d).%s" % (pkg, rnd.choice(["Server", "Conn", "Encoder", "Pool",
                                                       "Cache", "Query", "Tx"]), i % 23,
                                      rnd.choice(["ServeHTTP", "Read", "Write", "encode",
                                                  "decode", "run", "Get", "Put", "flush"]))
            self.funcs.append((s(name), s("%s/file%d.go" % (pkg, i % 13)), 10 + i % 700))
        self.callees = [[(i + rnd.randint(1, 200)) % nfuncs for _ in range(rnd.randint(1, 5))]
                        for i in range(nfuncs)]
        self.roots = [0, 150, 300, 450, 600, 900, 1200]
        self.locs, self.loc_of = [], {}
        self.rnd = rnd

    def s(self, x):
        if x not in self.sindex:
            self.sindex[x] = len(self.strings)
            self.strings.append(x)
        return self.sindex[x]

    def location(self, f, site):
        k = (f, site)
        if k not in self.loc_of:
            lines = [(f, self.funcs[f][2] + site)]
            if self.rnd.random() < 0.15 and self.callees[f]:
                lines.insert(0, (self.callees[f][0], 5 + site))
            self.locs.append((0x401000 + 32 * len(self.locs), lines))
            self.loc_of[k] = len(self.locs)
        return self.loc_of[k]

    def stack(self, rnd):
        f = self.roots[min(int(rnd.paretovariate(1.3)) - 1, len(self.roots) - 1)]
        out = []
        for _ in range(rnd.randint(4, 24)):
            out.append(self.location(f, rnd.randrange(3)))
            c = self.callees[f]
            f = c[min(int(rnd.paretovariate(1.6)) - 1, len(c) - 1)]
        out.reverse()  # leaf first
        return out


def cpu_profile(b, rnd, nstacks, t_ns):
    """A 10 s Go CPU profile at 100 Hz: samples/count, cpu/nanoseconds. Only the locations,
    functions and strings the samples use are written, as Go's runtime does."""
    period = 10000000
    stacks = {}
    for _ in range(nstacks):
        st = tuple(b.stack(rnd))
        stacks[st] = stacks.get(st, 0) + max(1, int(rnd.paretovariate(1.1)))
    used_locs, used_funcs = set(), set()
    for st in stacks:
        used_locs.update(st)
    for li in used_locs:
        for f, _line in b.locs[li - 1][1]:
            used_funcs.add(f)
    strings, sidx = [""], {0: 0}

    def s(i):
        if i not in sidx:
            sidx[i] = len(strings)
            strings.append(b.strings[i])
        return sidx[i]

    def sname(x):
        return s(b.s(x))

    body = bytearray()
    for t, unit in (("samples", "count"), ("cpu", "nanoseconds")):
        body += ln(1, u(1, sname(t)) + u(2, sname(unit)))
    for st, n in stacks.items():
        packed = b"".join(varint(x) for x in st)
        body += ln(2, ln(1, packed) + ln(2, varint(n) + varint(n * period)))
    body += ln(3, u(1, 1) + u(2, 0x400000) + u(3, 0x400000 + 32 * len(b.locs) + 4096) +
               u(5, sname("/usr/local/bin/shop")) + u(6, sname("5f3c2a1be9d04c77")) +
               u(7, 1) + u(8, 1) + u(9, 1) + u(10, 1))
    for li in sorted(used_locs):
        addr, lines = b.locs[li - 1]
        m = u(1, li) + u(2, 1) + u(3, addr)
        for f, line in lines:
            m += ln(4, u(1, f + 1) + u(2, line))
        body += ln(4, m)
    for f in sorted(used_funcs):
        name, fname, start = b.funcs[f]
        body += ln(5, u(1, f + 1) + u(2, s(name)) + u(3, s(name)) + u(4, s(fname)) +
                   u(5, start))
    period_type = ln(11, u(1, sname("cpu")) + u(2, sname("nanoseconds")))
    for x in strings:
        body += ln(6, x.encode())
    body += u(9, t_ns) + u(10, 10 * 10**9) + period_type + u(12, period)
    return gzip.compress(bytes(body), compresslevel=6)


def make_profiles(n, quiet):
    rnd = random.Random(42)
    b = Binary(rnd)
    now = time.time_ns()
    out = []
    t0 = time.time()
    for i in range(n):
        out.append(cpu_profile(b, random.Random(1000 + i), 200, now - (n - i) * 10**10))
    if not quiet:
        sizes = sorted(len(x) for x in out)
        print("generated %d distinct CPU profiles in %.1f s: %d..%d bytes (median %d)" %
              (n, time.time() - t0, sizes[0], sizes[-1], sizes[len(sizes) // 2]),
              file=sys.stderr)
    return out


def request_ok(conn, method, path, body=None, headers=None):
    """Whether a request on the keep-alive connection conn was answered 200. A failed
    connection is closed; http.client opens it again for the next request."""
    try:
        conn.request(method, path, body, headers or {})
        r = conn.getresponse()
        r.read()
        return r.status == 200
    except (OSError, http.client.HTTPException):
        conn.close()
        return False


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--conns", type=int, default=4)
    ap.add_argument("--profiles", type=int, default=200)
    ap.add_argument("--series", type=int, default=64)
    ap.add_argument("--pid", type=int)
    ap.add_argument("--token")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    profiles = make_profiles(a.profiles, a.quiet)
    url = urllib.parse.urlsplit(a.url)
    headers = {"Content-Type": "application/octet-stream"}
    if a.token:
        headers["Authorization"] = "Bearer " + a.token
    lat = [[] for _ in range(a.conns)]
    errors = [0] * a.conns
    sent = [0] * a.conns
    stop = threading.Event()
    start = threading.Barrier(a.conns + 1)

    def worker(k):
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        i = k
        start.wait()
        while not stop.is_set():
            body = profiles[i % len(profiles)]
            now = int(time.time())
            q = urllib.parse.urlencode({
                "name": "shop.cpu{instance=host-%d,region=eu}" % (i % a.series),
                "from": now - 10, "until": now, "format": "pprof", "spyName": "gospy",
                "sampleRate": 100})
            t = time.perf_counter()
            ok = request_ok(conn, "POST", "/ingest?" + q, body, headers)
            lat[k].append(time.perf_counter() - t)
            sent[k] += len(body)
            if not ok:
                errors[k] += 1
            i += a.conns
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(a.conns)]
    for t in threads:
        t.start()
    hz = os.sysconf("SC_CLK_TCK")
    srv0 = cpu_ticks(a.pid) if a.pid else 0
    me0 = os.times()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(a.seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    me1 = os.times()
    srv1 = cpu_ticks(a.pid) if a.pid else 0
    all_lat = sorted(x for l in lat for x in l)
    n = len(all_lat)
    if n == 0:
        print("no requests completed", file=sys.stderr)
        return 1

    def pct(p):
        return all_lat[min(n - 1, int(p / 100 * n))] * 1000

    print("%d connections, %.1f s: %d profiles (%d errors), %.0f profiles/s, %.1f MB/s" %
          (a.conns, wall, n, sum(errors), n / wall, sum(sent) / wall / 1e6))
    print("latency ms: p50 %.2f  p95 %.2f  p99 %.2f  max %.2f" %
          (pct(50), pct(95), pct(99), all_lat[-1] * 1000))
    me = (me1.user - me0.user) + (me1.system - me0.system)
    line = "cpu (cores busy): load generator %.2f" % (me / wall)
    if a.pid:
        line += ", server %.2f" % ((srv1 - srv0) / hz / wall)
    print(line)
    return 1 if sum(errors) else 0


if __name__ == "__main__":
    sys.exit(main())
