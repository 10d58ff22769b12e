"""store_full_disk.py - the embedded store on a full disk: a small tmpfs as the data directory.
Usage: store_full_disk.py TMPDIR MOUNTPOINT (env: SCORCH). See store_full_disk.sh."""
import errno
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, fail, main_wrapper, parse_tsv_rows  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP, SMALL = sys.argv[1], sys.argv[2]
DATA = os.path.join(SMALL, "data")
DB = os.path.join(DATA, "scorch.db")
FILLER = os.path.join(SMALL, "filler")  # another program's file taking the last bytes
NOW = int(time.time())
RANGE = {"type": "cpu:samples", "query": "{}", "from": str(NOW - 3000), "until": str(NOW + 60),
         "format": "tsv"}
FILL_MAX = 2800  # push k is at NOW - 2900 + k: 12 MiB fill up before this many
STARTED = []
CONFIG = os.path.join(TMP, "scorch.yaml")
RETRY = 0.2  # storage.read_only_retry: how often a read-only store tries for writing
WRITABLE_LINE = "the store is writable"


def server():
    srv = Server(SCORCH, DATA, os.path.join(TMP, "server.log"), config=CONFIG,
                 extra=["--no-fsync"])
    STARTED.append(srv)
    return srv


def this_run_log(srv):
    """The server's stderr since it started (the log file is shared by every run)."""
    with open(srv.log, "rb") as f:
        return f.read().decode("utf-8", "replace").rsplit("---- start\n", 1)[-1]


def free_bytes():
    v = os.statvfs(SMALL)
    return v.f_bavail * v.f_frsize


