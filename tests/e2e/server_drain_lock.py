"""server_drain_lock.py - a push still in its handler when SIGTERM's drain ends: held there by
the store's write lock, which this test takes from outside (python's sqlite3 on the store's
database, BEGIN IMMEDIATE), so the push's commit waits on it with no hook in the product.
Usage: server_drain_lock.py TMPDIR (env: SCORCH). See server_drain_lock.sh."""
import http.client
import os
import socket
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, enc, fail, main_wrapper, parse_tsv_rows,  # noqa: E402
                           read_answer)

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
DRAIN = 1      # server.shutdown_timeout, seconds
BUSY = 10      # how long the store waits for another process's lock (SQ_BUSY_NS)
MARGIN = 15    # for a loaded machine
PROBES = 60    # requests begun before SIGTERM that tell when the drain's end has come
NOW = int(time.time())
RANGE = {"from": str(NOW - 3600), "until": str(NOW + 60)}


def wait_for(what, cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    fail("%s: not within %d s" % (what, timeout))


def push_path(name, t):
    return "/ingest?" + enc({"name": name, "format": "folded", "from": str(t),
                             "until": str(t + 1)})


class Lock:
    """The store's write lock, held by this process until release()."""

    def __init__(self, data):
        self.db = sqlite3.connect(os.path.join(data, "scorch.db"), isolation_level=None,
                                  timeout=30)
        self.db.execute("BEGIN IMMEDIATE")

    def release(self):
        self.db.execute("ROLLBACK")
        self.db.close()


class Push(threading.Thread):
    """One push on its own connection; status, body and when it was answered."""

    def __init__(self, srv, name, t, value):
        super().__init__(daemon=True)
        self.port, self.path, self.body = srv.port, push_path(name, t), b"main;%s %d\n" % (
            name.encode(), value)
        self.status, self.data, self.at = None, b"", None
        self.start()

    def run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3 * BUSY + MARGIN)
        try:
            c.request("POST", self.path, body=self.body)
            r = c.getresponse()
            self.status, self.data = r.status, r.read()
        except (OSError, http.client.HTTPException) as e:
            self.data = repr(e).encode()
        self.at = time.time()


def in_handler(srv):
    """A push is between its admission and its answer (the ingest budget it holds)."""
    return srv.metrics().get("scorch_ingest_admitted_bytes", 0) > 0


def healthz_probes(srv, n):
    """Sockets that sent a GET /healthz's head announcing a 1-byte body, not the byte: begun
    now, handled when the byte comes. 200 then means the drain's end has not come (a handler
    still starts), 503 that it has."""
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n")
        out.append(s)
    return out


def wait_drain_end(probes, t_term):
    """Returns once a request begun before SIGTERM is refused: no handler starts any more."""
    time.sleep(max(0.0, t_term + DRAIN - time.time()))
    for i, s in enumerate(probes):
        s.sendall(b"x")
        st, _, body = read_answer(s, 3 * BUSY)
        if st == 503:
            check(b"shutting down" in body, "a probe at the drain's end: %r" % body[:200])
            return i
        check(st == 200, "a probe before the drain's end: %s %r" % (st, body[:200]))
        time.sleep(0.25)
    fail("the drain had not ended %.1f s after SIGTERM (shutdown_timeout %d s)"
         % (time.time() - t_term, DRAIN))


def kept_alive(srv):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=3 * BUSY + MARGIN)
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    check(r.status == 200 and not r.will_close, "the kept-alive connection is not kept alive")
    return c


def samples(srv, name):
    tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(
        query='{service_name="%s"}' % name, type="cpu:samples", format="tsv", **RANGE)).decode())
    return sum(v[0] for v in tsv.values())


def nprofiles(srv, name):
    return len(srv.json("/api/v1/profiles", dict(
        query='{service_name="%s"}' % name, type="cpu:samples", **RANGE))["profiles"])


def wait_exit(srv, t_term, bound, what):
    try:
        rc = srv.proc.wait(max(1.0, t_term + bound - time.time()))
    except Exception:
        srv.kill()
        fail("%s: the server did not exit within %d s of SIGTERM" % (what, bound))
    srv.logf.close()
    check(rc == 0, "%s: exit status %s after SIGTERM" % (what, rc))
    return time.time() - t_term


