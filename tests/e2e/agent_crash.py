"""agent_crash.py - kill -9 `scorch agent` and `scorch record --push` at random moments.

For each: with the server down, the process is killed at random moments (some aimed at a
queue write: the moment a tmp-* file shows) and restarted each time; then the server comes
up and it is killed a few times more during the flush; then it flushes and stops on SIGTERM.
Asserted: it starts every time; every profile its -v log reported queued (the line comes
after the entry's fsync) has an entry file while the server is down and is in the store at
least once at the end, as is every entry file a kill left before it was logged; tmp-* files
a kill left are gone after the next start, which says so; damaged entry files planted between
rounds are dropped with a message naming them and block nothing; the queue directory ends
empty; the store passes SQLite's integrity check and a server opens it. Delivery is at least
once: the extra copies (a kill between the server's answer and the entry's removal) are
counted and printed, not failed. usage: agent_crash.py TMP [WHY_NO_RECORD]
"""
import collections
import os
import random
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, fail, free_ports, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
TMP = sys.argv[1]
NO_RECORD = sys.argv[2] if len(sys.argv) > 2 else ""
SEED = int(os.environ.get("AGENT_CRASH_SEED", "15"))
NS = 10**9
TARGETS = 6
# the push name's suffix -> the profile type (no suffix: allocs)
SUFFIX = {"inuse_space": "heap", "goroutines": "goroutine", "cpu": "cpu"}
procs = []


