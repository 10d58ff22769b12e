"""store_conformance.py - one suite, both storage backends: the same pushes into a `scorch
server` on SQLite and one on ClickHouse must give identical answers to every query.
Usage: store_conformance.py TMPDIR (env: SCORCH, SCORCH_SRC, SCORCH_TESTDATA).

The data: generated heap profiles (four types, two of them gauges), folded CPU samples, a
real Go program's CPU and allocation profiles (when go is installed), perf script with
timestamps, and the shared test data's profiles (when present), spread over three days so
that merges read day, hour and ten-minute rollups as well as raw profiles. The queries:
render in every format, timeline at several steps, diff in every format (with statistics),
heatmap, series, labels and label values, profile types. Then retention: a pair of servers
keeping two days must forget the same things, and ClickHouse must drop the old days'
partitions."""
import concurrent.futures
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clickhouse_common as chc  # noqa: E402
from server_common import Server, _fields, _varint, check, enc, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
TD = os.environ.get("SCORCH_TESTDATA", "")
TMP = sys.argv[1]
DAY, HOUR = 86400, 3600
NOW = int(time.time())
stats = {"queries": 0, "bytes": 0}
STARTED = []  # every server started, killed on the way out whatever happens


def started(srv):
    STARTED.append(srv)
    return srv.start()


def gen_heap(seed, samples=150):
    path = os.path.join(TMP, "heap-%d.pb.gz" % seed)
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-B", os.path.join(SRC, "bench/gen_pprof.py"), path,
                        str(samples), str(seed)], check=True)
    with open(path, "rb") as f:
        return f.read()


def gen_folded(seed):
    r = random.Random(seed)
    lines = []
    for _ in range(40):
        depth = r.randint(1, 6)
        stack = ["main"] + ["f%d" % r.randint(0, 12) for _ in range(depth)]
        lines.append("%s %d" % (";".join(stack), r.randint(1, 50)))
    return ("\n".join(lines) + "\n").encode()


def gen_perf(seed, seconds=3):
    """perf script text with timestamps: a few processes, idle samples among them."""
    r = random.Random(seed)
    out = []
    t = 5000.0 + r.random()
    while t < 5000 + seconds:
        comm = r.choice(["app", "app", "db", "swapper"])
        out.append("%s %d [000] %.6f: 10101010 cpu-clock:" % (comm, 1000 + len(comm), t))
        if comm == "swapper":
            frames = ["native_safe_halt", "default_idle", "cpu_startup_entry"]
        else:
            frames = ["%s_leaf%d" % (comm, r.randint(0, 5)), "%s_mid%d" % (comm, r.randint(0, 2)),
                      "main"]
        for i, fn in enumerate(frames):
            out.append("\t%x %s+0x%x (/usr/bin/%s)" % (0x400000 + 16 * i, fn, i, comm))
        out.append("")
        t += r.expovariate(150)
    return ("\n".join(out) + "\n").encode()


def go_profiles():
    """cpu.pb.gz and mem.pb.gz of tests/data/goprog, or none without go."""
    if not shutil.which("go"):
        return {}
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), GOFLAGS="-mod=mod",
               GOPROXY="off", GOCACHE=os.path.join(TMP, "gocache"))
    prog = os.path.join(TMP, "goprog")
    subprocess.run(["go", "build", "-o", prog, "."], cwd=os.path.join(SRC, "tests/data/goprog"),
                   env=env, check=True)
    d = os.path.join(TMP, "goprof")
    os.makedirs(d, exist_ok=True)
    subprocess.run([prog, d], check=True)
    out = {}
    for n in ("cpu", "mem"):
        with open(os.path.join(d, n + ".pb.gz"), "rb") as f:
            out[n] = f.read()
    return out


def schedule(k):
    """Push times of series k: every 6 h over three days, every 20 min over the last 3 h,
    every 2 minutes over the last 15 min (offset per series so they interleave)."""
    ts = [NOW - 3 * DAY + j * 6 * HOUR + 97 * k for j in range(12)]
    ts += [NOW - 3 * HOUR + j * 1200 + 13 * k for j in range(9)]
    ts += [NOW - 900 + j * 120 + 7 * k for j in range(7)]
    return sorted(t for t in ts if t < NOW - 5)


