"""server_drain.py - what SIGTERM does to open connections and requests begun before it.
Usage: server_drain.py TMPDIR (env: SCORCH). See server_drain.sh."""
import http.client
import os
import re
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, deaf_h2c_peer, enc, grpc_port,  # noqa: E402
                           main_wrapper, parse_tsv_rows, read_answer)

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
THREADS = 4
DRAIN = 2          # server.shutdown_timeout, seconds
SETTLE = 1.0       # after SIGTERM, by when the server has surely seen it
NOW = int(time.time())
# push k is dated BASE + k: a thread pushes a few thousand in the run on a quiet machine, so
# the range reaches to the server's max_ahead (1 h; a push past it would be refused, and said)
BASE = NOW - 3600
RANGE = {"from": str(BASE - 60), "until": str(NOW + 3600)}


def push_target(name, k):
    return "/ingest?" + enc({"name": name, "format": "folded", "from": str(BASE + k),
                             "until": str(BASE + k + 1)})


def keepalive_client(port, i, stop, out):
    """Pushes p<k> of thread i one after another on one kept-alive connection (reconnecting
    when the server closes it): out gets (k, time sent, status or None, headers, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    k = 0
    while not stop.is_set():
        k += 1
        t0 = time.time()
        try:
            c.request("POST", push_target('drain{thread="%d"}' % i, k),
                      body=b"main;t%d;p%d 1\n" % (i, k))
            r = c.getresponse()
            data = r.read()
            out.append((k, t0, r.status, {h.lower(): v for h, v in r.getheaders()}, data))
        except (OSError, http.client.HTTPException):
            out.append((k, t0, None, {}, b""))
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
            time.sleep(0.02)


def raw_push(port, name, body, sent):
    """A socket that has sent a push's head and the first `sent` bytes of its body."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
               % (push_target(name, 0), len(body))).encode() + body[:sent])
    return s


def main():
    cfg = os.path.join(TMP, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write("server: {shutdown_timeout: %ds}\notlp: {grpc_listen: 127.0.0.1:0}\n" % DRAIN)
    srv = Server(SCORCH, os.path.join(TMP, "data"), os.path.join(TMP, "server.log"),
                 config=cfg).start()
    try:
        run_all(srv)
    finally:
        srv.kill()


def run_all(srv):
    stop = threading.Event()
    results = [[] for _ in range(THREADS)]
    threads = [threading.Thread(target=keepalive_client, args=(srv.port, i, stop, results[i]),
                                daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    # an idle kept-alive connection, a push that will finish after SIGTERM, one that never
    probe = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=DRAIN + 10)
    probe.request("GET", "/healthz")
    r = probe.getresponse()
    r.read()
    check(r.status == 200 and not r.will_close, "the probe's connection is not kept alive")
    late_body = b"main;late 7\n" * 50
    late = raw_push(srv.port, "late", late_body, 100)
    stalled = raw_push(srv.port, "stalled", b"main;stalled 9\n" * 50, 100)
    # and a gRPC peer that never reads, its server thread stuck in a send: the drain must
    # not wait for it past its bound (it used to wait the 120 s idle limit)
    deaf = deaf_h2c_peer(grpc_port(srv))
    time.sleep(1.0)
    t_term = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(SETTLE)
    # a new request on the open connection: refused, told to go, not stored
    probe.request("POST", push_target("probe", 0), body=b"main;probe 5\n")
    r = probe.getresponse()
    pdata = r.read()
    check(r.status == 503 and b"shutting down" in pdata,
          "a push on a kept-alive connection %.1f s after SIGTERM: %d %r"
          % (SETTLE, r.status, pdata[:200]))
    check((r.getheader("Connection") or "").lower() == "close",
          "the 503 of a stopping server lacks Connection: close")
    # the upload begun before SIGTERM ends now: answered and stored
    late.sendall(late_body[100:])
    lst, _, lbody = read_answer(late, DRAIN + 10)
    check(lst == 200, "an upload begun before SIGTERM and finished %.1f s after it: %s %r"
          % (SETTLE, lst, lbody[:200]))
    # the stalled one is cut at the end of the drain
    sst, _, _ = read_answer(stalled, DRAIN + 10)
    check(sst is None or sst >= 500, "a stalled upload was answered %s" % sst)
    try:
        rc = srv.proc.wait(DRAIN + 8)
    except Exception:
        check(False, "the server did not exit within %d s of SIGTERM" % (DRAIN + 8))
    secs = time.time() - t_term
    deaf.close()
    stop.set()
    for t in threads:
        t.join(20)
    srv.logf.close()
    check(rc == 0, "exit status %s after SIGTERM" % rc)
    check(secs < DRAIN + 4, "the server took %.1f s to exit (shutdown_timeout %d s)"
          % (secs, DRAIN))
    with open(srv.log, "rb") as f:
        log = f.read()
    check(re.search(rb"closing \d+ requests still in flight", log),
          "the stalled upload was not cut at shutdown_timeout")

    sent = [x for res in results for x in res]
    late_ok = [x for x in sent if x[1] > t_term + SETTLE and x[2] == 200]
    check(not late_ok, "%d pushes sent more than %.1f s after SIGTERM were served (e.g. "
          "thread push %d)" % (len(late_ok), SETTLE, late_ok[0][0] if late_ok else 0))
    for x in sent:
        if x[2] == 503:
            check(b"shutting down" in x[4] and x[3].get("connection", "").lower() == "close",
                  "a 503 while stopping: %r %r" % (x[3], x[4][:200]))
        else:
            check(x[2] in (200, None), "a push answered %s: %r" % (x[2], x[4][:200]))
    acked_before = sum(1 for x in sent if x[2] == 200 and x[1] < t_term)
    check(acked_before > 20, "only %d pushes before SIGTERM" % acked_before)

    # restart: stored is exactly what was answered 200
    srv.start()
    for i in range(THREADS):
        tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(
            query='{service_name="drain",thread="%d"}' % i, type="cpu:samples", format="tsv",
            **RANGE)).decode())
        stored = {int(f[1:]) for f in tsv if f.startswith("p")}
        acked = {x[0] for x in results[i] if x[2] == 200}
        check(stored == acked, "thread %d: stored but never answered %s, answered but lost %s"
              % (i, sorted(stored - acked)[:5], sorted(acked - stored)[:5]))
    for name, want in (("late", 350), ("probe", 0), ("stalled", 0)):
        tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(
            query='{service_name="%s"}' % name, type="cpu:samples", format="tsv",
            **RANGE)).decode())
        total = sum(v[0] for v in tsv.values())
        check(total == want, "%s: %d samples stored, want %d" % (name, total, want))
    rc, _ = srv.stop()
    check(rc == 0, "second exit status %s" % rc)
    n503 = sum(1 for x in sent if x[2] == 503)
    print("%d pushes on kept-alive connections: %d answered 200 (all stored, nothing else "
          "stored), %d refused 503 while stopping, %d dropped; none served %.1f s after "
          "SIGTERM; exit 0 in %.2f s (shutdown_timeout %d s)"
          % (len(sent), sum(1 for x in sent if x[2] == 200), n503,
             sum(1 for x in sent if x[2] is None), SETTLE, secs, DRAIN))


main_wrapper(main)
