"""Two spans inside one stored recording, compared with time-cut replicates."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
tmp = sys.argv[1]
HZ, SECONDS, BOOT = 250, 20, 500.0


def capture():
    """perf script text: a program sampled at HZ for SECONDS; in the first half a() has 30%
    of the samples and b() 40%, in the second a() 50% and b() 20%; c() 30% throughout."""
    rnd = random.Random(7)
    out = []
    for i in range(HZ * SECONDS):
        t = BOOT + i / HZ
        first = i < HZ * SECONDS // 2
        r = rnd.random()
        leaf = ("a" if r < 0.3 else "b" if r < 0.7 else "c") if first else \
               ("a" if r < 0.5 else "b" if r < 0.7 else "c")
        out.append("prog  4242 [000] %12.6f:    4000000 cpu-clock:pppH: \n"
                   "\t1003 %s+0x1 (/bin/prog)\n\t1002 work+0x1 (/bin/prog)\n"
                   "\t1001 main+0x1 (/bin/prog)\n\n" % (t, leaf))
    return "".join(out).encode()


def main():
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"), None,
                 ["--no-fsync"])
    try:
        srv.start()
        t0 = 1796000000
        srv.push(capture(), name="spans{env=e2e}", format="perf_script", **{"from": str(t0)})
        q = '{service_name="spans"}'

        def diff(b0, b1, n0, n1):
            return srv.json("/api/v1/diff", {
                "type": "cpu:cpu-clock", "base_query": q, "query": q, "format": "json",
                "base_from": "%.3f" % (t0 + b0), "base_until": "%.3f" % (t0 + b1),
                "from": "%.3f" % (t0 + n0), "until": "%.3f" % (t0 + n1)})

        # a span of each half: 8 s of 250 Hz, 2,000 samples a side, 40 replicates of 50
        d = diff(1, 9, 11, 19)
        check(d["method"] == "replicates", "method: %s (%s)" % (d["method"], d))
        check(d["base_profiles"] >= 20 and d["profiles"] >= 20,
              "replicates: %d, %d" % (d["base_profiles"], d["profiles"]))
        rows = {r["function"]: r for r in d["rows"]}
        a, b, c, main_ = rows.get("a"), rows.get("b"), rows.get("c"), rows.get("main")
        check(a and b and c and main_, "rows: %s" % sorted(rows))
        check(a["significant"] and a["direction"] == 1 and a["delta_pct_lo"] > 0, "a: %s" % a)
        check(b["significant"] and b["direction"] == -1 and b["delta_pct_hi"] < 0, "b: %s" % b)
        check(not c["significant"], "c() did not change: %s" % c)
        check(not main_["significant"], "main is every sample: %s" % main_)
        # A/A: two spans of the first half
        d = diff(1, 5, 5, 9)
        check(d["method"] == "replicates", "A/A method: %s" % d["method"])
        sig = [r["function"] for r in d["rows"] if r["significant"]]
        check(not sig, "A/A found changes: %s" % sig)
        # sub-second spans of 100 ms (25 samples each): too few to cut, the sampling test
        d = diff(2.0, 2.1, 12.0, 12.1)
        check(d["method"] == "sampling" and d["base_profiles"] == 1 and d["profiles"] == 1,
              "100 ms spans: %s %d %d" % (d["method"], d["base_profiles"], d["profiles"]))
        print("ok: a %+.0f%% [%+.0f%%, %+.0f%%], b %+.0f%%; A/A nothing; 100 ms spans: %s" % (
            a["delta_pct"], a["delta_pct_lo"], a["delta_pct_hi"], b["delta_pct"],
            d["method"]))
    finally:
        srv.stop()


main_wrapper(main)
