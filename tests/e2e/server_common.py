"""server_common.py - what the server tests share: start and stop a real `scorch server`,
send requests, read its memory use, and compute oracles from `go tool pprof -raw`.
Standard library only. Run the drivers with `python3 -B` (no __pycache__ in the tree)."""
import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse


class Fail(Exception):
    pass


def fail(msg):
    raise Fail(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def enc(params):
    """Query string; None values are left out."""
    return urllib.parse.urlencode([(k, v) for k, v in params.items() if v is not None])


def free_ports(n):
    """n distinct free loopback ports."""
    ss = [socket.socket() for _ in range(n)]
    for s in ss:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in ss]
    for s in ss:
        s.close()
    return ports


class Server:
    """One `scorch server` process on a free loopback port."""

    def __init__(self, scorch, data, log, config=None, extra=()):
        self.scorch, self.data, self.log, self.config = scorch, data, log, config
        self.extra = list(extra)
        self.proc = None
        self.port = None
        self.token = None
        self.tls = None  # an ssl.SSLContext: requests go over HTTPS

    def start(self, timeout=15):
        args = [self.scorch, "server", "--data", self.data, "--listen", "127.0.0.1:0"]
        if self.config:
            args += ["--config", self.config]
        args += self.extra
        self.logf = open(self.log, "ab")
        self.logf.write(b"---- start\n")
        self.logf.flush()
        start_off = self.logf.tell()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=self.logf)
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.log, "rb") as f:
                f.seek(start_off)
                m = re.search(rb"listening on https?://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                fail("server exited with %d before listening:\n%s" % (self.proc.returncode,
                                                                      self.tail()))
            time.sleep(0.05)
        fail("server did not print 'listening on' within %d s" % timeout)

    def tail(self, n=20):
        with open(self.log, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")

    def stop(self, timeout=10):
        """SIGTERM; returns (exit status, seconds it took)."""
        if not self.proc or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), 0.0
        t0 = time.time()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail("server did not exit within %d s of SIGTERM" % timeout)
        self.logf.close()
        return rc, time.time() - t0

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def alive(self):
        return self.proc.poll() is None

    def rss_mb(self):
        """Resident memory of the server process in MiB (VmRSS)."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return 0.0

    def request(self, method, path, params=None, body=None, headers=None, timeout=60,
                auth=True):
        """One request on a fresh connection: (status, headers dict lower-cased, bytes)."""
        url = path + ("?" + enc(params) if params else "")
        h = dict(headers or {})
        if auth and self.token and "Authorization" not in h:
            h["Authorization"] = "Bearer " + self.token
        if self.tls:
            c = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                            context=self.tls)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, url, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def get(self, path, params=None, **kw):
        return self.request("GET", path, params, **kw)

    def ok(self, path, params=None, method="GET", body=None, **kw):
        """A request that must answer 200: its body."""
        st, _, data = self.request(method, path, params, body=body, **kw)
        if st != 200:
            fail("%s %s?%s: status %d: %s" % (method, path, enc(params or {}), st,
                                               data[:300].decode("utf-8", "replace")))
        return data

    def json(self, path, params=None, **kw):
        data = self.ok(path, params, **kw)
        try:
            return json.loads(data)
        except ValueError as e:
            fail("%s: not JSON (%s): %r" % (path, e, data[:200]))

    def push(self, body, headers=None, **params):
        return self.ok("/ingest", params, method="POST", body=body, headers=headers)

    def metrics(self):
        """/metrics as {'name{labels}': float}."""
        out = {}
        for line in self.ok("/metrics").decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out


def expect_error(srv, statuses, method, path, params=None, body=None, headers=None,
                 words=(), what=""):
    """A request that must be refused with one of statuses and a JSON {"error": ...} naming
    each of words (case-insensitive). Returns the message."""
    if isinstance(statuses, int):
        statuses = (statuses,)
    st, hdr, data = srv.request(method, path, params, body=body, headers=headers)
    label = what or "%s %s" % (method, path)
    if st not in statuses:
        fail("%s: status %d, want %s: %s" % (label, st, statuses,
                                             data[:300].decode("utf-8", "replace")))
    try:
        msg = json.loads(data)["error"]
    except (ValueError, KeyError, TypeError):
        fail("%s: error body is not {\"error\": ...}: %r" % (label, data[:200]))
    check(isinstance(msg, str) and msg, "%s: empty error message" % label)
    for w in words:
        check(w.lower() in msg.lower(), "%s: error %r does not mention %r" % (label, msg, w))
    return msg


def raw_exchange(port, head, chunks=(), timeout=60):
    """Sends head then chunks on a raw socket (stopping quietly when the server closes),
    then reads the response: (status, body bytes). Returns (None, b"") when the server
    closed without answering."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(head)
            for c in chunks:
                s.sendall(c)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
                hdr_end = data.find(b"\r\n\r\n")
                if hdr_end >= 0:
                    hdrs = data[:hdr_end].decode("latin-1").lower()
                    for line in hdrs.split("\r\n"):
                        if line.startswith("content-length:"):
                            if len(data) - hdr_end - 4 >= int(line.split(":")[1]):
                                raise StopIteration
        except StopIteration:
            pass
        except ConnectionResetError:
            pass
        if not data.startswith(b"HTTP/1."):
            return None, data
        status = int(data.split(b" ", 2)[1])
        return status, data[data.find(b"\r\n\r\n") + 4:]
    finally:
        s.close()