class Proc:
    """A scorch process whose stderr is appended to log."""

    def __init__(self, argv, log):
        self.log = log
        self.f = open(log, "ab")
        self.off = self.f.tell()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.f, stderr=self.f)
        procs.append(self.p)

    def text(self):
        """Its complete log lines so far."""
        with open(self.log, "rb") as f:
            f.seek(self.off)
            data = f.read()
        return data[:data.rfind(b"\n") + 1].decode("utf-8", "replace")

    def wait_for(self, pattern, count=1, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if len(re.findall(pattern, self.text(), re.M)) >= count:
                return
            if self.p.poll() is not None:
                fail("%s exited with %d before %d x %r:\n%s" % (
                    self.p.args[1], self.p.returncode, count, pattern, self.text()[-2000:]))
            time.sleep(0.02)
        fail("%d x %r not in the %s log within %d s:\n%s" % (
            count, pattern, self.p.args[1], timeout, self.text()[-2000:]))

    def kill(self):
        if self.p.poll() is not None:
            fail("%s exited by itself (%d) before its kill:\n%s" % (
                self.p.args[1], self.p.returncode, self.text()[-2000:]))
        self.p.kill()
        self.p.wait()
        self.f.close()

    def term(self, timeout=20):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            fail("%s did not exit within %d s of SIGTERM" % (self.p.args[1], timeout))
        self.f.close()
        check(rc == 0, "%s exited with %d on SIGTERM:\n%s" % (self.p.args[1], rc,
                                                               self.text()[-2000:]))


def line_key(line):
    """(instance, profile, from s, until s) of a 'queued' log line, as the push carries it."""
    f = dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv)
    frm = int(f["from"]) // NS
    until = max(frm, (int(f["until"]) + NS // 2) // NS)
    return (f["instance"] if f["job"] != "record" else "-", f["profile"], frm, until)


def queued(text):
    return collections.Counter(line_key(line) for line in text.splitlines()
                               if line.startswith("scorch: queued "))


def meta_key(meta):
    """The key of an entry's meta (the push's query string)."""
    q = urllib.parse.parse_qs(meta)
    name = q["name"][0]
    base = name.split("{", 1)[0]
    suffix = base.rpartition(".")[2] if "." in base else ""
    m = re.search(r'instance="([^"]*)"', name)
    return (m.group(1) if m else "-", SUFFIX.get(suffix, "allocs"), int(q["from"][0]),
            int(q["until"][0]))


def entries(qdir, ignore=()):
    """{file name: key} of the entry files (the process is not running). Each must be whole:
    a push renames a file into place only after its fsync."""
    out = {}
    for nm in sorted(os.listdir(qdir)):
        if not nm.endswith(".entry") or nm in ignore:
            continue
        with open(os.path.join(qdir, nm), "rb") as f:
            data = f.read()
        check(len(data) >= 28 and data[:8] == b"SCQUEUE1", "entry %s: no header" % nm)
        mlen, blen = struct.unpack_from("<IQ", data, 8)
        check(len(data) == 28 + mlen + blen, "entry %s is torn: %d bytes of %d" % (
            nm, len(data), 28 + mlen + blen))
        out[nm] = meta_key(data[20:20 + mlen].decode())
    return out


def tmp_files(qdir):
    """{tmp-* name: (inode, mtime, size)}."""
    out = {}
    for nm in os.listdir(qdir):
        if nm.startswith("tmp-"):
            try:
                st = os.stat(os.path.join(qdir, nm))
            except FileNotFoundError:
                continue
            out[nm] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


def wait_tmp(qdir, timeout):
    """Until a tmp-* file (a push being written) shows: True, or False after timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(nm.startswith("tmp-") for nm in os.listdir(qdir)):
            return True
    return False


def plant(qdir, good):
    """Damaged entries after the newest, as a torn write on a filesystem without ordering (or
    a bad disk) would leave them, and a stray tmp-* file: their names."""
    seq = int(good[:16], 16)
    with open(os.path.join(qdir, good), "rb") as f:
        data = bytearray(f.read())
    flipped = bytearray(data)
    flipped[25] ^= 0xFF  # in the meta: the checksum does not match
    names = []
    for k, body in enumerate([data[:len(data) // 2], b"", flipped]):
        nm = "%016x.entry" % (seq + 1 + k)
        with open(os.path.join(qdir, nm), "wb") as f:
            f.write(body)
        names.append(nm)
    with open(os.path.join(qdir, "tmp-7fffffffffffffff"), "wb") as f:
        f.write(data[:10])
    return names


def store_keys(data):
    """The store's profiles as keys, and its integrity check's answer."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data, "scorch.db"), uri=True)
    out = collections.Counter()
    for labels, profile, t, d in db.execute(
            "SELECT s.labels, k.profile, p.time_ns, p.duration_ns FROM profiles p "
            "JOIN series s ON s.id = p.series_id JOIN kinds k ON k.id = p.kind_id"):
        m = re.search(r'instance="([^"]*)"', labels)
        out[(m.group(1) if m else "-", profile, t // NS, (t + d) // NS)] += 1
    ok = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    return out, ok


def log_text(log):
    with open(log, "rb") as f:
        return f.read().decode("utf-8", "replace")


def down_rounds(what, start, qdir, log, rounds, plant_after, rnd, wait):
    """Kills with the server down, a kill wait seconds (uniform) after a start or, every
    other round, the moment a write shows after a part of that. (planted, aimed, tmp_left)."""
    leftover, planted, aimed, tmp_left = {}, [], 0, 0
    dead_url = "http://127.0.0.1:%d" % free_ports(1)[0]
    for i in range(rounds):
        p = start(dead_url)
        # what a kill left mid-write is gone, and said so
        now = tmp_files(qdir)
        stale = [nm for nm, v in leftover.items() if now.get(nm) == v]
        check(not stale, "%s round %d: tmp files a kill left survived the start: %s"
              % (what, i, stale))
        if leftover:
            check("unfinished writes (tmp-*) a crash left" in p.text(),
                  "%s round %d: the start did not say it removed %d unfinished writes:\n%s"
                  % (what, i, len(leftover), p.text()[-1500:]))
        if i % 2:
            time.sleep(rnd.uniform(wait[0], wait[1] / 2))
            aimed += wait_tmp(qdir, 1.5)
        else:
            time.sleep(rnd.uniform(*wait))
        p.kill()
        leftover = tmp_files(qdir)
        tmp_left += len(leftover)
        # nothing is sent: every profile logged as queued so far has its entry file
        files = entries(qdir, planted)
        missing = queued(log_text(log)) - collections.Counter(files.values())
        check(not missing, "%s round %d: %d profiles logged as queued have no entry file, "
              "e.g. %s" % (what, i, sum(missing.values()), sorted(missing)[:3]))
        if not planted and i >= plant_after and files:
            planted = plant(qdir, max(files))
            leftover.update({nm: v for nm, v in tmp_files(qdir).items()
                             if nm == "tmp-7fffffffffffffff"})
    return planted, aimed, tmp_left


def flush_rounds(what, start, qdir, url, kills, planted, rnd):
    """Kills during the flush, then a flush and a SIGTERM. The entries left after each kill."""
    left = []
    for _ in range(kills):
        n = len(entries(qdir, planted))
        p = start(url)
        # into the flush: after some of what is queued was sent
        p.wait_for(r"^scorch: sent ", count=rnd.randint(1, max(1, n // 4)))
        p.kill()
        left.append(len(entries(qdir, planted)))
    p = start(url)

    def queue():
        return set(nm for nm in os.listdir(qdir) if nm.endswith(".entry"))
    # everything from before is sent (what was planted dropped), then a clean stop
    before = queue()
    deadline = time.time() + 30
    while before & queue():
        check(time.time() < deadline, "%s: the queue did not flush: %d of %d entries left" % (
            what, len(before & queue()), len(before)))
        time.sleep(0.05)
    p.term()
    rest = sorted(os.listdir(qdir))
    check(rest in ([".lock"], []), "%s: the queue is not empty after the flush: %s"
          % (what, rest[:5]))
    return left


def crash_run(what, start, qdir, log, rounds_down, kills_up, plant_after, rnd, wait=(0.1, 1.5)):
    """The rounds for one process (start(url) returns a Proc that has started) and the checks
    of the store."""
    t0 = time.time()
    planted, aimed, tmp_left = down_rounds(what, start, qdir, log, rounds_down, plant_after,
                                           rnd, wait)
    # on disk now: every entry, logged or not (a kill between the rename and the line)
    files_down = collections.Counter(entries(qdir, planted).values())
    q_down = queued(log_text(log))
    t_down = time.time() - t0
    srv = Server(SCORCH, os.path.join(TMP, what + "-data"),
                 os.path.join(TMP, what + "-server.log"), extra=["--no-fsync"]).start()
    left = flush_rounds(what, start, qdir, "http://127.0.0.1:%d" % srv.port, kills_up, planted,
                        rnd)
    srv.stop()

    text = log_text(log)
    check("rejected" not in text, "%s: the server rejected profiles:\n%s" % (
        what, "\n".join(line for line in text.splitlines() if "rejected" in line)))
    damaged = re.findall(r"queue entry '[^']*/([0-9a-f]+\.entry)' is damaged \(([^)]*)\)", text)
    check(sorted(nm for nm, _ in damaged) == sorted(planted),
          "%s: dropped as damaged %s, planted %s" % (what, damaged, planted))
    stored, ok = store_keys(srv.data)
    check(ok == "ok", "%s: the store's integrity check: %s" % (what, ok))
    # every entry on disk after the outage (logged or not) and every profile logged as
    # queued since arrived
    q = queued(text)
    want = files_down + (q - q_down)
    missing = want - stored
    check(not missing, "%s: %d queued profiles are not in the store, e.g. %s" % (
        what, sum(missing.values()), sorted(missing)[:3]))
    extra = stored - want
    srv = Server(SCORCH, srv.data, srv.log).start()
    srv.ok("/api/v1/series", {"query": "{}", "from": str(int(time.time()) - 3600)})
    srv.stop()
    print("%s: %d kills with the server down (%d of %d aimed at a write caught one in "
          "progress; %d left a tmp-* file), %d during the flush (entries left after each: %s); "
          "%d profiles queued, all stored; %d extra copies (at least once: resent after a kill "
          "between the answer and the unlink, or queued unlogged during the flush: %s); %d planted "
          "damaged entries dropped (%s); the store checks ok (%.1f s down, %.1f s in all)" % (
              what, rounds_down, aimed, rounds_down // 2, tmp_left, kills_up, left,
              sum(q.values()), sum(extra.values()), sorted(extra)[:3] if extra else "none",
              len(damaged), "; ".join(sorted(set(w for _, w in damaged))), t_down,
              time.time() - t0))


def agent_part(rnd):
    ports = free_ports(TARGETS)
    fake = os.path.join(SRC, "tests/e2e/fake_pprof_target.py")
    target = subprocess.Popen([sys.executable, "-B", fake] + ["%d=ok" % p for p in ports],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    procs.append(target)
    # "ready PORT ...", the ports it listens on
    check(target.stdout.readline().split()[:1] == [b"ready"], "the fake target did not start")
    qdir, log, cfg = (os.path.join(TMP, n) for n in ("agent-queue", "agent.log", "agent.yaml"))

    def start(url):
        with open(cfg, "w") as f:
            f.write("scrape_configs:\n  - job_name: c\n    scrape_interval: 1s\n"
                    "    profiles: [heap, goroutine, allocs]\n    targets: [%s]\n"
                    "remote_write:\n  url: %s\n  queue_dir: %s\n  min_backoff: 50ms\n"
                    "  max_backoff: 200ms\n" % (", ".join('"127.0.0.1:%d"' % p for p in ports),
                                                url, qdir))
        p = Proc([SCORCH, "agent", "--config", cfg, "-v"], log)
        p.wait_for(r"^scorch: agent scraping ")
        return p

    crash_run("agent", start, qdir, log, 17, 3, 4, rnd)  # 20 kills, as the server's rounds


def record_part(rnd):
    if NO_RECORD:
        print("SKIP: record --push: %s" % NO_RECORD)
        return
    hot = subprocess.Popen([os.path.join(TMP, "hot"), "300"])
    procs.append(hot)
    qdir, log = os.path.join(TMP, "record-queue"), os.path.join(TMP, "record.log")

    def start(url):
        p = Proc([SCORCH, "record", "-p", str(hot.pid), "-F", "199", "--no-dwarf", "--push", url,
                  "--interval", "0.25", "--queue-dir", qdir, "--label", "service_name=crashrec",
                  "-v"], log)
        p.wait_for(r"^scorch: recording process ")
        return p

    crash_run("record", start, qdir, log, 17, 3, 3, rnd, (0.5, 2.0))  # 20 kills


def main():
    rnd = random.Random(SEED)
    print("seed %d (AGENT_CRASH_SEED)" % SEED)
    try:
        agent_part(rnd)
        record_part(rnd)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


main_wrapper(main)
