"""What /api/v1/changes finds, against changes the test plants itself.

Six hours of CPU profiles a minute (overdispersed: each function's samples are Poisson with
a gamma-distributed rate, as real profiles of a busy service vary more than sampling alone
explains) are pushed at explicit times for:
- "shop": main.encode steps up 60% when the `version` label goes from v1 to v2 (a deploy);
  main.cache grows steadily (a trend); main.fresh appears two thirds in (new); main.burst
  is hot and bursty (heavy-tailed) but does not change; main.handle is steady.
- "p0".."p11": the same planted changes, each with its own seed (power and false
  discoveries over seeds);
- "aa0".."aa19": the same mix with no change at all (A/A), each with its own seed.
/api/v1/changes must report exactly the planted changes of "shop", with the step at the
version change (within one step of a minute, the push interval) and its marker beside it;
over the seeds, every planted change in all but one service and at most 5% of the findings
false; in the A/A services at most one finding in all (their false alarm rate <= 5%). /api/v1/markers gives the
marker alone; a heap that leaks in one function is a trend of inuse_space.
"""
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, cpu_pprof, expect_error, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
tmp = sys.argv[1]
NOW = int(time.time()) // 60 * 60
HOURS = 6
T0 = NOW - HOURS * 3600
DEPLOY = T0 + 3 * 3600          # v1 -> v2
FRESH = T0 + 4 * 3600           # main.fresh appears
STEPS = HOURS * 60


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 50:  # normal approximation, good enough for counts this large
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def counts(rng, mean, shape=25.0):
    """Overdispersed samples: Poisson of a gamma rate (coefficient of variation 1/sqrt(shape))."""
    return poisson(rng, rng.gammavariate(shape, mean / shape))


def minute_stacks(rng, i, planted):
    t = T0 + 60 * i
    st = {"main.main;main.handle": counts(rng, 200)}
    encode = 50.0
    if planted and t >= DEPLOY:
        encode *= 1.6
    st["main.main;main.handle;main.encode"] = counts(rng, encode)
    cache = 20.0 + (40.0 * i / STEPS if planted else 0)
    st["main.main;main.handle;main.cache"] = counts(rng, cache)
    # bursty: usually 20, one minute in ten a burst of 5x
    burst = 100.0 if rng.random() < 0.1 else 20.0
    st["main.main;main.burst"] = counts(rng, burst, shape=4.0)
    if planted and t >= FRESH:
        st["main.main;main.handle;main.fresh"] = counts(rng, 30)
    return {k: v for k, v in st.items() if v > 0}


def push_service(srv, name, seed, planted):
    rng = random.Random(seed)
    for i in range(STEPS):
        t = T0 + 60 * i
        version = "v2" if planted and t >= DEPLOY else "v1"
        srv.push(cpu_pprof(minute_stacks(rng, i, planted)),
                 name="%s.cpu{version=%s,env=test}" % (name, version),
                 **{"from": str(t), "until": str(t + 60)})


def heap_leak(srv):
    """inuse_space of main.leak climbs 2 MiB an hour; main.steady holds 8 MiB (noisy)."""
    rng = random.Random(7)
    heap = (("inuse_objects", "count", 1), ("inuse_space", "bytes", 1024))
    for i in range(STEPS):
        t = T0 + 60 * i
        st = {"main.main;main.leak": int(2048 * i / 60) + 1 + int(rng.gauss(0, 30)) % 7,
              "main.main;main.steady": int(rng.gauss(8192, 800))}
        srv.push(cpu_pprof(st, types=heap), name="leaky{env=test}", **{"from": str(t)})
    d = srv.json("/api/v1/changes", {"type": "heap:inuse_space", "query": '{service_name="leaky"}',
                                     "from": str(T0), "until": str(NOW), "step": "60s"})
    found = {(c["function"], c["kind"]) for c in d["changes"]}
    check(("main.leak", "trend") in found, "the leak is a trend: %s" % found)
    leak = [c for c in d["changes"] if c["function"] == "main.leak"][0]
    per_hour = 2048 * 1024
    check(leak["unit"] == "bytes" and abs(leak["slope_per_hour"] - per_hour) < 0.2 * per_hour,
          "its slope per hour, in bytes: %s" % leak)
    lo, hi = leak["interval"]
    check(lo <= leak["slope_per_hour"] <= hi, "the slope inside its interval: %s" % leak)
    check(all(c["function"] != "main.steady" for c in d["changes"]),
          "the steady holder is not reported: %s" % found)


