#!/usr/bin/env python3
"""fake_pprof_target.py - pprof endpoints that misbehave on purpose, for the scraping tests.

One asyncio process serves any number of loopback ports, each with a behaviour:

  ok        like an older Go (< 1.16): /debug/pprof/<name> answers a gzipped pprof at once;
            ?seconds=N on profile (CPU) waits N s; ?seconds= on anything else is 400.
            Cumulative types (allocs, mutex, block) count up with every request.
  go        like Go >= 1.16: ?seconds=N on any type waits N s and answers a delta profile
            (duration_nanos set)
  slow:S    like ok, but every answer waits S seconds first
  garbage   200 with bytes that are no profile
  hang      accepts, reads, never answers

With --profiles DIR (../shared/testdata/pprof) CPU answers are DIR's cpu-*.pb.gz and heap and
allocs answers its mem-*.pb.gz (round robin over ports); other types, and everything without
--profiles, are small generated profiles with one stack (main.fake;main.main).

--log FILE gets one line per request: "<unix time> <port> <path?query> <status>" (the time the
request arrived). --path-prefix serves under another prefix than /debug/pprof. --auth VALUE
answers 401 to requests without "Authorization: VALUE".

PORT 0 takes a free port (no race with another process picking the same one); the line
"ready PORT ..." on stdout, printed once every port listens, names the ports in order.

usage: fake_pprof_target.py [--log FILE] [--profiles DIR] [--path-prefix P] [--auth VALUE]
                            PORT=MODE ...
"""
import asyncio
import glob
import gzip
import os
import sys
import time
import urllib.parse


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fv(field, v):
    return varint(field << 3) + varint(v)


def fb(field, b):
    return varint(field << 3 | 2) + varint(len(b)) + b


TYPES = {
    "profile": [("samples", "count"), ("cpu", "nanoseconds")],
    "heap": [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"),
             ("inuse_space", "bytes")],
    "allocs": [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"),
               ("inuse_space", "bytes")],
    "goroutine": [("goroutine", "count")],
    "threadcreate": [("threadcreate", "count")],
    "mutex": [("contentions", "count"), ("delay", "nanoseconds")],
    "block": [("contentions", "count"), ("delay", "nanoseconds")],
}


def make_profile(name, n, duration_ns=0):
    """A pprof of type name with one stack whose values are n times a base."""
    strings = ["", "main.fake", "main.main", "main.go"]
    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)
    types = TYPES[name]
    body = b""
    for t, u in types:
        body += fb(1, fv(1, s(t)) + fv(2, s(u)))
    values = b"".join(fv(2, n * (i + 1) * 1000) for i in range(len(types)))
    body += fb(2, fv(1, 1) + fv(1, 2) + values)
    body += fb(4, fv(1, 1) + fb(4, fv(1, 1) + fv(2, 10)))
    body += fb(4, fv(1, 2) + fb(4, fv(1, 2) + fv(2, 20)))
    body += fb(5, fv(1, 1) + fv(2, 1) + fv(3, 1) + fv(4, 3))
    body += fb(5, fv(1, 2) + fv(2, 2) + fv(3, 2) + fv(4, 3))
    tail = fv(9, time.time_ns())
    if name == "profile":
        tail += fv(10, duration_ns or 10**9) + fb(11, fv(1, s("cpu")) + fv(2, s("nanoseconds")))
        tail += fv(12, 10000000)
    elif duration_ns:
        tail += fv(10, duration_ns)
    for x in strings:
        body += fb(6, x.encode())
    return gzip.compress(body + tail, 1)


class Files:
    """Real profiles, raw and as 'deltas' (duration_nanos appended: the last field wins)."""

    def __init__(self, d):
        self.cpu = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(d, "cpu-*.pb.gz")))]
        self.mem = [open(p, "rb").read() for p in sorted(glob.glob(os.path.join(d, "mem-*.pb.gz")))]
        self.delta = {}

    def pick(self, name, port, seconds):
        lst = self.cpu if name == "profile" else self.mem if name in ("heap", "allocs") else None
        if not lst:
            return None
        i = port % len(lst)
        if name == "profile" or not seconds:
            return lst[i]
        key = (i, seconds)
        if key not in self.delta:
            raw = gzip.decompress(lst[i]) + fv(10, seconds * 10**9)
            self.delta[key] = gzip.compress(raw, 1)
        return self.delta[key]


class Target:
    def __init__(self, port, mode, log, files, prefix, auth):
        self.port, self.log, self.files, self.prefix, self.auth = port, log, files, prefix, auth
        self.mode, _, arg = mode.partition(":")
        self.delay = float(arg) if arg else 0.0
        self.count = {}

    def record(self, t, path, status):
        if self.log:
            self.log.write("%.6f %d %s %d\n" % (t, self.port, path, status))
            self.log.flush()

    async def answer(self, path, headers):
        """(status, body) for a request path."""
        if self.auth and headers.get("authorization") != self.auth:
            return 401, b"Unauthorized\n"
        url = urllib.parse.urlsplit(path)
        q = urllib.parse.parse_qs(url.query)
        if not url.path.startswith(self.prefix + "/"):
            return 404, b"404 page not found\n"
        name = url.path[len(self.prefix) + 1:]
        if name not in TYPES:
            return 404, b"Unknown profile\n"
        if self.mode == "garbage":
            return 200, b"<html>this is not the profile you are looking for</html>\n" * 20
        if self.delay:
            await asyncio.sleep(self.delay)
        seconds = int(q.get("seconds", ["0"])[0] or 0)
        if seconds and name != "profile" and self.mode != "go":
            return 400, b'"seconds" parameter is not supported for this profile type\n'
        if seconds:
            await asyncio.sleep(seconds)
        n = self.count[name] = self.count.get(name, 0) + 1
        body = self.files.pick(name, self.port, seconds) if self.files else None
        if body is None:
            cumulative = name in ("allocs", "mutex", "block")
            if self.mode == "go" and seconds:
                body = make_profile(name, 1, seconds * 10**9)  # a delta: one unit per interval
            else:
                body = make_profile(name, n if cumulative else 1, seconds * 10**9)
        return 200, body

    async def serve(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                t = time.time()
                headers = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                if self.mode == "hang":
                    self.record(t, line.split()[1].decode(), 0)
                    await asyncio.sleep(3600)
                    break
                path = line.split()[1].decode()
                status, body = await self.answer(path, headers)
                self.record(t, path, status)
                reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized",
                          404: "Not Found"}[status]
                writer.write(("HTTP/1.1 %d %s\r\nContent-Type: application/octet-stream\r\n"
                              "Content-Length: %d\r\n\r\n" % (status, reason, len(body))).encode())
                writer.write(body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, IndexError):
            pass
        finally:
            writer.close()


async def main():
    args = sys.argv[1:]
    log, files, prefix, auth, specs = None, None, "/debug/pprof", None, []
    while args:
        a = args.pop(0)
        if a == "--log":
            log = open(args.pop(0), "a")
        elif a == "--profiles":
            files = Files(args.pop(0))
        elif a == "--path-prefix":
            prefix = args.pop(0).rstrip("/")
        elif a == "--auth":
            auth = args.pop(0)
        else:
            port, _, mode = a.partition("=")
            specs.append((int(port), mode or "ok"))
    servers, ports = [], []
    for port, mode in specs:
        t = Target(port, mode, log, files, prefix, auth)
        servers.append(await asyncio.start_server(t.serve, "127.0.0.1", port, backlog=1024))
        t.port = servers[-1].sockets[0].getsockname()[1]
        ports.append(str(t.port))
    print("ready " + " ".join(ports), flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