def released_in_time(srv, data):
    """(1) The lock goes after the drain's end, before the push's own bound: it is answered
    200 and stored once. (3) Meanwhile a push on a kept-alive connection is refused."""
    srv.start()
    srv.push(b"main;base 1\n", name="base", format="folded", **{"from": str(NOW - 100)})
    ka = kept_alive(srv)
    lock = Lock(data)
    probes = healthz_probes(srv, PROBES)
    t_push = time.time()
    held = Push(srv, "held", NOW - 90, 3)
    wait_for("the push reaching its handler", lambda: in_handler(srv), 30)
    t_term = time.time()
    srv.proc.terminate()
    used = wait_drain_end(probes, t_term)
    t_end = time.time()
    check(held.status is None and held.is_alive(),
          "the push under the lock was answered before the lock went: %s %r"
          % (held.status, held.data[:200]))
    # (3) a request on a connection kept open across SIGTERM: 503, told to go, not stored
    ka.request("POST", push_path("kept", NOW - 80), body=b"main;kept 5\n")
    r = ka.getresponse()
    kdata = r.read()
    check(r.status == 503 and b"shutting down" in kdata,
          "a push on a kept-alive connection after SIGTERM: %d %r" % (r.status, kdata[:200]))
    check((r.getheader("Connection") or "").lower() == "close",
          "the 503 of a stopping server lacks Connection: close")
    lock.release()
    t_release = time.time()
    held.join(3 * BUSY + MARGIN)
    check(held.status == 200, "the push whose commit waited past the drain's end: %s %r"
          % (held.status, held.data[:200]))
    secs = wait_exit(srv, t_term, DRAIN + BUSY + MARGIN, "lock released")
    for s in probes:
        s.close()
    srv.start()
    for name, want in (("base", 1), ("held", 3), ("kept", 0)):
        got = samples(srv, name)
        check(got == want, "after the restart, %s: %d samples stored, want %d" % (name, got, want))
    check(nprofiles(srv, "held") == 1, "the push under the lock is stored %d times"
          % nprofiles(srv, "held"))
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    print("(1) a push held by the store's lock %.1f s; the drain ended %.1f s after SIGTERM "
          "(%d probe(s) still served before it); the lock went %.1f s after that; the push "
          "was answered 200 %.2f s later and stored once; exit 0 %.1f s after SIGTERM"
          % (held.at - t_push, t_end - t_term, used, t_release - t_end, held.at - t_release,
             secs))
    print("(3) a push on a kept-alive connection after SIGTERM: 503 with Connection: close, "
          "not stored")


def held_too_long(srv, data):
    """(2) The lock outlasts the push's own bound: it is refused (503, naming the lock),
    nothing of it is stored, and the server exits with the lock still held."""
    srv.start()
    lock = Lock(data)
    t_push = time.time()
    refused = Push(srv, "refused", NOW - 70, 7)
    wait_for("the push reaching its handler", lambda: in_handler(srv), 30)
    t_term = time.time()
    srv.proc.terminate()
    # the push waits for the store (BUSY, twice when compaction held the writer first)
    refused.join(2 * BUSY + MARGIN)
    check(refused.at is not None, "the push under a held lock was not answered in %d s"
          % (2 * BUSY + MARGIN))
    check(refused.status == 503 and b"locked" in refused.data,
          "the push under a lock held past its bound: %s %r"
          % (refused.status, refused.data[:200]))
    secs = wait_exit(srv, t_term, DRAIN + 2 * BUSY + MARGIN, "lock held")
    # closing the store does not wait on the lock again (its last checkpoint, compaction)
    after = t_term + secs - refused.at
    check(after < BUSY, "the server exited %.1f s after the refused push's answer, the lock "
          "held (closing the store waited on it)" % after)
    lock.release()
    srv.start()
    for name, want in (("base", 1), ("held", 3), ("refused", 0)):
        got = samples(srv, name)
        check(got == want, "after the restart, %s: %d samples stored, want %d" % (name, got, want))
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    print("(2) a push under a lock held past its bound: 503 %r after %.1f s, nothing stored; "
          "exit 0 %.1f s after SIGTERM (%.2f s after the answer) with the lock still held "
          "(bound %d s)" % (refused.data.decode().strip(), refused.at - t_push, secs, after,
                            DRAIN + 2 * BUSY + MARGIN))


def main():
    cfg = os.path.join(TMP, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write("server: {shutdown_timeout: %ds}\n" % DRAIN)
    data = os.path.join(TMP, "data")
    srv = Server(SCORCH, data, os.path.join(TMP, "server.log"), config=cfg)
    try:
        released_in_time(srv, data)
        held_too_long(srv, data)
    finally:
        srv.kill()


main_wrapper(main)
