"""crash_rounds.py - kill -9 while pushing, scraping and querying (a full disk: store_full_disk):
every acknowledged push kept, and enough acknowledged and answered that this means something."""
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, free_ports, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
TMP = sys.argv[1]
ROUNDS = 20
NOW = int(time.time())
# what the rounds must have done for "nothing lost" to mean anything: pushes acknowledged
# in every round (each runs 0.3 to 1.5 s of three pushers: 40 to 290 on a loaded 2-core
# machine), in all (2,391 there), and queries answered while pushing (551 there)
MIN_ACKED_ROUND = 5
MIN_ACKED = 10 * ROUNDS
MIN_ANSWERED = ROUNDS // 2


class Pushers:
    """Threads pushing distinct folded profiles; acked[(round, worker, k)] for every 200;
    a thread querying them meanwhile, answered counts its 200s."""

    def __init__(self, srv, round_no, n=3):
        self.srv, self.round, self.stop = srv, round_no, False
        self.acked, self.lock = [], threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(n)]
        self.answered = 0

    def run(self, i):
        k = 0
        while not self.stop:
            t = NOW - 3000 + self.round * 100 + i * 30 + (k % 30)
            name = "crash.cpu{r=\"%d\",w=\"%d\",k=\"%d\"}" % (self.round, i, k)
            body = b"main;round%d;w%d;k%d %d\n" % (self.round, i, k, k + 1)
            k += 1
            try:
                st, _, _ = self.srv.request("POST", "/ingest", {
                    "name": name, "format": "folded", "from": str(t), "until": str(t + 1)},
                    body=body, timeout=5)
            except OSError:
                continue
            if st == 200:
                with self.lock:
                    self.acked.append((self.round, i, k - 1))

    def query(self):
        while not self.stop:
            try:
                st, _, _ = self.srv.request("GET", "/api/v1/render", {
                    "type": "cpu:samples", "query": '{service_name="crash"}',
                    "from": str(NOW - 4000), "until": str(NOW + 60), "format": "tsv"},
                    timeout=5)
            except OSError:
                continue
            if st == 200:
                self.answered += 1

    def start(self):
        for t in self.threads:
            t.start()
        self.q = threading.Thread(target=self.query, daemon=True)
        self.q.start()

    def join(self):
        self.stop = True
        for t in self.threads + [self.q]:
            t.join(10)


def stored(srv):
    """{(round, worker, k)} of every stored push: its leaf frame is k<k>, under w<i> under
    round<r>, read from the folded stacks of all of them."""
    out = set()
    folded = srv.ok("/api/v1/render", {"type": "cpu:samples", "query": '{service_name="crash"}',
                                        "from": str(NOW - 4000), "until": str(NOW + 60),
                                        "format": "folded"}).decode()
    for line in folded.splitlines():
        stack = line.rsplit(" ", 1)[0].split(";")
        if len(stack) == 4 and stack[1].startswith("round"):
            out.add((int(stack[1][5:]), int(stack[2][1:]), int(stack[3][1:])))
    return out


def integrity(data):
    r = subprocess.run(["sqlite3", os.path.join(data, "scorch.db"), "PRAGMA integrity_check;"],
                       capture_output=True, timeout=60)
    return r.stdout.decode().strip()


def crash_rounds():
    data = os.path.join(TMP, "data")
    tport = free_ports(1)[0]
    target = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/e2e/fake_pprof_target.py"),
                               "%d=ok" % tport], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cfg = os.path.join(TMP, "scrape.yaml")
    with open(cfg, "w") as f:
        f.write("scrape_configs:\n  - job_name: fake\n    scrape_interval: 1s\n"
                "    profiles: [heap, goroutine, allocs]\n    targets: [\"127.0.0.1:%d\"]\n" % tport)
    all_acked, reopen, per_round, answered = set(), [], [], 0
    rnd = random.Random(7)
    try:
        for rno in range(ROUNDS):
            t0 = time.time()
            srv = Server(SCORCH, data, os.path.join(TMP, "server.log"), cfg).start()
            reopen.append(time.time() - t0)
            # what earlier rounds acknowledged is all there
            have = stored(srv)
            missing = all_acked - have
            check(not missing, "round %d: %d acknowledged pushes lost, e.g. %s"
                  % (rno, len(missing), sorted(missing)[:3]))
            p = Pushers(srv, rno)
            p.start()
            time.sleep(0.3 + rnd.random() * 1.2)
            srv.proc.kill()  # SIGKILL, mid-everything
            srv.proc.wait()
            p.join()
            all_acked |= set(p.acked)
            per_round.append(len(p.acked))
            answered += p.answered
            check(len(p.acked) >= MIN_ACKED_ROUND, "round %d: only %d pushes acknowledged"
                  % (rno, len(p.acked)))
            check(integrity(data) == "ok", "round %d: integrity check: %s" % (rno, integrity(data)))
        check(len(all_acked) >= MIN_ACKED, "only %d pushes acknowledged in %d rounds"
              % (len(all_acked), ROUNDS))
        check(answered >= MIN_ANSWERED, "only %d queries answered in %d rounds"
              % (answered, ROUNDS))
        srv = Server(SCORCH, data, os.path.join(TMP, "server.log"), cfg).start()
        missing = all_acked - stored(srv)
        check(not missing, "after the last round: %d acknowledged pushes lost" % len(missing))
        scraped = srv.json("/api/v1/series", {"query": '{job="fake"}', "from": str(NOW - 600)})
        check(len(scraped) >= 1, "the scraper stored nothing across the rounds")
        srv.stop()
    finally:
        target.kill()
    print("crash: %d rounds of kill -9, %d acknowledged pushes all kept (%d to %d a round), "
          "%d queries answered, reopen max %.2f s"
          % (ROUNDS, len(all_acked), min(per_round), max(per_round), answered, max(reopen)))


def main():
    crash_rounds()


main_wrapper(main)