def main():
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                 extra=["--no-fsync"]).start()
    try:
        push_service(srv, "shop", 2, True)
        planted = ["p%d" % k for k in range(12)]
        for k, name in enumerate(planted):
            push_service(srv, name, 200 + k, True)
        aa = ["aa%d" % k for k in range(20)]
        for k, name in enumerate(aa):
            push_service(srv, name, 100 + k, False)
        p = {"type": "cpu:cpu", "query": "{}", "from": str(T0), "until": str(NOW), "step": "60s"}
        d = srv.json("/api/v1/changes", p)
        check(d["unit"] == "nanoseconds/s" and d["aggregation"] == "per_second",
              "the timeline's unit: %s %s" % (d["unit"], d["aggregation"]))
        check(d["step"] == 60 and "Benjamini" in d["method"], "step and method: %s" % d["method"])
        by = {}
        for c in d["changes"]:
            by.setdefault(c["labels"].get("service_name"), []).append(c)
        false = {k: [(c["function"], c["kind"]) for c in v] for k, v in by.items() if k in aa}
        print("A/A services with a finding: %d of %d %s" % (len(false), len(aa), false))
        check(sum(len(v) for v in false.values()) <= 1,
              "nothing changed in the A/A services, (almost) nothing reported: %s" % false)
        want = {("main.encode", "step"), ("main.cache", "trend"), ("main.fresh", "new")}
        missed, extra, found = 0, 0, 0
        for name in planted:
            got = {(c["function"], c["kind"]) for c in by.get(name, [])}
            missed += not want <= got
            extra += len(got - want)
            found += len(got)
        print("planted services missing a change: %d of %d; false findings %d of %d"
              % (missed, len(planted), extra, found))
        check(missed <= 1, "every planted change found, kind and all, in all but one service")
        check(extra <= 0.05 * found, "false discoveries at most 5%% of the findings: %d of %d" % (extra, found))
        shop = {c["function"]: c for c in by.get("shop", [])}
        check(set(shop) == {"main.encode", "main.cache", "main.fresh"},
              "exactly the planted changes: %s" % {f: c["kind"] for f, c in shop.items()})
        enc = shop["main.encode"]
        check(enc["kind"] == "step", "a step: %s" % enc)
        check(abs(enc["at"] - DEPLOY) <= 60, "at the deploy, within a step: %s vs %d" % (enc["at"], DEPLOY))
        # 50 then 80 samples of 10 ms a minute: 8.3 and 13.3 ms of CPU a second
        check(abs(enc["before"] / 8.333e6 - 1) < 0.1 and abs(enc["after"] / 13.333e6 - 1) < 0.1,
              "before and after in CPU nanoseconds a second: %s" % {k: enc[k] for k in ("before", "after")})
        lo, hi = enc["interval"]
        check(lo < 60 < hi and lo > 20, "the change's interval holds the planted +60%%: %s" % enc)
        check(enc["q"] <= 0.05, "q: %s" % enc["q"])
        check(enc.get("marker", {}).get("value") == "v2" and enc["marker"]["label"] == "version",
              "the version change beside the step: %s" % enc.get("marker"))
        check(len(enc["values"]) == len(enc["timestamps"]) == STEPS, "a sparkline per step")
        check(shop["main.cache"]["kind"] == "trend" and shop["main.cache"]["slope_per_hour"] > 0,
              "the growing function is a trend: %s" % shop["main.cache"])
        # 40 more samples of 10 ms a minute over 6 h: 6.67 ms/s more, 1.11 ms/s an hour
        slope = shop["main.cache"]["slope_per_hour"]
        check(abs(slope / 1.111e6 - 1) < 0.2, "slope: %s" % slope)
        check(shop["main.fresh"]["kind"] == "new" and abs(shop["main.fresh"]["at"] - FRESH) <= 60,
              "the new function, when it appeared: %s" % shop["main.fresh"])
        check("change_pct" not in shop["main.fresh"], "no change %% for new code")
        # markers: the deploy, once, for shop only
        m = srv.json("/api/v1/markers", {"type": "cpu:cpu", "query": "{}", "from": str(T0),
                                         "until": str(NOW)})["markers"]
        check(sorted((x["labels"]["service_name"], x["label"], x["value"]) for x in m) ==
              sorted((n, "version", "v2") for n in ["shop"] + planted),
              "a marker for each deployed service, none for the others: %s" % m)
        check(all(abs(x["at"] - DEPLOY) < 1 for x in m), "at the first v2 profile: %s" % m[0])
        check(d["markers"] == m, "the same markers in the changes: %s" % d["markers"])
        # the last hour at the default step: the timeline's 30 s would cut every one-minute
        # capture in two, neighbouring steps sharing it (hundreds of false findings); the
        # step is the profiles' minute
        h = srv.json("/api/v1/changes", {"type": "cpu:cpu", "query": "{}", "from": str(NOW - 3600),
                                          "until": str(NOW)})
        check(h["step"] == 60, "the default step is no shorter than the profiles: %s" % h["step"])
        hf = [(c["labels"]["service_name"], c["function"], c["kind"]) for c in h["changes"]
              if c["labels"]["service_name"] in aa]
        check(len(hf) <= 1, "an hour of unchanged services: (almost) nothing: %s" % hf)
        # a stricter level finds a subset; bad parameters are 400 with a reason
        strict = srv.json("/api/v1/changes", dict(p, q="0.001"))
        check({c["function"] for c in strict["changes"]} <= set(shop), "q=0.001 a subset")
        for bad, why in (({"q": "2"}, "'q' must be"), ({"functions": "0"}, "'functions' must be"),
                         ({"step": "0.5s"}, "'step' must be"), ({"type": ""}, "missing 'type'")):
            expect_error(srv, 400, "GET", "/api/v1/changes", dict(p, **bad), words=(why,))
        heap_leak(srv)
    finally:
        srv.kill()
    print("ok: the planted changes are found, where and what they are; nothing else")


main_wrapper(main)
