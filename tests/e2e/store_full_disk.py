"""store_full_disk.py - the embedded store on a full disk: a small tmpfs as the data directory.
Usage: store_full_disk.py TMPDIR MOUNTPOINT (env: SCORCH). See store_full_disk.sh."""
import errno
import os
import subprocess
import sys
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


def server():
    srv = Server(SCORCH, DATA, os.path.join(TMP, "server.log"), extra=["--no-fsync"])
    STARTED.append(srv)
    return srv


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


def run():
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
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    print("a WAL of %d bytes without its -shm on a full disk: read-only, every acknowledged "
          "push read (the WAL's too), stderr, /healthz and /metrics say so; a push: 507 %s"
          % (wal, msg))

    # 4. space returns (the volume grows, the filler goes): a normal restart
    os.unlink(FILLER)
    r = subprocess.run(["mount", "-o", "remount,size=24m", SMALL], capture_output=True)
    check(r.returncode == 0, "cannot grow the tmpfs: %s" % r.stderr.decode().strip())
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

    # 5. the disk fills while scorch is down (its WAL checkpointed and gone): read-only, the
    # database read as an immutable file
    fill_up()
    srv = server().start()
    msg = read_only_checks(srv, acked, blob, "a checkpointed store on a full disk")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    print("the disk filled while scorch was down (files %s): read-only, every acknowledged "
          "push read; a push: 507" % left)

    # 6. space returns again: a normal restart, and nothing was lost or corrupted
    os.unlink(FILLER)
    srv = server().start()
    st, _, data = push(srv, FILL_MAX + 3, blob)
    check(st == 200, "space back again, a push: %d %r" % (st, data[:200]))
    acked.add(FILL_MAX + 3)
    check(stored(srv) == acked, "space back again: the store lacks pushes")
    rc, _ = srv.stop()
    check(rc == 0, "exit status %s" % rc)
    check(integrity() == "ok", "integrity at the end: %s" % integrity())
    print("space back again: a normal restart, %d pushes stored, integrity ok" % len(acked))


def main():
    try:
        run()
    finally:
        for srv in STARTED:
            srv.kill()


main_wrapper(main)
