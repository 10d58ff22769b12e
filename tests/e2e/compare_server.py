"""The noise-aware diff over HTTP, on the heap of a leaking Go program scraped by the server."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, expect_error, fail, free_ports,  # noqa: E402
                           main_wrapper)

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
tmp = sys.argv[1]


def main():
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), GOFLAGS="-mod=mod",
               GOPROXY="off", GOCACHE=os.path.join(tmp, "gocache"))
    prog = os.path.join(tmp, "prog")
    subprocess.run(["go", "build", "-o", prog, "."], cwd=os.path.join(SRC, "tests/data/compareprog"),
                   env=env, check=True)
    port = free_ports(1)[0]
    target = subprocess.Popen([prog, "-serve", "127.0.0.1:%d" % port],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cfg = os.path.join(tmp, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write("scrape_configs:\n  - job_name: leaky\n    scrape_interval: 1s\n"
                "    profiles: [heap]\n    targets: [\"127.0.0.1:%d\"]\n" % port)
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"), cfg,
                 ["--no-fsync"])
    try:
        srv.start()
        t0 = time.time()
        # scrape for 16 s: the first 6 s are the base, the last 6 s the new side
        deadline = t0 + 30
        while True:
            series = srv.json("/api/v1/timeline", {"type": "heap:inuse_space",
                                                   "query": '{service_name="leaky"}',
                                                   "from": str(int(t0) - 1), "step": "1s"})
            n = sum(1 for v in (series["series"][0]["values"] if series["series"] else []) if v)
            if n >= 16:
                break
            if time.time() > deadline:
                fail("only %d heap profiles scraped in 30 s" % n)
            time.sleep(0.5)
        t1 = time.time()
        q = '{service_name="leaky"}'
        params = {"type": "heap:inuse_space", "base_query": q, "query": q,
                  "base_from": str(int(t0) - 1), "base_until": str(int(t0) + 6),
                  "from": str(int(t1) - 7), "until": str(int(t1) + 1)}
        d = srv.json("/api/v1/diff", dict(params, format="json"))
        check(d["method"] == "replicates", "method: %s" % d["method"])
        check(d["base_profiles"] >= 4 and d["profiles"] >= 4,
              "replicates: %d, %d" % (d["base_profiles"], d["profiles"]))
        check(d["metric"] == "average", "a gauge compares its averages: %s" % d["metric"])
        rows = {r["function"]: r for r in d["rows"]}
        leak, steady = rows.get("main.leak"), rows.get("main.steady")
        check(leak is not None and steady is not None, "rows: %s" % sorted(rows)[:20])
        check(leak["significant"] and leak["direction"] == 1, "main.leak: %s" % leak)
        check(leak["delta_pct"] > 0 and leak["delta_pct_lo"] > 0, "main.leak: %s" % leak)
        check(leak["flat"] > leak["base_flat"], "exact values grew: %s" % leak)
        check(not steady["significant"] and steady["direction"] == 0, "main.steady: %s" % steady)
        check(abs(steady["delta_pct"]) < 5, "main.steady hardly changes: %s" % steady)
        # tsv: the exact five columns, then the statistics
        st, _, body = srv.get("/api/v1/diff", dict(params, format="tsv"))
        lines = body.decode().splitlines()
        check(lines[0].startswith("base_flat\tflat\tbase_cum\tcum\tfunction\tsignificant\t"),
              "tsv header: %s" % lines[0])
        row = [l.split("\t") for l in lines[1:] if l.split("\t")[4] == "main.leak"][0]
        check(row[5] == "1" and float(row[6]) < 0.05, "tsv main.leak: %s" % row)
        # the diff flame graph marks main.leak's node as grown, main.steady's as neutral
        fl = srv.json("/api/v1/diff", dict(params, format="flame"))
        check(fl["fields"][-1] == "change" and len(fl["fields"]) == 7, "fields: %s" % fl["fields"])
        changes = {}
        for level in fl["levels"]:
            for i in range(0, len(level), 7):
                changes.setdefault(fl["names"][level[i + 5]], set()).add(level[i + 6])
        check(changes.get("main.leak") == {1}, "main.leak nodes: %s" % changes.get("main.leak"))
        check(changes.get("main.steady") == {0}, "main.steady: %s" % changes.get("main.steady"))
        # stats=0: the exact diff only, as before; bad parameters are refused
        plain = srv.json("/api/v1/diff", dict(params, format="json", stats="0"))
        check("method" not in plain and "significant" not in plain["rows"][0], "stats=0")
        expect_error(srv, 400, "GET", "/api/v1/diff", dict(params, q="2"), words=["'q'"])
        expect_error(srv, 400, "GET", "/api/v1/diff", dict(params, replicates="1"),
                     words=["replicates"])
        print("ok: main.leak %+.1f%% [%+.1f%%, %+.1f%%] q=%.2g; main.steady %+.2f%%" % (
            leak["delta_pct"], leak["delta_pct_lo"], leak["delta_pct_hi"], leak["flat_q"],
            steady["delta_pct"]))
    finally:
        srv.stop()
        target.kill()


main_wrapper(main)