def dataset():
    """[(params, body)]: what both servers get."""
    pushes = []
    heap = [gen_heap(s) for s in range(6)]
    folded = [gen_folded(s) for s in range(6)]
    for k, name in enumerate(["api{env=prod,pod=a}", "api{env=prod,pod=b}", "web{env=dev}"]):
        for j, t in enumerate(schedule(k)):
            times = {"from": str(t), "until": str(t + 10)}
            pushes.append((dict(name=name, format="pprof", **times), heap[(j + k) % len(heap)]))
    for k, name in enumerate(["worker.cpu{env=prod}", "worker.cpu{env=dev,team=x y}"]):
        for j, t in enumerate(schedule(k + 3)):
            times = {"from": str(t), "until": str(t + 10)}
            body = folded[(j * 5 + k) % len(folded)]
            pushes.append((dict(name=name, format="folded", **times), body))
    go = go_profiles()
    for j, t in enumerate(schedule(6)[::4]):
        for n, body in go.items():
            pushes.append((dict(name="goprog{kind=%s}" % n, format="pprof",
                                **{"from": str(t), "until": str(t + 1)}), body))
    # timestamped samples for the heatmap: three pushes a few seconds apart
    for j in range(3):
        t = NOW - 600 + 10 * j
        pushes.append((dict(name="perfapp{host=h1}", format="perf_script",
                            **{"from": str(t), "until": str(t + 3)}), gen_perf(j)))
    if TD and os.path.isdir(os.path.join(TD, "pprof")):
        for j, f in enumerate(sorted(os.listdir(os.path.join(TD, "pprof")))):
            with open(os.path.join(TD, "pprof", f), "rb") as fh:
                body = fh.read()
            t = NOW - DAY - 3 * HOUR + j * 1800
            pushes.append((dict(name="td-%s" % f.split(".")[0], format="pprof",
                                **{"from": str(t), "until": str(t + 10)}), body))
        perf = os.path.join(TD, "perf", "system-wide-go-xz.perf.txt")
        if os.path.exists(perf):
            with open(perf, "rb") as fh:
                pushes.append((dict(name="td-perf", format="perf_script",
                                    **{"from": str(NOW - 2 * HOUR)}), fh.read()))
    return pushes


def push_all(servers, pushes):
    """Every push to every server, eight at a time as clients would send them (a backend's
    group commit sees concurrent writes); both must answer alike."""
    answers = {}
    for i, srv in enumerate(servers):
        def one(k, srv=srv):
            params, body = pushes[k]
            st, _, data = srv.request("POST", "/ingest", params, body=body)
            if st != 200:
                fail("push %s to %s: status %d: %s" % (params["name"], srv.log, st, data[:300]))
            return data
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            answers[i] = list(ex.map(one, range(len(pushes))))
        stats["push%d" % i] = time.time() - t0
    for k, (params, _) in enumerate(pushes):
        check(answers[0][k] == answers[1][k], "push %s answered differently: %s / %s"
              % (params["name"], answers[0][k], answers[1][k]))


def pprof_canon(data):
    """A pprof's meaning without its numbering: sample types, period, and each sample as
    (its frames leaf first: function, file, line, binary; its labels) -> summed values.
    A merged profile's samples come in the order the backend found its stacks, so the
    bytes may differ where the profile does not."""
    data = gzip.decompress(data)
    strings, funcs, locs, maps, samples, head = [], {}, {}, {}, [], []
    for f, t, v in _fields(data):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 5:
            d = {f2: v2 for f2, t2, v2 in _fields(v)}
            funcs[d.get(1, 0)] = (d.get(2, 0), d.get(4, 0))
        elif f == 3:
            d = {f2: v2 for f2, t2, v2 in _fields(v)}
            maps[d.get(1, 0)] = d.get(5, 0)
        elif f == 4:
            lid, mid, lines = 0, 0, []
            for f2, t2, v2 in _fields(v):
                if f2 == 1:
                    lid = v2
                elif f2 == 2:
                    mid = v2
                elif f2 == 4:
                    d = {f3: v3 for f3, t3, v3 in _fields(v2)}
                    lines.append((d.get(1, 0), d.get(2, 0)))
            locs[lid] = (mid, lines)
        elif f == 2:
            samples.append(v)
        elif f in (1, 11, 12):
            head.append((f, v))

    def ints(t, v):
        if t == 0:
            return [v]
        out, i = [], 0
        while i < len(v):
            x, i = _varint(v, i)
            out.append(x - (1 << 64) if x >= 1 << 63 else x)
        return out
    canon = {}
    for sv in samples:
        loc_ids, vals, labels = [], [], []
        for f2, t2, v2 in _fields(sv):
            if f2 == 1:
                loc_ids += ints(t2, v2)
            elif f2 == 2:
                vals += ints(t2, v2)
            elif f2 == 3:
                labels.append(v2)
        frames = []
        for lid in loc_ids:
            mid, lines = locs[lid]
            for fid, line in lines:
                name, fname = funcs.get(fid, (0, 0))
                frames.append((strings[name], strings[fname], line, strings[maps.get(mid, 0)]))
        key = (tuple(frames), tuple(sorted(labels)))
        old = canon.get(key, [0] * len(vals))
        canon[key] = [x + y for x, y in zip(old, vals)]
    decode = lambda v: tuple(strings[x] if isinstance(x, int) else x  # noqa: E731
                             for x in (d for _, _, d in _fields(v)))
    return (sorted((f, decode(v) if f != 12 else v) for f, v in head), sorted(canon.items()))


