"""What a comparison and a timeline say, checked against numbers the test computes itself.

- A side of a diff without profiles is said (which side, which range), not a unit error.
- Two profiles of one series at one instant are one capture: equal values on both sides
  are never significant, and the means beside the verdicts are exactly the tested
  quantity (per second of covered time), in the JSON, in the TSV, with their unit.
- Code absent from every base profile is "new", whatever its spread; a real growth is
  still found (the test is not vacuous).
- A diff without base parameters compares with the period just before, not with itself.
- A recording whose samples carry times covers them: its duration, and the timeline's
  steps it spans, agree with the flame graph of any part of it.
- The timeline is a rate with its unit whatever the step, a gauge's average counts two
  profiles at one instant as their sum, and a step without profiles is null."""
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, cpu_pprof, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
tmp = sys.argv[1]
NOW = int(time.time()) // 60 * 60
NS = 1000000000
PERIOD = 10000000  # 10 ms a CPU sample


def push_cpu(srv, name, frm, stacks, dur=10):
    srv.push(cpu_pprof(stacks), name=name, **{"from": str(frm), "until": str(frm + dur)})


def diff(srv, fmt="json", **p):
    params = dict(type="cpu:cpu", format=fmt, **p)
    if fmt == "json" or fmt == "flame":
        return srv.json("/api/v1/diff", params)
    return srv.ok("/api/v1/diff", params).decode()


def close(a, b, rel=1e-9):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def empty_sides(srv):
    # a service whose profiles are all in the last half hour
    for i in range(5):
        push_cpu(srv, "young.cpu{env=t}", NOW - 1800 + 60 * i, {"main.main;main.run": 30})
    q = '{service_name="young"}'
    # the Compare tab's URL for a young service: the base hour has nothing
    d = diff(srv, query=q, base_query=q, **{"from": "now-1h", "until": "now",
                                            "base_from": "now-2h", "base_until": "now-1h"})
    check(d.get("empty") == "base", "empty base: %s" % {k: d.get(k) for k in ("empty", "unit")})
    check("base has no cpu:cpu profiles" in d.get("empty_text", ""), d.get("empty_text"))
    check(d["unit"] == "nanoseconds", "the type's unit, not an empty merge's: %s" % d["unit"])
    rows = {r["function"]: r for r in d["rows"]}
    check(rows["main.run"]["base_flat"] == 0 and rows["main.run"]["flat"] == 5 * 30 * PERIOD,
          "the new side as it is: %s" % rows["main.run"])
    fl = diff(srv, "flame", query=q, base_query=q,
              **{"from": "now-1h", "until": "now", "base_from": "now-2h", "base_until": "now-1h"})
    check(fl["total"] == 5 * 30 * PERIOD and fl["base_total"] == 0, "flame: %s" % fl["total"])
    # the other way round, and neither
    d = diff(srv, query=q, base_query=q, **{"from": "now-3h", "until": "now-2h",
                                            "base_from": "now-1h", "base_until": "now"})
    check(d.get("empty") == "new" and "new side has no" in d["empty_text"], d.get("empty_text"))
    d = diff(srv, query='{service_name="nobody"}', **{"from": "now-1h", "until": "now"})
    check(d.get("empty") == "both", "neither side: %s" % d.get("empty"))
    # the default base is the hour before (empty here), not the range itself
    d = diff(srv, query=q, **{"from": "now-1h", "until": "now"})
    check(d.get("empty") == "base" and d["base_profiles"] == 0,
          "no base parameters: the period before (%s, %s)" % (d.get("empty"), d["base_profiles"]))