def read_answer(sock, timeout):
    """The status, headers (lower-cased) and body of one answer read from a raw socket, or
    (None, {}, b"") when the server closed without one (or said nothing for timeout s)."""
    data = b""
    sock.settimeout(timeout)
    try:
        while b"\r\n\r\n" not in data:
            b = sock.recv(65536)
            if not b:
                return None, {}, b""
            data += b
        head, body = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        hdrs = dict((ln.split(":", 1)[0].lower(), ln.split(":", 1)[1].strip())
                    for ln in lines[1:] if ":" in ln)
        want = int(hdrs.get("content-length", "0"))
        while len(body) < want:
            b = sock.recv(65536)
            if not b:
                break
            body += b
        return int(lines[0].split()[1]), hdrs, body
    except (ConnectionResetError, socket.timeout):
        return None, {}, b""


# ---- OTLP through tests/e2e/otlp_client.py (stubs from protoc in STUBS) ----

OTLP_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "otlp_client.py")

# two samples of main;main.FN, half a second apart, at second T
OTLP_PERF = """prog 100 [000] {t}.000100:     1000000 cpu-clock:
\t4005d0 main.{fn} (/bin/prog)
\t400100 main.main (/bin/prog)

prog 100 [000] {t}.500100:     1000000 cpu-clock:
\t4005d0 main.{fn} (/bin/prog)
\t400100 main.main (/bin/prog)

"""


def otlp_client(stubs, *args):
    """otlp_client.py's output (it must exit 0)."""
    return run([sys.executable, "-B", OTLP_CLIENT, stubs] + list(args)).decode()


def otlp_request(stubs, tmp, svc, t0):
    """The path of an OTLP export request (in tmp) of service svc: the two samples of
    OTLP_PERF at second t0 with the function main.<svc, '-' as '_'>."""
    perf = os.path.join(tmp, svc + ".perf")
    with open(perf, "w") as f:
        f.write(OTLP_PERF.format(t=t0, fn=svc.replace("-", "_")))
    out = os.path.join(tmp, svc + ".otlp")
    otlp_client(stubs, "build", perf, str(t0), "paired", svc, out)
    return out


# ---- HTTP/2 by hand (the gRPC listener's edges) ----

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
PING = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"scorch!!"
# an HTTP/2 frame of an unknown type (0xbf), which a peer must ignore: 16 KiB of payload
UNKNOWN_FRAME = (16384).to_bytes(3, "big") + b"\xbf\x00" + b"\x00" * 4 + b"u" * 16384