def speedscope_canon(data):
    """A speedscope file's meaning: per profile, its samples as frame lists with summed
    weights (frames are numbered in the order the merged profile met them)."""
    js = json.loads(data)
    frames = [json.dumps(f, sort_keys=True) for f in js["shared"]["frames"]]
    out = []
    for p in js["profiles"]:
        acc = {}
        for smp, w in zip(p["samples"], p["weights"]):
            key = tuple(frames[i] for i in smp)
            acc[key] = acc.get(key, 0) + w
        head = {k: v for k, v in p.items() if k not in ("samples", "weights")}
        out.append((json.dumps(head, sort_keys=True), sorted(acc.items())))
    return json.dumps({k: v for k, v in js.items() if k not in ("shared", "profiles")},
                      sort_keys=True), out


CANON = {"pprof": pprof_canon, "speedscope": speedscope_canon}


def same(servers, path, params, label=None):
    """GET path on every server: the same status and the same bytes (for pprof and
    speedscope the same profile, see pprof_canon). Returns the body."""
    stats["queries"] += 1
    got = []
    for i, srv in enumerate(servers):
        t0 = time.time()
        got.append(srv.request("GET", path, params))
        stats["seconds%d" % i] = stats.get("seconds%d" % i, 0) + time.time() - t0
    a, b = got[0], got[1]
    label = label or "%s?%s" % (path, enc(params))
    if a[0] != b[0]:
        fail("%s: status %d on sqlite, %d on clickhouse: %s / %s"
             % (label, a[0], b[0], a[2][:200], b[2][:200]))
    canon = CANON.get(params.get("format")) if path == "/api/v1/render" else None
    if a[0] == 200 and canon:
        ca, cb = canon(a[2]), canon(b[2])
        if ca != cb:
            fail("%s: the profiles differ:\n  sqlite:     %s\n  clickhouse: %s"
                 % (label, str(ca)[:400], str(cb)[:400]))
        stats["bytes"] += len(a[2])
        return a[2]
    if a[2] != b[2]:
        i = next((k for k in range(min(len(a[2]), len(b[2]))) if a[2][k] != b[2][k]),
                 min(len(a[2]), len(b[2])))
        fail("%s: answers differ (%d and %d bytes) from byte %d:\n  sqlite:     %r\n"
             "  clickhouse: %r" % (label, len(a[2]), len(b[2]), i, a[2][max(0, i - 60):i + 100],
                                   b[2][max(0, i - 60):i + 100]))
    stats["bytes"] += len(a[2])
    return a[2]


def ranges():
    d0 = NOW // DAY * DAY
    h0 = NOW // HOUR * HOUR
    return {
        "all": (NOW - 4 * DAY, NOW + 60),
        "last day": (NOW - DAY, NOW),
        "whole day": (d0 - DAY, d0),
        "three whole hours": (h0 - 3 * HOUR, h0),
        "ragged hours": (h0 - 3 * HOUR - 1234, h0 - 77),
        "last 15 min": (NOW - 900, NOW + 1),
    }


def q(service):
    return '{service_name="%s"}' % service


