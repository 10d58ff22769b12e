"""server_shutdown.py - SIGTERM while pushes are in flight: the server exits 0 within a few
seconds, no request hangs, and every push answered 200 is in the store after a restart.
Usage: server_shutdown.py TMPDIR (env: SCORCH, SCORCH_TESTDATA)."""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import check, main_wrapper, parse_tsv_rows, with_server

SCORCH = os.environ["SCORCH"]
TD = os.environ.get("SCORCH_TESTDATA", "")
TMP = sys.argv[1]
THREADS = 6
NOW = int(time.time())
BASE = NOW - 1800
RANGE = {"from": str(BASE - 60), "until": str(NOW + 60)}
REQ_TIMEOUT = 15     # a request that takes longer counts as hung
EXIT_WITHIN = 7      # seconds from SIGTERM to exit (the server drains for up to 5 s)


def main():
    with_server(SCORCH, TMP, run_all)


def run_all(srv):
    big = None
    path = os.path.join(TD, "pprof", "cpu-encoding_json.pb.gz") if TD else ""
    if os.path.exists(path):
        with open(path, "rb") as f:
            big = f.read()
    stop = threading.Event()
    t_term = [time.time() + 3600]
    # per thread: [(k, status or None, seconds)]
    results = [[] for _ in range(THREADS)]

    def client(i):
        k = 0
        while not stop.is_set():
            k += 1
            # every push is its own function p<k> in the thread's series, count 1; a few
            # threads also carry a bigger pprof to keep requests in flight longer
            if big is not None and i % 3 == 2 and k % 2 == 0:
                body, fmt, name = big, "pprof", "shutbig{thread=\"%d\",k=\"%d\"}" % (i, k)
            else:
                body = b"main;t%d;p%d 1\n" % (i, k)
                fmt, name = "folded", "shut{thread=\"%d\"}" % i
            params = {"name": name, "format": fmt, "from": str(BASE + k),
                      "until": str(BASE + k + 1)}
            t0 = time.time()
            if t0 > t_term[0] + 30:
                break
            try:
                st, _, data = srv.request("POST", "/ingest", params, body=body,
                                          timeout=REQ_TIMEOUT)
                if st == 200:
                    check(json.loads(data)["samples"] >= 1, "a 200 push stored nothing")
            except OSError:
                st = None  # refused, reset or timed out: the server is going away
            results[i].append((k, fmt, st, time.time() - t0, t0))
            if st is None:
                if srv.proc.poll() is not None:
                    break
                time.sleep(0.01)  # refused while stopping: do not spin

    reads = []  # (thread, functions seen) of reads answered before SIGTERM
    read_errors = []

    def reader(i):
        # reads while pushes land: each answer is a consistent snapshot (every push whole,
        # value 1) and never loses pushes an earlier answer had
        q = '{service_name="shut",thread="%d"}' % i
        seen = set()
        while not stop.is_set() and time.time() < t_term[0]:
            t_read = time.time()
            try:
                st, _, data = srv.request("GET", "/api/v1/render", dict(
                    query=q, type="cpu:samples", format="tsv", **RANGE), timeout=REQ_TIMEOUT)
            except OSError:
                break
            if time.time() >= t_term[0]:
                break
            if st != 200:
                read_errors.append((st, data[:100]))
                break
            tsv = parse_tsv_rows(data.decode())
            fns = {f for f in tsv if f.startswith("p")}
            bad = [f for f in fns if tsv[f] != (1, 1)]
            if bad or not seen <= fns:
                read_errors.append(("inconsistent", bad[:3], sorted(seen - fns)[:3]))
                break
            seen = fns
            reads.append((i, t_read, fns))

    threads = [threading.Thread(target=client, args=(i,), daemon=True)
               for i in range(THREADS)]
    threads += [threading.Thread(target=reader, args=(i,), daemon=True) for i in (0, 1)]
    for t in threads:
        t.start()
    # a stalled upload (half a body, then nothing) and an idle keep-alive connection: the
    # server waits a little for the first (its drain) and does not wait for the second
    stalled = socket.create_connection(("127.0.0.1", srv.port))
    stalled.sendall(b"POST /ingest?name=stalled HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Length: 1000\r\n\r\n" + b"x" * 10)
    idle = socket.create_connection(("127.0.0.1", srv.port))
    idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    check(idle.recv(4096).startswith(b"HTTP/1.1 200"), "keep-alive healthz")
    time.sleep(1.5)
    inflight_ok = sum(1 for r in results for x in r if x[2] == 200)
    t_term[0] = time.time()
    rc, secs = srv.stop(timeout=EXIT_WITHIN + 10)
    t_exit = time.time()
    stop.set()
    for t in threads:
        t.join(REQ_TIMEOUT + 5)
        check(not t.is_alive(), "a client thread is still waiting %d s after SIGTERM"
              % (time.time() - t_term[0]))
    check(rc == 0, "server exit status %s after SIGTERM" % rc)
    for sock in (stalled, idle):
        sock.settimeout(5)
        try:
            rest = sock.recv(4096)
        except OSError:
            rest = b""
        check(not rest.startswith(b"HTTP/1.1 200"), "a connection left open was answered 200")
        sock.close()
    check(secs < EXIT_WITHIN, "server took %.1f s to exit after SIGTERM" % secs)
    slow = [x for r in results for x in r if x[3] > REQ_TIMEOUT - 1]
    check(not slow, "%d requests hung (e.g. %s)" % (len(slow), slow[:2]))
    acked = sum(1 for r in results for x in r if x[2] == 200)
    # requests in flight when SIGTERM came: the server finishes them (answered 200)
    inflight = [x for r in results for x in r if x[4] < t_term[0] < x[4] + x[3]]
    inflight_acked = sum(1 for x in inflight if x[2] == 200)
    # requests sent while the server was stopping (refused: it no longer accepts)
    stopping = [x for r in results for x in r if t_term[0] <= x[4] < t_exit]
    check(not read_errors, "reads during the pushes: %s" % read_errors[:3])
    check(len(reads) >= 10, "only %d reads during the pushes" % len(reads))
    # read your writes: a push answered 200 before a read began is in that read
    for i, t_read, fns in reads:
        done = {"p%d" % k for k, fmt, st, dur, t0 in results[i]
                if st == 200 and fmt == "folded" and t0 + dur < t_read}
        check(done <= fns, "a read of thread %d misses %d pushes acknowledged before it"
              % (i, len(done - fns)))
    # a request whose head arrives after SIGTERM is refused: 503, nothing stored
    other = [x for r in results for x in r if x[2] not in (200, None) and
             not (x[2] == 503 and x[4] + x[3] >= t_term[0])]
    check(not other, "pushes answered neither 200, a 503 while stopping nor a dropped "
          "connection: %s" % other[:3])
    check(inflight_ok > 20, "only %d pushes before SIGTERM" % inflight_ok)
    # requests running when SIGTERM came are finished and answered (the drain); only those
    # still waiting to be accepted may be refused, so most should be answered
    check(len(inflight) < 2 or inflight_acked >= 1,
          "none of the %d requests in flight at SIGTERM was answered" % len(inflight))

    # restart: every acknowledged push is there
    srv.start()
    missing = []
    stored_total = 0
    for i in range(THREADS):
        q = '{service_name="shut",thread="%d"}' % i
        tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query=q, type="cpu:samples",
                                                           format="tsv", **RANGE)).decode())
        stored = {int(f[1:]) for f in tsv if f.startswith("p")}
        for name in tsv:
            if name.startswith("p"):
                check(tsv[name] == (1, 1), "thread %d %s: %s" % (i, name, tsv[name]))
        sent = {k for k, fmt, st, _, _ in results[i] if fmt == "folded"}
        ok = {k for k, fmt, st, _, _ in results[i] if fmt == "folded" and st == 200}
        missing += ["t%d/p%d" % (i, k) for k in sorted(ok - stored)]
        check(stored <= sent, "thread %d: stored pushes never sent: %s" % (i, stored - sent))
        # each push is one sample over its own second: a step of 1 s at rate 1/s
        tl = srv.json("/api/v1/timeline", dict(query=q, type="cpu:samples", step="1s",
                                               **RANGE))
        vals = [v for s in tl["series"] for v in s["values"] if v is not None]
        check(len(vals) == len(stored) and all(v == 1 for v in vals),
              "thread %d: timeline steps %s, render has %d pushes" % (i, vals, len(stored)))
        stored_total += len(stored)
        # the big pushes: one series each (k label), present when acknowledged
        for k, fmt, st, _, _ in results[i]:
            if fmt == "pprof" and st == 200:
                got = srv.json("/api/v1/series", dict(query='{service_name="shutbig",'
                                                      'thread="%d",k="%d"}' % (i, k),
                                                      **RANGE))
                if len(got) != 1:
                    missing.append("t%d/big%d" % (i, k))
    check(not missing, "%d acknowledged pushes are missing after the restart: %s"
          % (len(missing), missing[:10]))
    rc, _ = srv.stop()
    check(rc == 0, "second exit status %s" % rc)
    print("%d consistent reads during the pushes" % len(reads))
    print("%d pushes answered 200, all stored (%d small ones found); of the %d in flight at "
          "SIGTERM %d were answered 200; %d sent while stopping; exit 0 in %.2f s"
          % (acked, stored_total, len(inflight), inflight_acked, len(stopping), secs))


main_wrapper(main)