def deaf_h2c_peer(port, within=60):
    """An h2c connection to port that makes the server write and never reads: PINGs (each
    answered by a PING ACK) until the server's sends stall and then its reads (the socket
    takes nothing for 1 s). Each burst of 900 PINGs comes with 64 KiB of unknown frames, so
    no read of the server's (64 KiB) holds more than nghttp2's 1,000 unanswered PINGs (it
    would call that a flood and close). The open socket, or a failed check."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(PREFACE + EMPTY_SETTINGS)
    s.setblocking(False)
    burst = PING * 900 + UNKNOWN_FRAME * 4
    pending, sent, t0 = b"", 0, time.time()
    last = t0
    while time.time() - last < 1.0:
        check(time.time() - t0 < within, "a peer that never reads: the server still read "
              "after %d s (%d bytes)" % (within, sent))
        data = pending or burst
        try:
            n = s.send(data)
        except BlockingIOError:
            n = 0
        except OSError as e:
            check(False, "a peer that never reads was dropped after %d bytes (%s)" % (sent, e))
        if n:
            sent, last, pending = sent + n, time.time(), data[n:]
        else:
            time.sleep(0.01)
    return s


def grpc_port(srv):
    """The OTLP/gRPC port a started server logged (otlp.grpc_listen: ...:0)."""
    with open(srv.log, "rb") as f:
        m = re.findall(rb"OTLP/gRPC on 127\.0\.0\.1:(\d+)", f.read())
    check(m, "no OTLP/gRPC port in the log")
    return int(m[-1])


# ---- oracles from go tool pprof ----

GOENV = dict(os.environ)
GOENV.setdefault("HOME", "/tmp")
GOENV.setdefault("GOCACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "scorch-gocache"))
GOENV["GOFLAGS"] = "-mod=mod"


def go_raw(path, *flags):
    """`go tool pprof -raw [flags] FILE` text."""
    r = subprocess.run(["go", "tool", "pprof", "-raw"] + list(flags) + [path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=GOENV)
    if r.returncode:
        fail("go tool pprof -raw %s failed: %s" % (path, r.stderr.decode()[-300:]))
    return r.stdout.decode("utf-8", "replace")


def raw_types(raw):
    """Sample type names of a -raw dump, in order."""
    lines = raw.splitlines()
    i = lines.index("Samples:") + 1
    return [t.split("/")[0] for t in lines[i].replace("[dflt]", "").split()]


def raw_totals(raw):
    """Sum of each sample type's values over all samples of a -raw dump."""
    lines = raw.splitlines()
    i = lines.index("Samples:") + 1
    n = len(lines[i].split())
    tot = [0] * n
    for line in lines[i + 1:]:
        if line.startswith("Locations"):
            break
        m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", line)
        if m:
            for k, v in enumerate(m.group(1).split()):
                tot[k] += int(v)
    return tot


def _varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def pb_varint(n):
    """A protobuf varint (the writers below craft pprofs the tests need byte by byte)."""
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def pb_field(num, payload):
    """A length-delimited field."""
    return pb_varint(num << 3 | 2) + pb_varint(len(payload)) + payload


def pb_num(num, v):
    """A varint field."""
    return pb_varint(num << 3) + pb_varint(v)


def _fields(b):
    """(field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        k, i = _varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = _varint(b, i)
        elif t == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif t == 1:
            v, i = b[i:i + 8], i + 8
        elif t == 5:
            v, i = b[i:i + 4], i + 4
        else:
            fail("bad protobuf wire type %d" % t)
        yield f, t, v


def pprof_totals(data):
    """Sum of each sample type's values over every sample of a pprof (gzipped or not),
    decoded here from the protobuf: `go tool pprof -raw` leaves out samples without
    locations, which -top's total and scorch count."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    tot = []
    for f, t, v in _fields(data):
        if f != 2:  # Profile.sample
            continue
        vals = []
        for f2, t2, v2 in _fields(v):
            if f2 == 2 and t2 == 2:  # Sample.value, packed
                j = 0
                while j < len(v2):
                    x, j = _varint(v2, j)
                    vals.append(x - (1 << 64) if x >= 1 << 63 else x)
            elif f2 == 2:
                vals.append(v2 - (1 << 64) if v2 >= 1 << 63 else v2)
        tot += [0] * (len(vals) - len(tot))
        for k, x in enumerate(vals):
            tot[k] += x
    return tot