def conformance(servers):
    sq = servers
    types = json.loads(same(sq, "/api/v1/profile_types", {}))
    check(len(types) >= 5, "only %d profile types: %s" % (len(types), types))
    type_ids = [t["id"] for t in types]
    for want in ("heap:inuse_space", "heap:alloc_space", "cpu:samples"):
        check(want in type_ids, "profile type %s missing from %s" % (want, type_ids))
    services = json.loads(same(sq, "/api/v1/label_values", {"name": "service_name"}))
    labels = json.loads(same(sq, "/api/v1/labels", {}))
    for name in labels:
        same(sq, "/api/v1/label_values", {"name": name})
    for service in services:
        same(sq, "/api/v1/profile_types", {"query": q(service)})
    R = ranges()
    for lab, (f, u) in R.items():
        for sel in ("{}", '{env="prod"}', '{service_name=~"api|web"}', '{pod!="a"}'):
            same(sq, "/api/v1/series", {"query": sel, "from": str(f), "until": str(u)})
            same(sq, "/api/v1/series", {"query": sel, "type": "heap:inuse_space", "from": str(f),
                                        "until": str(u)})
    # render: every format on the main selections, json and tsv on all
    main_cases = [("heap:alloc_space", '{service_name="api"}'),
                  ("heap:inuse_space", '{service_name="api"}'),
                  ("cpu:samples", '{service_name="worker"}')]
    formats = ("json", "tsv", "top", "pprof", "folded", "svg", "speedscope", "dot")
    for typ, sel in main_cases:
        for lab, (f, u) in R.items():
            for fmt in formats if lab in ("all", "ragged hours") else ("json", "tsv", "pprof"):
                same(sq, "/api/v1/render", {"query": sel, "type": typ, "format": fmt,
                                            "from": str(f), "until": str(u)})
        f, u = R["all"]
        for extra in ({"maxNodes": "20"}, {"focus": "f3|pkg1"}, {"ignore": "f1"},
                      {"hide": "main"}, {"top": "1"}):
            same(sq, "/api/v1/render", dict({"query": sel, "type": typ, "format": "json",
                                             "from": str(f), "until": str(u)}, **extra))
    for t in type_ids:
        for service in services:
            f, u = R["all"]
            same(sq, "/api/v1/render", {"query": q(service), "type": t, "format": "tsv",
                                        "from": str(f), "until": str(u)})
            same(sq, "/api/v1/render", {"query": q(service), "type": t, "format": "json",
                                        "from": str(f), "until": str(u)})
    # timelines at steps that do and do not line up with the rollups
    for typ, sel in main_cases:
        for lab, (f, u), step in (("all", R["all"], "1d"), ("all", R["all"], "3h"),
                                  ("whole day", R["whole day"], "1h"),
                                  ("three whole hours", R["three whole hours"], "10m"),
                                  ("ragged hours", R["ragged hours"], "600s"),
                                  ("last 15 min", R["last 15 min"], "10s"),
                                  ("last day", R["last day"], "7m")):
            same(sq, "/api/v1/timeline", {"query": sel, "type": typ, "from": str(f),
                                          "until": str(u), "step": step})
    # functions over time: their shares of each step from rollups and raw rows, to the bit
    for typ, sel in main_cases:
        f, u = R["all"]
        tsv = same(sq, "/api/v1/render", {"query": sel, "type": typ, "format": "tsv",
                                          "from": str(f), "until": str(u)}).decode().splitlines()
        names = [line.split("\t")[2] for line in tsv[1:4]]
        check(names, "no functions in %s %s" % (typ, sel))
        for lab, (f, u), step in (("all", R["all"], "3h"), ("whole day", R["whole day"], "1h"),
                                  ("ragged hours", R["ragged hours"], "600s"),
                                  ("last day", R["last day"], "7m")):
            for name in names:
                for value, group in (("self", None), ("total", "env")):
                    args = {"query": sel, "type": typ, "from": str(f), "until": str(u),
                            "step": step, "function": name, "value": value}
                    if group:
                        args["group_by"] = group
                    ft = json.loads(same(sq, "/api/v1/timeline", args))
                    check(ft.get("function") == name, "a function timeline: %s" % ft)
                    if lab == "all" and name == names[0]:
                        check(any(v for line in ft["series"] for v in line["values"]),
                              "%s's timeline is empty: %s" % (name, ft))
    # diffs: statistics over the replicates of each side
    for typ, sel in main_cases:
        for (bf, bu), (f, u) in ((R["whole day"], R["last 15 min"]),
                                 (R["three whole hours"], R["last 15 min"]),
                                 (R["last day"], R["ragged hours"])):
            for fmt, extra in (("json", {}), ("tsv", {}), ("flame", {}), ("folded", {}),
                               ("json", {"normalize": "1"}), ("flame", {"normalize": "0"})):
                same(sq, "/api/v1/diff", dict({"type": typ, "base_query": sel, "query": sel,
                                               "base_from": str(bf), "base_until": str(bu),
                                               "from": str(f), "until": str(u),
                                               "format": fmt}, **extra))
    # heatmap of the timestamped pushes
    perf_types = json.loads(same(sq, "/api/v1/profile_types", {"query": q("perfapp")}))
    check(perf_types, "no profile types for the perf pushes")
    for pt in perf_types:
        for rows in ("50", "7"):
            hm = json.loads(same(sq, "/api/v1/heatmap", {"query": q("perfapp"), "type": pt["id"],
                                                         "from": str(NOW - 700),
                                                         "until": str(NOW), "rows": rows}))
            check(sum(map(sum, hm["values"])) > 0, "an empty heatmap: %s" % hm)
        same(sq, "/api/v1/render", {"query": q("perfapp"), "type": pt["id"], "format": "tsv",
                                    "from": str(NOW - 700), "until": str(NOW)})
        # the timeline places timed samples by their own times, on both backends alike
        for step in ("1s", "10s"):
            tl = json.loads(same(sq, "/api/v1/timeline", {"query": q("perfapp"), "type": pt["id"],
                                                          "from": str(NOW - 620),
                                                          "until": str(NOW - 560), "step": step}))
            check(any(v for v in tl["series"][0]["values"]), "an empty timeline: %s" % tl)
            # a function's samples by their times too
            for name in ("app_leaf1", "main"):
                ft = json.loads(same(sq, "/api/v1/timeline", {
                    "query": q("perfapp"), "type": pt["id"], "from": str(NOW - 620),
                    "until": str(NOW - 560), "step": step, "function": name, "value": "self"}))
                check(ft.get("timestamps") == tl["timestamps"],
                      "a function timeline's steps: %s" % ft)
    if "td-perf" in services:
        for pt in json.loads(same(sq, "/api/v1/profile_types", {"query": q("td-perf")})):
            same(sq, "/api/v1/heatmap", {"query": q("td-perf"), "type": pt["id"],
                                         "from": str(NOW - 3 * HOUR), "until": str(NOW)})
    # the stored profiles one by one, and each of a few on its own
    for typ, sel in main_cases:
        for lab in ("all", "last 15 min"):
            f, u = R[lab]
            listed = json.loads(same(sq, "/api/v1/profiles", {"query": sel, "type": typ,
                                                              "from": str(f), "until": str(u)}))
            check(listed["profiles"], "no profiles listed for %s %s" % (sel, lab))
            for p in listed["profiles"][:: max(1, len(listed["profiles"]) // 3)]:
                same(sq, "/api/v1/profile", {"type": typ, "series": p["series"],
                                             "time": p["time_ns"]})
        f, u = R["ragged hours"]
        for fmt in ("dot", "svg"):
            same(sq, "/api/v1/callgraph", {"query": sel, "type": typ, "format": fmt,
                                           "from": str(f), "until": str(u)})
    f, u = R["all"]
    same(sq, "/api/v1/source", {"query": '{service_name="worker"}', "type": "cpu:samples",
                                "function": "f3", "from": str(f), "until": str(u)})
    # the answers are not empty: a suite of equal empty answers would prove nothing
    tsv = same(sq, "/api/v1/render", {"query": '{service_name="api"}', "type": "heap:alloc_space",
                                      "format": "tsv", "from": str(R["all"][0]),
                                      "until": str(R["all"][1])}).decode().splitlines()
    check(len(tsv) > 100, "render tsv of api has only %d lines" % len(tsv))
    print("conformance: %d queries, %d bytes of answers, identical on both backends "
          "(%.1f s on sqlite, %.1f s on clickhouse)" % (stats["queries"], stats["bytes"],
                                                       stats["seconds0"], stats["seconds1"]))


def retention_suite(ch, sq_data, log):
    """Two days kept: the same data forgotten by both; old partitions dropped."""
    cfg = os.path.join(TMP, "ret.yaml")

    def config(days):
        with open(cfg, "w") as f:
            f.write("storage: {engine: clickhouse, url: \"%s\", database: ret, retention: %dd}\n"
                    % (ch.url, days))
    # pushes older than the retention are refused (limits.max_age): the data goes in
    # under four days of retention, and the servers come back with two
    config(4)
    a = Server(SCORCH, sq_data, log + ".sqlite", None, ["--retention", "4d", "--no-fsync"])
    b = Server(SCORCH, os.path.join(TMP, "unused-ret"), log + ".ch", cfg)
    servers = [started(a), started(b)]
    heap = gen_heap(1)
    pushes = []
    for name, times in (("old{age=old}", [NOW - 3 * DAY, NOW - 3 * DAY + 600]),
                        ("mixed{age=both}", [NOW - 3 * DAY + 60, NOW - HOUR]),
                        ("new{age=new}", [NOW - HOUR + 30, NOW - 120])):
        for t in times:
            pushes.append((dict(name=name, format="pprof", **{"from": str(t)}), heap))
    push_all(servers, pushes)
    for srv in servers:
        srv.stop()
    config(2)
    a.extra = ["--retention", "2d", "--no-fsync"]
    servers = [started(a), started(b)]
    # SQLite applies retention in its background compaction (every 10 s)
    deadline = time.time() + 40
    while True:
        names = json.loads(a.ok("/api/v1/label_values", {"name": "service_name"}))
        if "old" not in names:
            break
        if time.time() > deadline:
            fail("sqlite kept the old series for 40 s: %s" % names)
        time.sleep(0.5)
    got = json.loads(same(servers, "/api/v1/label_values", {"name": "service_name"}))
    check(got == ["mixed", "new"], "after retention: services %s" % got)
    same(servers, "/api/v1/label_values", {"name": "age"})
    same(servers, "/api/v1/labels", {})
    same(servers, "/api/v1/profile_types", {})
    for sel in ("{}", q("mixed"), q("old")):
        same(servers, "/api/v1/series", {"query": sel, "from": str(NOW - 4 * DAY),
                                         "until": str(NOW)})
        for fmt in ("tsv", "json"):
            same(servers, "/api/v1/render", {"query": sel, "type": "heap:alloc_space",
                                             "format": fmt, "from": str(NOW - 4 * DAY),
                                             "until": str(NOW)})
        same(servers, "/api/v1/timeline", {"query": sel, "type": "heap:inuse_space",
                                           "from": str(NOW - 4 * DAY), "until": str(NOW),
                                           "step": "1h"})
    # ClickHouse's copy: the days before the cutoff go as whole partitions (the store's
    # upkeep runs soon after open, then every minute)
    b.stop()
    b.start()
    cutoff_day = (NOW - 2 * DAY) // DAY
    deadline = time.time() + 30
    while True:
        parts = [p.split("\t") for p in ch.sql(
            "SELECT DISTINCT table, partition FROM system.parts WHERE active AND "
            "database = 'ret' FORMAT TSV").split("\n") if p]
        # profiles and rollups by day, stacks, frames and series by week
        old = [p for p in parts
               if (int(p[1]) + 1) * (7 if p[0] in ("scorch_stacks_local", "scorch_frames_local",
                                                   "scorch_series_local") else 1) <= cutoff_day]
        if not old:
            break
        if time.time() > deadline:
            fail("clickhouse still has partitions before day %d: %s" % (cutoff_day, old))
        time.sleep(0.5)
    check(any(p for p in parts if p), "clickhouse has no partitions left at all")
    same(servers, "/api/v1/render", {"query": "{}", "type": "heap:alloc_space", "format": "tsv",
                                     "from": str(NOW - 4 * DAY), "until": str(NOW)})
    print("retention: both backends forgot the same series and profiles; clickhouse dropped "
          "the partitions before day %d" % cutoff_day)
    for s in servers:
        s.stop()


def main():
    if not chc.available():
        print("SKIP: clickhouse-server is not installed (scripts/install-deps.sh test)",
              file=sys.stderr)
        sys.exit(77)
    ch = chc.cluster(os.path.join(TMP, "ch"), 1)[0]
    try:
        a = Server(SCORCH, os.path.join(TMP, "sqlite"), os.path.join(TMP, "sqlite.log"), None,
                   ["--no-fsync"])
        b = Server(SCORCH, os.path.join(TMP, "unused"), os.path.join(TMP, "clickhouse.log"), None,
                   ["--storage", "clickhouse", "--clickhouse-url", ch.url])
        servers = [started(a), started(b)]
        pushes = dataset()
        t0 = time.time()
        push_all(servers, pushes)
        print("pushed %d profiles to both backends in %.1f s (%.1f s to sqlite, %.1f s to "
              "clickhouse)" % (len(pushes), time.time() - t0, stats["push0"], stats["push1"]))
        # let SQLite build its rollups (its background compaction runs every 10 s), so
        # both backends answer long ranges from rollups too
        time.sleep(12)
        conformance(servers)
        for s in servers:
            s.stop()
        retention_suite(ch, os.path.join(TMP, "sqlite-ret"), os.path.join(TMP, "ret.log"))
    finally:
        for srv in STARTED:
            srv.kill()
        ch.stop()


if __name__ == "__main__":
    main_wrapper(main)