def twins(srv):
    """Base: one push an instant; new: two pushes at each instant (two processes under one
    name) splitting the same samples. main.json is 96 samples an instant on both sides."""
    b0, n0 = NOW - 3 * 3600, NOW - 2 * 3600
    grow_base = [20, 22, 18, 21, 19, 20]
    grow_new = [60, 58, 63, 61, 59, 62]
    work = [100, 110, 95, 105, 98, 102]
    for i in range(6):
        m = "main.main;main."
        push_cpu(srv, "twin.cpu{env=t}", b0 + 60 * i,
                 {m + "json": 96, m + "work": work[i], m + "grow": grow_base[i]})
        halves = [{m + "json": 40, m + "work": work[i] // 2, m + "grow": grow_new[i] // 2},
                  {m + "json": 56, m + "work": work[i] - work[i] // 2,
                   m + "grow": grow_new[i] - grow_new[i] // 2}]
        if i % 2 == 0:
            halves[0][m + "fresh"] = 30 + i
        for h in halves:
            push_cpu(srv, "twin.cpu{env=t}", n0 + 60 * i, h)
    q = '{service_name="twin"}'
    sides = {"query": q, "base_query": q, "from": str(n0), "until": str(n0 + 360),
             "base_from": str(b0), "base_until": str(b0 + 360)}
    d = diff(srv, **sides)
    check(d["method"] == "replicates" and d["base_profiles"] == 6 and d["profiles"] == 6,
          "six replicates a side, one an instant: %s %s %s" % (d["method"], d["base_profiles"],
                                                               d["profiles"]))
    rows = {r["function"]: r for r in d["rows"]}
    js = rows["main.json"]
    check(js["base_flat"] == js["flat"], "main.json's sums: %s" % js)
    check(not js["significant"] and js.get("status") == "noise",
          "equal values are not a change: %s" % js)
    check(d["metric"] == "per_second" and d.get("metric_unit") == "nanoseconds/s",
          "metric: %s %s" % (d["metric"], d.get("metric_unit")))
    # the means are the tested quantity: per replicate, value over its 10 s
    want = 96 * PERIOD / 10.0
    check(close(js["base_mean"], want) and close(js["mean"], want),
          "main.json's means %s, %s: want %s" % (js["base_mean"], js["mean"], want))
    w = rows["main.work"]
    want_work = sum(work) * PERIOD / 10.0 / 6
    check(close(w["base_mean"], want_work) and close(w["mean"], want_work) and
          not w["significant"], "main.work: %s" % w)
    for r in d["rows"]:
        if r["base_mean"] == r["mean"] and r["base_cum_mean"] == r["cum_mean"]:
            check(not r["significant"], "equal means flagged: %s" % r)
    g = rows["main.grow"]
    check(g["significant"] and g["status"] == "grew" and
          close(g["mean"], sum(grow_new) * PERIOD / 10.0 / 6),
          "a real growth is found, with its mean: %s" % g)
    f = rows["main.fresh"]
    check(f["status"] == "new" and f["base_flat"] == 0, "code absent from the base: %s" % f)
    check(d["new"] >= 1, "new counted: %s" % d["new"])
    # TSV: the same quantities and verdicts, with their unit
    lines = diff(srv, "tsv", **sides).splitlines()
    head = lines[0].split("\t")
    for col in ("base_mean", "mean", "status", "mean_unit"):
        check(col in head, "tsv column %s: %s" % (col, head))
    for line in lines[1:]:
        c = dict(zip(head, line.split("\t")))
        r = rows[c["function"]]
        check(c["status"] == r["status"] and c["mean_unit"] == "nanoseconds/s",
              "tsv row %s" % c)
        if r["mean"] is not None:
            check(close(float(c["mean"]), r["mean"], 1e-8), "tsv mean %s vs %s" % (c, r))
    # the flame graph marks the new path as new
    fl = diff(srv, "flame", **sides)
    names = fl["names"]
    changes = {names[n[5]]: n[6] for lvl in fl["levels"] for n in
               (lvl[i:i + 7] for i in range(0, len(lvl), 7))}
    check(changes.get("main.fresh") == 2, "main.fresh's node: %s" % changes)
    check(changes.get("main.json") == 0, "main.json's node: %s" % changes)
    # no base parameters: the six minutes before the range
    d2 = diff(srv, query=q, **{"from": str(n0 + 360), "until": str(n0 + 720)})
    d3 = diff(srv, query=q, **{"from": str(n0 + 360), "until": str(n0 + 720),
                               "base_from": str(n0), "base_until": str(n0 + 360)})
    check(d2["base_profiles"] == d3["base_profiles"] == 6 and d2.get("empty") == "new",
          "default base: %s %s" % (d2["base_profiles"], d3["base_profiles"]))
    # another base selector (two label values, load levels): the same range by default
    d4 = diff(srv, query=q, base_query='{service_name="twin",env="t"}',
              **{"from": str(n0), "until": str(n0 + 360)})
    check(d4["base_profiles"] == 6 and "empty" not in d4, "label sides: %s" % d4["base_profiles"])


def perf_script(seconds, busy, hz=100):
    """A perf script recording of `seconds` s at hz, with samples only in the seconds that
    busy(second) says (the others: the process was off the CPU)."""
    out = []
    for i in range(seconds * hz):
        if not busy(i // hz):
            continue
        t = 5000.0 + i / hz
        out.append("prog  4242 [000] %12.6f:   10000000 cpu-clock:pppH: \n"
                   "\t    55550000%04x spin+0x1 (/opt/prog)\n\t    555500010000 main+0x20 (/opt/prog)\n"
                   % (t, i % 4096))
    return "\n".join(out).encode()


def timed(srv):
    r0 = NOW - 900
    # a minute's recording, busy in its first ten seconds and in seconds 40 to 50
    body = perf_script(60, lambda sec: sec < 10 or 40 <= sec < 50)
    srv.push(body, name="rec{env=t}", format="perf_script", **{"from": str(r0)})
    q = '{service_name="rec"}'
    ps = srv.json("/api/v1/profiles", {"type": "cpu:samples", "query": q,
                                       "from": str(r0 - 60), "until": str(r0 + 120)})
    durs = [p["duration"] for p in ps["profiles"]]
    check(durs and all(49 <= x <= 51 for x in durs), "the recording's duration: %s" % ps)
    tl = srv.json("/api/v1/timeline", {"type": "cpu:samples", "query": q, "step": "10s",
                                       "from": str(r0 - 60), "until": str(r0 + 120)})
    vals = dict(zip(tl["timestamps"], tl["series"][0]["values"]))
    check(tl["aggregation"] == "per_second" and tl["unit"] == "count/s",
          "%s %s" % (tl["aggregation"], tl["unit"]))
    # placed by the samples' own times: the busy steps at 100 samples a second, the idle
    # ones inside the recording at zero (covered, no samples), nothing outside it
    check(close(vals[r0], 100, 0.02) and close(vals[r0 + 40], 100, 0.02),
          "the busy steps: %s" % vals)
    check(all(vals[t] == 0 for t in (r0 + 10, r0 + 20, r0 + 30)), "the idle steps: %s" % vals)
    check(all(vals[t] is None for t in range(r0 + 60, r0 + 120, 10)) and
          all(vals[t] is None for t in range(r0 - 60, r0, 10)), "nothing outside: %s" % vals)
    # the flame graph of any ten seconds of it: that step's rate times ten seconds
    for a in (r0, r0 + 20, r0 + 40):
        top = srv.json("/api/v1/render", {"type": "cpu:samples", "query": q, "format": "json",
                                          "from": str(a), "until": str(a + 10)})
        check(abs(top["total"] - 10 * vals[a]) <= 0.5,
              "render of [%d s, +10 s): %s samples, timeline %s/s" % (a - r0, top["total"], vals[a]))


def timeline_units(srv):
    s0 = NOW - 5400
    # 0.5 s of CPU every 10 s for 10 minutes, but not in minutes 4 to 6: 0.05 cores
    for i in range(60):
        if 24 <= i < 36:
            continue
        push_cpu(srv, "steady.cpu{env=t}", s0 + 10 * i, {"main.main;main.tick": 50})
    q = '{service_name="steady"}'
    for step in ("10s", "60s", "120s", "600s"):
        tl = srv.json("/api/v1/timeline", {"type": "cpu:cpu", "query": q, "step": step,
                                           "from": str(s0), "until": str(s0 + 600)})
        check(tl["unit"] == "nanoseconds/s" and tl["aggregation"] == "per_second",
              "%s: %s %s" % (step, tl["unit"], tl["aggregation"]))
        vals = [v for v in tl["series"][0]["values"] if v is not None]
        check(vals and all(close(v, 0.05 * NS, 1e-9) for v in vals),
              "step %s: 0.05 cores everywhere: %s" % (step, vals))
    tl = srv.json("/api/v1/timeline", {"type": "cpu:cpu", "query": q, "step": "10s",
                                       "from": str(s0), "until": str(s0 + 600)})
    v = dict(zip(tl["timestamps"], tl["series"][0]["values"]))
    check(all(v[s0 + 10 * i] is None for i in range(24, 36)), "the gap is null: %s" % v)
    check(all(v[s0 + 10 * i] is not None for i in range(0, 24)), "before the gap: %s" % v)
    # a gauge: two processes' heaps at one instant are the series' heap, their sum
    heap = (("inuse_objects", "count", 1), ("inuse_space", "bytes", 1024))
    h0 = NOW - 7200
    for frm, kb in ((h0, [1, 3]), (h0 + 60, [2, 2]), (h0 + 120, [4])):
        for k in kb:
            srv.push(cpu_pprof({"main.main;main.alloc": k}, types=heap), name="heapy{env=t}",
                     **{"from": str(frm)})
    tl = srv.json("/api/v1/timeline", {"type": "heap:inuse_space", "query": '{service_name="heapy"}',
                                       "step": "60s", "from": str(h0), "until": str(h0 + 180)})
    check(tl["aggregation"] == "average" and tl["unit"] == "bytes", "%s" % tl)
    check(tl["series"][0]["values"] == [4096, 4096, 4096], "the sums at each instant: %s" % tl)
    tl = srv.json("/api/v1/timeline", {"type": "heap:inuse_space", "query": '{service_name="heapy"}',
                                       "step": "180s", "from": str(h0), "until": str(h0 + 180)})
    check(tl["series"][0]["values"] == [4096], "averaged over the instants: %s" % tl)


def main():
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                 extra=["--no-fsync"]).start()
    try:
        # TRUST_PARTS runs some (to see each fail on an older binary)
        parts = os.environ.get("TRUST_PARTS", "empty_sides twins timed timeline_units")
        for part in parts.split():
            globals()[part](srv)
    finally:
        srv.kill()
    print("ok: comparisons and timelines say what their numbers are")


main_wrapper(main)