def flat_cum_from_raw(src, raw, stype):
    """{function: (flat, cum)} computed by tests/compat/pprof_raw.py from a -raw dump."""
    r = subprocess.run([sys.executable, "-B", os.path.join(src, "tests/compat/pprof_raw.py"),
                        stype], input=raw.encode(), stdout=subprocess.PIPE)
    if r.returncode:
        fail("pprof_raw.py failed")
    return parse_tsv_rows(r.stdout.decode(), header=False)


def parse_tsv_rows(text, header=True):
    lines = text.splitlines()
    if header:
        check(lines and lines[0] == "flat\tcum\tfunction", "bad tsv header: %r" % lines[:1])
        lines = lines[1:]
    out = {}
    for line in lines:
        f, c, name = line.split("\t", 2)
        out[name] = (int(f), int(c))
    return out


def diff_tables(got, want, label):
    if got == want:
        return
    keys = sorted(set(got) | set(want))
    bad = [k for k in keys if got.get(k) != want.get(k)]
    fail("%s: %d of %d functions differ, e.g. %s" % (
        label, len(bad), len(keys),
        "; ".join("%s: got %s want %s" % (k, got.get(k), want.get(k)) for k in bad[:3])))


def gunzip_check(data, label):
    check(data[:2] == b"\x1f\x8b", "%s: not gzip" % label)
    return gzip.decompress(data)


def run(argv, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if r.returncode:
        fail("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr.decode()[-300:]))
    return r.stdout


def with_server(scorch, tmp, fn):
    """Runs fn(srv) against a server with its data and log in tmp, killed after."""
    srv = Server(scorch, os.path.join(tmp, "data"), os.path.join(tmp, "server.log")).start()
    try:
        fn(srv)
    finally:
        srv.kill()


def main_wrapper(fn):
    """Runs fn(); exit 1 with FAIL: on Fail, 77 on Skip."""
    try:
        fn()
    except Fail as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)


def cpu_pprof(stacks, period_ns=10000000, time_ns=0, duration_ns=0,
              types=(("samples", "count", 1), ("cpu", "nanoseconds", None))):
    """A Go-like CPU pprof (gzipped): sample types samples/count and cpu/nanoseconds, one
    sample per stack ("root;caller;leaf" -> samples), each worth period_ns of CPU. types
    gives other sample types as (type, unit, multiplier; None: period_ns), e.g. a heap's
    (("inuse_space", "bytes", 1024),). Field numbers: profile.proto (sample_type 1, sample 2,
    location 4, function 5, string_table 6, time_nanos 9, duration_nanos 10, period_type 11,
    period 12)."""
    strings = [""]

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    def vt(t, u):
        return pb_field(1, pb_num(1, s(t)) + pb_num(2, s(u)))

    body = b"".join(vt(t, u) for t, u, _ in types)
    mult = [period_ns if m is None else m for _, _, m in types]
    funcs = {}
    for stack in stacks:
        for name in stack.split(";"):
            funcs.setdefault(name, len(funcs) + 1)
    for name, i in funcs.items():
        body += pb_field(5, pb_num(1, i) + pb_num(2, s(name)) + pb_num(3, s(name)))
        body += pb_field(4, pb_num(1, i) + pb_field(4, pb_num(1, i) + pb_num(2, 1)))
    for stack, n in stacks.items():
        locs = b"".join(pb_varint(funcs[f]) for f in reversed(stack.split(";")))
        body += pb_field(2, pb_field(1, locs) +
                         pb_field(2, b"".join(pb_varint(n * m) for m in mult)))
    if None in [m for _, _, m in types]:
        body += pb_field(11, pb_num(1, s("cpu")) + pb_num(2, s("nanoseconds")))
        body += pb_num(12, period_ns)
    if time_ns:
        body += pb_num(9, time_ns)
    if duration_ns:
        body += pb_num(10, duration_ns)
    for x in strings:
        body += pb_field(6, x.encode())
    return gzip.compress(body)
