"""store_bg_errors.py TMPDIR - see store_bg_errors.sh (env: SCORCH)."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
DATA = os.path.join(TMP, "data")
LOG = os.path.join(TMP, "server.log")
METRIC = "scorch_store_background_errors_total"
LINE = "the store's background work hit an error"


def this_run_log():
    with open(LOG, "rb") as f:
        return f.read().decode("utf-8", "replace").rsplit("---- start\n", 1)[-1]


def main():
    now = int(time.time())
    srv = Server(SCORCH, DATA, LOG, extra=["--no-fsync"]).start()
    # an hour ago, so their ten minutes are due at the first round
    for name in ("bad", "good"):
        srv.push(("main;%s 1\n" % name).encode(), name=name + ".cpu", format="folded", **{
            "from": str(now - 3600), "until": str(now - 3590)})
    check(srv.metrics().get(METRIC) == 0, "%s is not 0 on a sound store" % METRIC)
    check(srv.stop()[0] == 0, "the server did not exit cleanly")

    db = sqlite3.connect(os.path.join(DATA, "scorch.db"))
    broken = db.execute("UPDATE profiles SET block = x'ff' WHERE series_id = (SELECT id FROM "
                        "series WHERE labels LIKE '%bad%')").rowcount
    db.commit()
    db.close()
    check(broken == 1, "%d profiles broken, not 1" % broken)

    srv = Server(SCORCH, DATA, LOG, extra=["--no-fsync"]).start()
    try:
        deadline = time.time() + 60
        n = 0
        while time.time() < deadline and n < 1:
            time.sleep(0.5)
            n = srv.metrics().get(METRIC, 0)
        check(n == 1, "%s is %s after the compaction's first round, not 1" % (METRIC, n))
        time.sleep(0.3)  # the server's loop looks every 100 ms
        lines = [ln for ln in this_run_log().splitlines() if LINE in ln]
        check(len(lines) == 1, "stderr said it %d times, not once" % len(lines))
        check("damaged profile" in lines[0] and "sample block codec" in lines[0],
              "the line does not say why: %s" % lines[0])
        # compaction went on past the bad block: both ten minutes done (their hour and day
        # have not ended yet), the good one's built
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(DATA, "scorch.db"), uri=True)
        dirty = db.execute("SELECT count(*) FROM dirty WHERE res = 600").fetchone()[0]
        rollups = db.execute("SELECT count(*) FROM rollups WHERE res = 600").fetchone()[0]
        db.close()
        check(dirty == 0 and rollups == 1, "after the round: %d ten minutes to do, %d built, not "
              "0 and 1" % (dirty, rollups))
        # the server goes on: a new push and a query of it answer
        srv.push(b"main;new 1\n", name="good.cpu", format="folded", **{
            "from": str(now), "until": str(now + 10)})
        body = srv.ok("/api/v1/render", {"query": '{service_name="good"}', "type": "cpu:samples",
                                         "from": str(now - 60), "until": str(now + 60),
                                         "format": "folded"}).decode()
        check("main;new 1" in body, "the new push is not served: %r" % body)
        # the damaged profile itself stays: a query that reads it raw (200 s: no whole
        # ten minutes to read from the rollups) says so, as the server's fault (500)
        st, _, data = srv.request("GET", "/api/v1/render", {
            "query": '{service_name="bad"}', "type": "cpu:samples", "from": str(now - 3700),
            "until": str(now - 3500), "format": "folded"})
        check(st == 500 and b"damaged block" in data, "the damaged profile's query: %d %r, "
              "not a 500 naming the damaged block" % (st, data[:200]))
        print("store_bg_errors: counted and said once: %s" % lines[0].strip())
    finally:
        srv.stop()


if __name__ == "__main__":
    main_wrapper(main)