def fill_up():
    """Takes every byte left on the disk, as a program writing a log would."""
    fd = os.open(FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while True:
            try:
                os.write(fd, b"\0" * 4096)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    finally:
        os.close(fd)
    check(free_bytes() == 0, "the filler left %d bytes free" % free_bytes())


def stored(srv):
    """{k} of the pushes stored: their leaf frames are f<k>_..."""
    rows = parse_tsv_rows(srv.ok("/api/v1/render", RANGE).decode())
    return {int(fn[1:].split("_")[0]) for fn in rows if fn.startswith("f")}


def push(srv, k, blob):
    return srv.request("POST", "/ingest", {
        "name": "full.cpu", "format": "folded", "from": str(NOW - 2900 + k),
        "until": str(NOW - 2899 + k)}, body=("main;f%d_%s %d\n" % (k, blob, k + 1)).encode(),
        timeout=30)


def integrity():
    r = subprocess.run(["sqlite3", DB, "PRAGMA integrity_check;"], capture_output=True,
                       timeout=60)
    return r.stdout.decode().strip() or r.stderr.decode().strip()


def files():
    return {n: os.path.getsize(os.path.join(DATA, n)) for n in sorted(os.listdir(DATA))}


def refused_full(srv, k, blob, what):
    """A push on the full disk: 507 naming the full disk (nothing stored)."""
    st, _, data = push(srv, k, blob)
    check(st == 507 and b"full" in data and b"disk" in data,
          "%s: a push answered %d: %r" % (what, st, data[:200]))
    return data.decode().strip()


def read_only_checks(srv, acked, blob, what):
    """A server that opened its store read-only: it says so on stderr, /healthz and /metrics,
    answers from everything stored, and refuses pushes with 507."""
    log = srv.tail(10)
    check("read-only" in log and "full" in log, "%s: no stderr line says the store is "
          "read-only:\n%s" % (what, log))
    st, _, body = srv.get("/healthz")
    check(st == 200 and body.startswith(b"degraded:") and b"full" in body,
          "%s: /healthz: %d %r" % (what, st, body[:200]))
    check(srv.metrics().get("scorch_store_read_only") == 1, "%s: scorch_store_read_only is "
          "not 1" % what)
    got = stored(srv)
    check(got == acked, "%s: %d of %d acknowledged pushes read, %d unknown" % (
        what, len(got & acked), len(acked), len(got - acked)))
    msg = refused_full(srv, FILL_MAX + 50, blob, what)
    check(b"read-only" in msg.encode(), "%s: the 507 does not say read-only: %s" % (what, msg))
    return msg


class Reader(threading.Thread):
    """Queries all along, as users would while space is freed: every answer must be 200 and
    hold every push acknowledged before, and nothing else but the pushes made since."""

    def __init__(self, srv, before, candidates):
        super().__init__(daemon=True)
        self.srv, self.before, self.candidates = srv, set(before), set(candidates)
        self.done, self.n, self.bad = threading.Event(), 0, []

    def run(self):
        while not self.done.is_set() and len(self.bad) < 5:
            try:
                st, _, data = self.srv.get("/api/v1/render", RANGE, timeout=30)
                self.n += 1
                if st != 200:
                    self.bad.append("answered %d: %r" % (st, data[:200]))
                    continue
                rows = parse_tsv_rows(data.decode())
            except Exception as e:  # in a thread: finish() reports it
                self.bad.append("a query failed: %r" % e)
                continue
            got = {int(fn[1:].split("_")[0]) for fn in rows if fn.startswith("f")}
            if not self.before <= got <= self.before | self.candidates:
                self.bad.append("%d acknowledged pushes missing, %d unknown" % (
                    len(self.before - got), len(got - self.before - self.candidates)))

    def finish(self, what):
        self.done.set()
        self.join(60)
        check(not self.is_alive(), "%s: a query did not come back" % what)
        check(self.n > 0 and not self.bad, "%s: %d queries while the store turned writable: "
              "%s" % (what, self.n, self.bad))
        return self.n


def writable_again(srv, acked, blob, k, free_space, what):
    """Space is freed under a running read-only server, queries running all along (four at a
    time, so the switch often finds one in flight): within a few retries it takes pushes
    again (push k, tried until acknowledged), /healthz and /metrics say so, one stderr line
    says so, and every push acknowledged before is still there. Before that, the retries on
    the disk still full change nothing and log nothing."""
    time.sleep(3 * RETRY)  # three retries with the disk still full
    refused_full(srv, k, blob, what + ", retried on the full disk")
    readers = [Reader(srv, acked, {k, k + 1, k + 2}) for _ in range(4)]
    for reader in readers:
        reader.start()
    free_space()
    t0 = time.time()
    deadline, tries = t0 + 30, 0
    while True:
        st, _, data = push(srv, k, blob)
        tries += 1
        if st == 200:
            break
        check(st == 507, "%s: while space came back, a push answered %d: %r"
              % (what, st, data[:200]))
        check(time.time() < deadline, "%s: still read-only 30 s after space was freed (%d "
              "pushes tried): %s" % (what, tries, data[:200]))
        time.sleep(RETRY / 4)
    took = time.time() - t0
    acked.add(k)
    # a few pushes on the writable store beside the queries, then the readers stop
    for j in (1, 2):
        st, _, data = push(srv, k + j, blob)
        check(st == 200, "%s: a push after the store turned writable: %d %r"
              % (what, st, data[:200]))
        acked.add(k + j)
    queries = sum(reader.finish(what) for reader in readers)
    got = stored(srv)
    check(got == acked, "%s: writable again: %d of %d acknowledged pushes read, %d unknown" % (
        what, len(got & acked), len(acked), len(got - acked)))
    st, _, body = srv.get("/healthz")
    check(st == 200 and body == b"ok\n", "%s: writable again, /healthz: %d %r" % (what, st, body))
    check(srv.metrics().get("scorch_store_read_only") == 0, "%s: writable again, "
          "scorch_store_read_only is not 0" % what)
    log = this_run_log(srv)
    check(log.count(WRITABLE_LINE) == 1 and log.count("read-only") == 1,
          "%s: stderr should say read-only once and writable once:\n%s" % (what, log))
    return "a push acknowledged %.2f s after space was freed (retry every %.1f s, %d tries); " \
        "%d queries meanwhile, all complete" % (took, RETRY, tries, queries)


def run():
    with open(CONFIG, "w") as f:
        f.write("storage:\n  read_only_retry: %dms\n" % int(RETRY * 1000))
    blob = os.urandom(1 << 10).hex()  # incompressible frame names fill the disk fast
    # 1. pushes until the disk is full, then kill -9
    srv = server().start()
    acked, statuses = set(), {}
    for k in range(FILL_MAX):
        st, _, data = push(srv, k, blob)
        statuses[st] = statuses.get(st, 0) + 1
        if st == 200:
            acked.add(k)
        elif st in (507, 503):
            check(b"space" in data or b"full" in data, "full disk answer: %r" % data[:200])
            if statuses[st] >= 5:
                break
        else:
            fail("a push on a full disk answered %d: %r" % (st, data[:200]))
    check(statuses.get(507, 0) >= 1, "the disk never filled: %s" % statuses)
    check(srv.get("/api/v1/render", RANGE)[0] == 200, "a query on a full disk failed")
    srv.kill()
    check(integrity() == "ok", "integrity after the disk filled: %s" % integrity())
    print("filled: %d pushes stored, then %s; %d bytes free; %s"
          % (len(acked), {k: v for k, v in statuses.items() if k != 200}, free_bytes(), files()))

    # 2. restart on the disk full to the last byte, space not freed: it serves what is stored
    srv = server().start()
    got = stored(srv)
    check(got == acked, "restarted on the full disk: %d of %d acknowledged pushes, %d unknown"
          % (len(got & acked), len(acked), len(got - acked)))
    msg = refused_full(srv, FILL_MAX + 51, blob, "restarted on the full disk")
    mode = "read-only" if "read-only" in msg else "writable"
    srv.kill()
    print("restarted on the full disk (%s): every acknowledged push read; a push: 507 %s"
          % (mode, msg))

    # 3. a copy of the store without its WAL index (-shm), the WAL not checkpointed, on a
    # disk full to the last byte: read-only, the WAL read into memory
    os.unlink(DB + "-shm")
    fill_up()
    wal = files().get("scorch.db-wal", 0)
    check(wal > 32, "no WAL to read (%d bytes): the case is not made" % wal)
    srv = server().start()
    msg = read_only_checks(srv, acked, blob, "WAL without its index")
    print("a WAL of %d bytes without its -shm on a full disk: read-only, every acknowledged "
          "push read (the WAL's too), stderr, /healthz and /metrics say so; a push: 507 %s"
          % (wal, msg))

    # 4. space returns while it runs (the volume grows, the filler goes): writable again
    def grow():
        os.unlink(FILLER)
        r = subprocess.run(["mount", "-o", "remount,size=24m", SMALL], capture_output=True)
        check(r.returncode == 0, "cannot grow the tmpfs: %s" % r.stderr.decode().strip())

    how = writable_again(srv, acked, blob, FILL_MAX + 4, grow, "WAL without its index")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    check(integrity() == "ok", "integrity after turning writable: %s" % integrity())
    print("space back while it ran: writable again, /healthz ok, metric 0, one stderr line; "
          "%s; integrity ok" % how)

    # 5. a normal restart with room
    srv = server().start()
    st, _, body = srv.get("/healthz")
    check(st == 200 and body == b"ok\n", "with space again, /healthz: %d %r" % (st, body))
    for k in (FILL_MAX + 1, FILL_MAX + 2):
        st, _, data = push(srv, k, blob)
        check(st == 200, "with space again, a push: %d %r" % (st, data[:200]))
        acked.add(k)
    check(stored(srv) == acked, "with space again, the store lacks pushes")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    check(integrity() == "ok", "integrity with space again: %s" % integrity())
    left = files()
    print("space back: /healthz ok, pushes stored; a clean stop leaves %s" % left)

    # 6. the disk fills while scorch is down (its WAL checkpointed and gone): read-only, the
    # database read as an immutable file; then the filler goes while it runs
    fill_up()
    srv = server().start()
    read_only_checks(srv, acked, blob, "a checkpointed store on a full disk")
    how = writable_again(srv, acked, blob, FILL_MAX + 7, lambda: os.unlink(FILLER),
                         "a checkpointed store on a full disk")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    check(integrity() == "ok", "integrity after turning writable: %s" % integrity())
    print("the disk filled while scorch was down (files %s): read-only, every acknowledged "
          "push read; space back while it ran: writable again, %s; integrity ok" % (left, how))

    # 7. a normal restart, and nothing was lost or corrupted
    srv = server().start()
    st, _, data = push(srv, FILL_MAX + 3, blob)
    check(st == 200, "space back again, a push: %d %r" % (st, data[:200]))
    acked.add(FILL_MAX + 3)
    check(stored(srv) == acked, "space back again: the store lacks pushes")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    check(integrity() == "ok", "integrity at the end: %s" % integrity())
    print("restarted: %d pushes stored, integrity ok" % len(acked))


def main():
    try:
        run()
    finally:
        for srv in STARTED:
            srv.kill()


main_wrapper(main)
