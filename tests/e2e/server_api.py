"""server_api.py - the HTTP API of a real `scorch server` against independent oracles.
Usage: server_api.py TMPDIR (env: SCORCH, SCORCH_SRC, SCORCH_TESTDATA). Every test-data
file is pushed through POST /ingest, then every endpoint of docs/api.md is queried
and compared with `go tool pprof -raw` (via tests/compat/pprof_raw.py), `scorch heatmap`,
`scorch top` and `scorch convert` of the same files; then tenants, auth, /metrics and a
restart on the same data. Exits 77 after the parts that need neither, when the test data
or go is missing."""
import base64
import gzip
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, diff_tables, enc, expect_error, fail, flat_cum_from_raw,
                           go_raw, gunzip_check, main_wrapper, parse_tsv_rows, pprof_totals,
                           raw_exchange, raw_types, run, with_server)

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
TD = os.environ.get("SCORCH_TESTDATA", "")
TMP = sys.argv[1]
HAVE_TD = bool(TD) and os.path.isdir(os.path.join(TD, "pprof"))
HAVE_GO = shutil.which("go") is not None

NOW = int(time.time())
T0 = NOW - 3000             # pushes start here, one slot of SLOT seconds each
SLOT = 60
RANGE = {"from": str(T0 - 60), "until": str(T0 + 2900)}
stats = {"render": 0, "tsv": 0}


def stem(path):
    return os.path.basename(path).split(".")[0]


class Pushes:
    """Pushes with increasing time slots; remembers what was sent."""

    def __init__(self, srv):
        self.srv, self.slot, self.list, self.bytes = srv, 0, [], 0

    def push(self, body, name, fmt, headers=None, **extra):
        t = T0 + self.slot * SLOT
        self.slot += 1
        params = dict(name=name, format=fmt, **{"from": str(t), "until": str(t + 10)})
        params.update(extra)
        st, _, data = self.srv.request("POST", "/ingest", params, body=body, headers=headers)
        if st != 200:
            fail("push %s (%s): status %d: %s" % (name, fmt, st, data[:300]))
        res = json.loads(data)
        self.list.append(dict(name=name, t=t, res=res, len=len(body)))
        self.bytes += len(body)
        return t, res


def q(service):
    return '{service_name="%s"}' % service


def render(srv, service, typ, fmt, **kw):
    stats["render"] += 1
    p = dict(query=q(service), type=typ, format=fmt, **RANGE)
    p.update(kw)
    return srv.ok("/api/v1/render", p)


def render_tsv(srv, service, typ, **kw):
    stats["tsv"] += 1
    return parse_tsv_rows(render(srv, service, typ, "tsv", **kw).decode())


def check_flame(js, total, label):
    """Flame JSON invariants: children + self == total for every node, root = total."""
    check(js.get("version") == 1, "%s: flame json version %r" % (label, js.get("version")))
    levels = js["levels"]
    check(len(levels[0]) == 4, "%s: level 0 is not one node" % label)
    check(levels[0][1] == js["total"] == total,
          "%s: root total %d / total %d, want %d" % (label, levels[0][1], js["total"], total))
    nodes = 1
    for d in range(len(levels) - 1):
        par = [levels[d][i:i + 4] for i in range(0, len(levels[d]), 4)]
        kids = [levels[d + 1][i:i + 4] for i in range(0, len(levels[d + 1]), 4)]
        nodes += len(kids)
        k = 0
        for x, tot, self_, _ in par:
            s = 0
            while k < len(kids) and x <= kids[k][0] < x + tot:
                check(kids[k][0] + kids[k][1] <= x + tot, "%s: child outside parent" % label)
                s += kids[k][1]
                k += 1
            check(s + self_ == tot, "%s: level %d node at %d: children %d + self %d != %d"
                  % (label, d, x, s, self_, tot))
        check(k == len(kids), "%s: level %d has nodes outside any parent" % (label, d + 1))
    return nodes


def folded_table(text):
    out = {}
    for line in text.splitlines():
        if line:
            st, n = line.rsplit(" ", 1)
            out[st] = out.get(st, 0) + int(n)
    return out


def check_all_formats(srv, service, typ, total, label, src_file=None, stype=None):
    """json, pprof, folded, svg, speedscope and dot of one pushed profile."""
    js = json.loads(render(srv, service, typ, "json", maxNodes="100000"))
    check_flame(js, total, label + " json")
    small = json.loads(render(srv, service, typ, "json", maxNodes="20"))
    n = check_flame(small, total, label + " json maxNodes=20")
    check(n <= 20, "%s: maxNodes=20 gave %d nodes" % (label, n))
    pp = render(srv, service, typ, "pprof")
    gunzip_check(pp, label + " pprof")
    check(pprof_totals(pp) == [total], "%s: rendered pprof totals %s, want [%d]"
          % (label, pprof_totals(pp), total))
    ppath = os.path.join(TMP, "render.pb.gz")
    with open(ppath, "wb") as f:
        f.write(pp)
    if HAVE_GO:
        raw = go_raw(ppath)
        diff_tables(flat_cum_from_raw(SRC, raw, ""), render_tsv(srv, service, typ),
                    label + ": rendered pprof (go tool pprof -raw) vs render tsv")
    fo = folded_table(render(srv, service, typ, "folded").decode())
    check(sum(fo.values()) == total, "%s: folded sums to %d, want %d"
          % (label, sum(fo.values()), total))
    if src_file:
        args = [SCORCH, "convert", "--to", "folded", src_file]
        if stype:
            args[4:4] = ["--sample-index", stype]
        want = folded_table(run(args).decode())
        if fo != want:
            bad = [k for k in set(fo) | set(want) if fo.get(k) != want.get(k)]
            fail("%s: folded differs from scorch convert on %d stacks, e.g. %r: %s vs %s"
                 % (label, len(bad), bad[0], fo.get(bad[0]), want.get(bad[0])))
    svg = render(srv, service, typ, "svg")
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        fail("%s: svg is not well-formed XML: %s" % (label, e))
    check(root.tag.endswith("svg"), "%s: svg root is %s" % (label, root.tag))
    sp = json.loads(render(srv, service, typ, "speedscope"))
    check("speedscope" in sp.get("$schema", "") and sp.get("profiles"),
          "%s: speedscope JSON without $schema/profiles" % label)
    dot = render(srv, service, typ, "dot").decode()
    check(dot.lstrip().startswith("digraph"), "%s: dot does not start with digraph" % label)


def synthetic_checks(srv, pushes):
    """What needs no test data: folded pushes with known values."""
    body = b"main;work;leaf 30\nmain;work 10\nmain;idle 5\n"
    pushes.push(body, "synth{job=test,env=dev}", "folded")
    body2 = "".join("main;f%d;g 1\n" % (i % 7) for i in range(100)).encode()
    pushes.push(gzip.compress(body2), "synth{job=test,env=dev}", "folded")
    tsv = render_tsv(srv, "synth", "cpu:samples")
    want = {"main": (0, 145), "work": (10, 40), "leaf": (30, 30), "idle": (5, 5), "g": (100, 100)}
    for i in range(7):
        want["f%d" % i] = (0, len([k for k in range(100) if k % 7 == i]))
    diff_tables(tsv, want, "synthetic folded pushes: render tsv")
    js = json.loads(render(srv, "synth", "cpu:samples", "json"))
    check_flame(js, 145, "synthetic json")
    # times as unix seconds, milliseconds, RFC 3339 and now-<duration> select the same
    t_first = pushes.list[-2]["t"]
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_first))
    base = render(srv, "synth", "cpu:samples", "tsv", **{"from": str(t_first),
                                                         "until": str(t_first + 1)})
    check(parse_tsv_rows(base.decode()) == {"main": (0, 45), "work": (10, 40),
                                            "leaf": (30, 30), "idle": (5, 5)},
          "synthetic first push alone: %s" % base)
    for f, u in ((str(t_first * 1000), str((t_first + 1) * 1000)), (iso, str(t_first + 1)),
                 ("now-%ds" % (NOW + 1 - t_first + 60), "now-%ds" % (NOW - t_first - 30))):
        got = render(srv, "synth", "cpu:samples", "tsv", **{"from": f, "until": u})
        check(got == base, "from=%s until=%s selects differently" % (f, u))
    # one keep-alive connection, requests of every kind in a row
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    for k in range(30):
        if k % 3 == 0:
            c.request("POST", "/ingest?" + enc({"name": "keepalive", "format": "folded",
                                                "from": str(T0 + k)}), body=b"k;a 1\n")
        elif k % 3 == 1:
            c.request("GET", "/api/v1/render?" + enc(dict(query=q("keepalive"), format="tsv",
                                                          type="cpu:samples", **RANGE)))
        else:
            c.request("GET", "/nope")
        resp = c.getresponse()
        body = resp.read()
        want = 404 if k % 3 == 2 else 200
        check(resp.status == want, "keep-alive request %d: %d %s" % (k, resp.status, body[:100]))
        if k % 3 == 1:
            got = parse_tsv_rows(body.decode())
            check(got == {"k": (0, k // 3 + 1), "a": (k // 3 + 1, k // 3 + 1)},
                  "keep-alive render %d: %s" % (k, got))
    c.close()
    pushes.list += [dict(name="keepalive")] * 10
    pushes.bytes += 10 * len(b"k;a 1\n")
    # cpu:cpu is the count in nanoseconds at the default 100 Hz; a push covers its 10 s, and
    # the timeline says its rate: nanoseconds per second (cores), whatever the step
    tl = srv.json("/api/v1/timeline", dict(query=q("synth"), type="cpu:cpu", step="60s", **RANGE))
    check(len(tl["series"]) == 1, "synthetic timeline: %d series" % len(tl["series"]))
    check(tl["unit"] == "nanoseconds/s" and tl["aggregation"] == "per_second",
          "synthetic timeline: %s %s" % (tl["unit"], tl["aggregation"]))
    lit = [v for v in tl["series"][0]["values"] if v is not None]
    check(len(lit) == 2 and abs(sum(lit) * 10 - 145 * 10000000) <= 1e-8 * 145 * 10000000,
          "synthetic timeline: two pushes of 10 s, %s" % lit)
    check(len(tl["timestamps"]) == len(tl["series"][0]["values"]), "timeline lengths differ")
    # a function over time: its part of the timeline, in the timeline's unit and steps. The
    # first push is main;work;leaf 30, main;work 10, main;idle 5; the second holds no work.
    rates = [v for v in tl["series"][0]["values"] if v is not None]
    for fn, value, part in (("work", "total", 40), ("work", "self", 10), ("leaf", None, 30),
                            ("main", "total", 45), ("idle", "self", 5), ("nosuch", "self", 0)):
        args = dict(query=q("synth"), type="cpu:cpu", step="60s", function=fn, **RANGE)
        if value:
            args["value"] = value
        ft = srv.json("/api/v1/timeline", args)
        check(ft["function"] == fn and ft["value"] == (value or "total"),
              "function timeline %s: says %s %s" % (fn, ft.get("function"), ft.get("value")))
        check(all(ft[k] == tl[k] for k in ("timestamps", "step", "unit", "aggregation")),
              "function timeline %s: not the timeline's steps and unit: %s" % (fn, ft))
        vals = ft["series"][0]["values"]
        check([v is None for v in vals] == [v is None for v in tl["series"][0]["values"]],
              "function timeline %s: null where the timeline is not: %s" % (fn, vals))
        lit = [v for v in vals if v is not None]
        first = 0 if fn != "main" else None  # main holds the second push too
        want = [rates[0] * part / 45.0, rates[1] if first is None else 0]
        check(len(lit) == 2 and all(abs(a - b) <= 1e-9 * max(abs(b), 1) for a, b in zip(lit, want)),
              "function timeline %s %s: %s, want %s" % (fn, value, lit, want))
    for bad, why in (({"function": "work", "value": "flat"},
                      "'value' must be one of total, self, not 'flat'"),
                     ({"value": "self"}, "'value' is the value of a function"),
                     ({"function": ""}, "empty 'function'")):
        st, _, body = srv.get("/api/v1/timeline", dict(query=q("synth"), type="cpu:cpu", **bad))
        check(st == 400 and why in body.decode(), "timeline %s: %d %s" % (bad, st, body[:200]))


def main():
    with_server(SCORCH, TMP, run_all)
    if not HAVE_TD:
        print("SKIP: ../shared/testdata is absent: only the synthetic parts ran", file=sys.stderr)
        sys.exit(77)
    if not HAVE_GO:
        print("SKIP: go is missing: the go tool pprof comparisons did not run", file=sys.stderr)
        sys.exit(77)


def listing_bytes(srv, pushes):
    """/api/v1/profiles byte for byte: labels that need escaping, a time with a fraction of a
    second (nine exact decimals at most, trailing zeros cut), a whole duration."""
    t, _ = pushes.push(b"a;b 3\nc 2\n", 'listing{env=pr"od,zone=\u00e9u}', "folded")
    frac = "%d.25" % (t + 1)
    pushes.push(b"a 1\n", 'listing{env=pr"od,zone=\u00e9u}', "folded",
                **{"from": frac, "until": "%d" % (t + 12)})
    got = srv.ok("/api/v1/profiles", {"query": q("listing"), "type": "cpu:samples",
                                      "from": str(t - 1), "until": str(t + 20)}).decode()
    series = '{env=\\"pr\\\\\\"od\\",service_name=\\"listing\\",zone=\\"\u00e9u\\"}'
    labels = '{"env":"pr\\"od","service_name":"listing","zone":"\u00e9u"}'
    want = ('{"profiles":[{"labels":%s,"series":"%s","time":%d,"time_ns":"%d","duration":10,'
            '"total":5,"samples":2,"timed":false},{"labels":%s,"series":"%s","time":%s,'
            '"time_ns":"%d250000000","duration":10.75,"total":1,"samples":1,"timed":false}],'
            '"truncated":false}\n' % (labels, series, t, t * 1000000000, labels, series, frac,
                                       t + 1))
    check(got == want, "/api/v1/profiles, byte for byte:\n got %r\nwant %r" % (got, want))


def run_all(srv):
    t_start = time.time()
    pushes = Pushes(srv)
    m0 = srv.metrics()
    synthetic_checks(srv, pushes)
    listing_bytes(srv, pushes)
    # a dotted label name (OpenTelemetry's) and a second value of job
    pushes.push(b"a;b 1\n", "dotted{otel.scope.name=lib,job=other}", "folded")

    pprofs = []
    if HAVE_TD:
        for f in sorted(os.listdir(os.path.join(TD, "pprof"))):
            path = os.path.join(TD, "pprof", f)
            with open(path, "rb") as fh:
                body = fh.read()
            _, res = pushes.push(body, "%s{job=test}" % stem(f), "pprof")
            pprofs.append(dict(path=path, service=stem(f), profile=res["profile"]))
        perf_files = [os.path.join(TD, "perf", "system-wide-go-xz.perf.txt")]
        for n in ("dd-stacks-01", "funcab-pid-01", "java-stacks-01", "numa-stacks-01"):
            perf_files.append(os.path.join(TD, "flamegraph-compat", "perf-%s.txt" % n))
        perfs = []
        for path in perf_files:
            with open(path, "rb") as fh:
                body = fh.read()
            t, res = pushes.push(body, "%s{job=test}" % stem(path), "perf_script")
            perfs.append(dict(path=path, service=stem(path), t=t, profile=res["profile"]))
        folded_path = os.path.join(TMP, "java.folded")
        with open(folded_path, "wb") as fh:
            fh.write(run([SCORCH, "collapse", "perf", perf_files[3]]))
        with open(folded_path, "rb") as fh:
            pushes.push(fh.read(), "folded-java{job=test}", "folded")
        # a gauge pushed twice with different values into one series, 10 s apart
        gauge_files = [os.path.join(TD, "pprof", "mem-sort.pb.gz"),
                       os.path.join(TD, "pprof", "mem-strconv.pb.gz")]
        gt = T0 + pushes.slot * SLOT
        pushes.slot += 1
        for i, path in enumerate(gauge_files):
            with open(path, "rb") as fh:
                srv.push(fh.read(), name="gauge-app{job=test}", format="pprof",
                         **{"from": str(gt + 10 * i), "until": str(gt + 10 * i + 10)})
                pushes.bytes += os.path.getsize(path)
                pushes.list.append(dict(name="gauge-app"))
        # two pushes to one series at different times, for /diff
        diff_times = []
        for path in ("cpu-sort", "cpu-strconv"):
            with open(os.path.join(TD, "pprof", path + ".pb.gz"), "rb") as fh:
                t, _ = pushes.push(fh.read(), "diff-app{job=test}", "pprof")
                diff_times.append(t)
    check(pushes.slot * SLOT < 2900, "too many pushes for the time range")
    print("pushed %d profiles (%d bytes) in %.1f s" % (len(pushes.list), pushes.bytes,
                                                         time.time() - t_start))

    # ---- listings ----
    types = srv.json("/api/v1/profile_types")
    ids = {t["id"]: t for t in types}
    for t in types:
        check(t["id"] == "%s:%s" % (t["profile"], t["sample_type"]), "bad type id %r" % t)
        check(t.get("unit"), "type %s without a unit" % t["id"])
    want_types = {"cpu:samples": "count", "cpu:cpu": "nanoseconds"}
    if HAVE_TD:
        want_types.update({"heap:alloc_space": "bytes", "heap:inuse_space": "bytes",
                           "heap:alloc_objects": "count", "heap:inuse_objects": "count"})
    for k, unit in want_types.items():
        check(k in ids, "profile_types lacks %s: %s" % (k, sorted(ids)))
        check(ids[k]["unit"] == unit, "%s unit %r, want %r" % (k, ids[k]["unit"], unit))
    # ?query= narrows the types to those of matching series
    def types_of(query):
        return [t["id"] for t in srv.json("/api/v1/profile_types", {"query": query})]

    check(types_of('{service_name="synth"}') == ["cpu:cpu", "cpu:samples"],
          "profile_types of synth: %s" % types_of('{service_name="synth"}'))
    check(types_of('{service_name="nope"}') == [], "profile_types of an unknown service")
    check(types_of("{}") == [t["id"] for t in types], "profile_types of {} differ")
    if HAVE_TD:
        heap = ["heap:alloc_objects", "heap:alloc_space", "heap:inuse_objects",
                "heap:inuse_space"]
        check(types_of('{service_name="mem-sort"}') == heap,
              "profile_types of mem-sort: %s" % types_of('{service_name="mem-sort"}'))
        got = types_of('{service_name=~"mem-sort|cpu-sort"}')
        check(got == ["cpu:cpu", "cpu:samples"] + heap, "profile_types of two: %s" % got)
    expect_error(srv, 400, "GET", "/api/v1/profile_types", {"query": "{a="},
                 words=["offset"], what="profile_types with a broken selector")
    labels = srv.json("/api/v1/labels")
    for name in ("service_name", "job", "env", "otel.scope.name"):
        check(name in labels, "labels lacks %r: %s" % (name, labels))
    services = set(srv.json("/api/v1/label_values", {"name": "service_name"}))
    want_services = {"synth", "dotted", "keepalive", "listing"} | {p["service"] for p in pprofs}
    if HAVE_TD:
        want_services |= {p["service"] for p in perfs} | {"folded-java", "gauge-app", "diff-app"}
    check(services == want_services, "label_values service_name: %s, want %s"
          % (sorted(services), sorted(want_services)))
    check(srv.json("/api/v1/label_values", {"name": "job"}) == ["other", "test"],
          "label_values job: %s" % srv.json("/api/v1/label_values", {"name": "job"}))
    check(srv.json("/api/v1/label_values", {"name": "otel.scope.name"}) == ["lib"],
          "label_values of a dotted name")
    check(srv.json("/api/v1/label_values", {"name": "nope"}) == [], "values of an unknown label")

    def series(query, typ=None):
        got = srv.json("/api/v1/series", dict(query=query, type=typ, **RANGE))
        for s in got:
            check(set(s) == {"labels"}, "series entry %r" % s)
        # a service's samples with a string label of their own (perf's comm) make one
        # series each: the selector cases ask which services match
        return sorted(set(s["labels"]["service_name"] for s in got))

    cpu_pprof = sorted(p["service"] for p in pprofs if p["service"].startswith("cpu-"))
    allsvc = sorted(want_services - {"dotted", "keepalive", "listing"})
    cases = [
        ('{job="test"}', None, allsvc),
        ('{service_name="synth"}', None, ["synth"]),
        ('{job="test",service_name!="synth"}', None, sorted(set(allsvc) - {"synth"})),
        ('{service_name=~"cpu-.*"}', None, cpu_pprof),
        ('{service_name=~"cpu-"}', None, []),  # anchored, as PromQL
        ('{job="test",service_name!~"cpu-.*|mem-.*|synth"}', None,
         sorted(s for s in allsvc if not s.startswith(("cpu-", "mem-")) and s != "synth")),
        ('{otel.scope.name="lib"}', None, ["dotted"]),
        ('{otel.scope.name=~"l.b", job="other"}', None, ["dotted"]),
        ('{env="dev"}', "cpu:samples", ["synth"]),
        ('{}', "heap:inuse_space",
         sorted([p["service"] for p in pprofs if p["profile"] == "heap"] +
                (["gauge-app"] if HAVE_TD else []))),
        ('{service_name="nope"}', None, []),
    ]
    for query, typ, want in cases:
        got = series(query, typ)
        check(got == want, "series %s type=%s: %s, want %s" % (query, typ, got, want))
    # perf script's comm is a sample label: a push is a series per process name
    perf_series = [x["labels"] for x in srv.json("/api/v1/series", dict(
        query='{service_name=~"perf-.*|system-wide-.*"}', **RANGE))]
    comms = [x.get("comm") for x in perf_series]
    if HAVE_TD:
        check(perf_series and None not in comms, "perf series without comm: %s" % perf_series[:4])
        check(len(perf_series) == len({(x["service_name"], x["comm"]) for x in perf_series}),
              "perf series are not one per service and comm: %s" % perf_series)
        check(len(set(comms)) >= 2, "a system-wide capture names several processes: %s" % comms)
    print("listings: %d types, %d services, %d selectors" % (len(types), len(services),
                                                              len(cases)))
    if not HAVE_TD:
        return common_tail(srv, pushes, m0, {})

    # ---- render: every pprof, every sample type, against go tool pprof -raw ----
    t1 = time.time()
    raws = {}
    ncases = 0
    for p in pprofs:
        if not HAVE_GO:
            break
        raw = raws[p["path"]] = go_raw(p["path"])
        tys = raw_types(raw)
        with open(p["path"], "rb") as fh:
            tots = pprof_totals(fh.read())
        for k, st in enumerate(tys):
            typ = "%s:%s" % (p["profile"], st)
            label = "%s %s" % (p["service"], typ)
            got = render_tsv(srv, p["service"], typ)
            diff_tables(got, flat_cum_from_raw(SRC, raw, st), label + ": render tsv vs -raw")
            ncases += 1
            if k == len(tys) - 1 or st in ("cpu", "alloc_space"):
                check_all_formats(srv, p["service"], typ, tots[k], label, p["path"], st)
    print("render: %d file/type tsv cases equal to go tool pprof -raw, all formats checked "
          "(%.1f s)" % (ncases, time.time() - t1))

    # focus / ignore / hide as go tool pprof's
    if HAVE_GO:
        sortf = os.path.join(TD, "pprof", "cpu-sort.pb.gz")
        for flt in ({"focus": "sort\\.Stable"}, {"ignore": "runtime\\."}, {"hide": "runtime\\."},
                    {"focus": "sort", "hide": "insertion"}):
            raw = go_raw(sortf, *["-%s=%s" % kv for kv in flt.items()])
            got = render_tsv(srv, "cpu-sort", "cpu:cpu", **flt)
            diff_tables(got, flat_cum_from_raw(SRC, raw, "cpu"), "render tsv %s" % flt)
            check(got != render_tsv(srv, "cpu-sort", "cpu:cpu"), "filter %s changed nothing" % flt)

    # perf script and folded pushes: the same as the CLI reads the files
    for p in perfs + [dict(path=folded_path, service="folded-java", profile="cpu")]:
        want = parse_tsv_rows(run([SCORCH, "top", "--format", "tsv", p["path"]]).decode())
        typ = None
        for t in types:
            if t["profile"] == p["profile"]:
                got = render_tsv(srv, p["service"], t["id"])
                if got == want:
                    typ = t["id"]
                    break
        check(typ, "%s: no type's render tsv equals scorch top of the file" % p["service"])
        p["type"] = typ
    print("perf script and folded pushes equal scorch top of their files (type %s)"
          % perfs[0]["type"])

    # ---- timeline: each push's rate over its 10 s ----
    for p in pprofs:
        if not HAVE_GO:
            break
        raw = raws[p["path"]]
        with open(p["path"], "rb") as fh:
            tots = pprof_totals(fh.read())
        for st, tot in zip(raw_types(raw), tots):
            if st.startswith("inuse"):
                continue
            typ = "%s:%s" % (p["profile"], st)
            tl = srv.json("/api/v1/timeline", dict(query=q(p["service"]), type=typ, step="60s",
                                                   **RANGE))
            check(len(tl["series"]) == 1, "timeline %s: %d series" % (typ, len(tl["series"])))
            vals = [v for v in tl["series"][0]["values"] if v is not None]
            check(len(vals) == 1, "timeline %s: not one step: %s" % (typ, vals))
            check(abs(vals[0] * 10 - tot) <= 1e-6 * max(tot, 1),
                  "timeline %s %s: %s/s, want %d over 10 s" % (p["service"], typ, vals, tot))
    # a step holds the profiles that start in [timestamp, timestamp + step): also when the
    # range starts on a fraction of a second (now-1h), the timestamps being whole seconds
    prof = srv.json("/api/v1/profiles", dict(query=q("synth"), type="cpu:samples", **RANGE))
    t0 = int(prof["profiles"][0]["time_ns"]) // 10**9
    tl = srv.json("/api/v1/timeline", dict(query=q("synth"), type="cpu:samples", step="10s",
                                           **{"from": "%d.5" % (t0 - 10), "until": str(t0 + 30)}))
    lit = [(ts, v) for ts, v in zip(tl["timestamps"], tl["series"][0]["values"]) if v]
    check(lit, "synth's timeline from a fraction of a second is empty: %s" % tl)
    for ts, v in lit:
        got = srv.json("/api/v1/profiles", {"query": q("synth"), "type": "cpu:samples",
                                            "from": str(ts), "until": str(ts + tl["step"])})
        check(abs(sum(x["total"] for x in got["profiles"]) - v * 10) <= 1e-8 * v * 10,
              "the step at %d holds %s/s, its 10 s profiles %s" % (ts, v, got["profiles"]))
    # a gauge pushed twice in one step: the average; a cumulative type: its rate over the
    # 20 s the two pushes cover
    g = [pprof_totals(open(f, "rb").read()) for f in gauge_files]
    if g:
        tl = srv.json("/api/v1/timeline", dict(query=q("gauge-app"), type="heap:inuse_space",
                                               step="60s", **RANGE))
        lit = [v for v in tl["series"][0]["values"] if v is not None]
        want = (g[0][3] + g[1][3]) / 2
        check(tl["aggregation"] == "average" and tl["unit"] == "bytes" and len(lit) == 1 and
              abs(lit[0] - want) <= 1e-8 * want, "gauge timeline %s, want %s (average)" % (lit, want))
        tl = srv.json("/api/v1/timeline", dict(query=q("gauge-app"), type="heap:alloc_space",
                                               step="60s", **RANGE))
        lit = [v for v in tl["series"][0]["values"] if v is not None]
        check(tl["unit"] == "bytes/s" and len(lit) == 1 and
              abs(lit[0] * 20 - (g[0][1] + g[1][1])) <= 1e-8 * (g[0][1] + g[1][1]), "cumulative timeline: %s" % lit)
        tl = srv.json("/api/v1/timeline", dict(query=q("gauge-app"), type="heap:inuse_space",
                                               step="10s", **RANGE))
        check(sorted(v for v in tl["series"][0]["values"] if v) == sorted([g[0][3], g[1][3]]),
              "gauge timeline with 10 s steps: each push's own value")
        # the merged flame graph averages per stack (rounding each stack)
        js = json.loads(render(srv, "gauge-app", "heap:inuse_space", "json"))
        check(abs(js["total"] - (g[0][3] + g[1][3]) / 2) <= 200,
              "gauge render total %d, want about %d" % (js["total"], (g[0][3] + g[1][3]) / 2))
    # group_by sums series per value of a label
    tl = srv.json("/api/v1/timeline", dict(query='{service_name=~"cpu-.*|diff-app"}',
                                           type="cpu:samples", step="60s", group_by="job",
                                           **RANGE))
    check([s_["labels"] for s_ in tl["series"]] == [{"job": "test"}],
          "group_by=job lines: %s" % [s_["labels"] for s_ in tl["series"]])
    want = sum(pprof_totals(open(p["path"], "rb").read())[0] for p in pprofs
               if p["service"].startswith("cpu-"))
    want += sum(pprof_totals(open(os.path.join(TD, "pprof", n + ".pb.gz"), "rb").read())[0]
                for n in ("cpu-sort", "cpu-strconv"))
    got = sum(v for v in tl["series"][0]["values"] if v is not None) * 10
    check(abs(got - want) <= 1e-8 * want, "group_by total %s over 10 s each, want %d" % (got, want))
    print("timeline: rates of the pushed profiles; gauges average; group_by sums")

    # ---- diff between two pushes of one series ----
    a, b = diff_times
    params = {"type": "cpu:cpu", "base_query": q("diff-app"), "base_from": str(a),
              "base_until": str(a + 30), "query": q("diff-app"), "from": str(b),
              "until": str(b + 30), "format": "tsv"}
    text = srv.ok("/api/v1/diff", params).decode().splitlines()
    # the contract's five columns come first, unchanged; the statistics follow them
    check(text[0].startswith("base_flat\tflat\tbase_cum\tcum\tfunction\tsignificant\t"),
          "diff tsv header %r" % text[0])
    ncols = len(text[0].split("\t"))
    got_base, got_new = {}, {}
    for line in text[1:]:
        cells = line.split("\t")
        check(len(cells) == ncols, "diff tsv row %r" % line)
        bf, f, bc, c, name = cells[:5]
        if int(bf) or int(bc):
            got_base[name] = (int(bf), int(bc))
        if int(f) or int(c):
            got_new[name] = (int(f), int(c))
    diff_tables(got_base, render_tsv(srv, "cpu-sort", "cpu:cpu"), "diff base side")
    diff_tables(got_new, render_tsv(srv, "cpu-strconv", "cpu:cpu"), "diff new side")
    params["format"] = "json"
    json.loads(srv.ok("/api/v1/diff", params))
    params["format"] = "flame"
    json.loads(srv.ok("/api/v1/diff", params))
    print("diff: %d functions, each side equal to its render tsv" % (len(text) - 1))

    # ---- heatmap of the perf script push vs scorch heatmap of the file ----
    hp = perfs[0]
    for rows in (None, 7):
        args = [SCORCH, "heatmap"] + (["--rows", str(rows)] if rows else []) + [hp["path"]]
        want = json.loads(run(args), parse_float=Decimal)
        got = json.loads(srv.ok("/api/v1/heatmap", dict(query=q(hp["service"]), type=hp["type"],
                                                        rows=rows, **RANGE)),
                         parse_float=Decimal)
        shift = Decimal(got["start"]) - Decimal(want["start"])
        check(shift == int(shift), "heatmap start %s vs %s: not a whole number of seconds apart"
              % (got["start"], want["start"]))
        check(int(Decimal(got["start"])) == hp["t"], "heatmap start %s is not in the push's "
              "first second %d" % (got["start"], hp["t"]))
        for k in ("rows", "cols", "values"):
            check(got[k] == want[k], "heatmap rows=%s: %s differs from scorch heatmap" % (rows, k))
    print("heatmap: equal to scorch heatmap (%d columns), shifted by %s s"
          % (want["cols"], shift))

    # ---- call graph and source ----
    dot = srv.ok("/api/v1/callgraph", dict(query=q("cpu-sort"), type="cpu:cpu", format="dot",
                                           **RANGE)).decode()
    check(dot.lstrip().startswith("digraph"), "callgraph dot does not start with digraph")
    svg = srv.ok("/api/v1/callgraph", dict(query=q("cpu-sort"), type="cpu:cpu", format="svg",
                                           nodecount="30", **RANGE))
    ET.fromstring(svg)
    tsv = render_tsv(srv, "cpu-sort", "cpu:cpu")
    top = sorted(tsv, key=lambda k: -tsv[k][0])[:3]
    for fn in top:
        src = srv.json("/api/v1/source", dict(query=q("cpu-sort"), type="cpu:cpu", function=fn,
                                              **RANGE))
        check(src["functions"], "source %s: no functions" % fn)
        flat = sum(ln["flat"] for f in src["functions"] for ln in f["lines"])
        check(flat == tsv[fn][0], "source %s: lines' flat sum %d, render tsv flat %d"
              % (fn, flat, tsv[fn][0]))
        check(sum(f["flat"] for f in src["functions"]) == tsv[fn][0], "source %s: flat" % fn)
    expect_error(srv, 400, "GET", "/api/v1/source", dict(type="cpu:cpu", **RANGE),
                 words=["function"])
    print("callgraph dot/svg answer; source lines sum to the flat of %s" % ", ".join(top))
    common_tail(srv, pushes, m0, dict(perfs=perfs, diff=params))


def common_tail(srv, pushes, m0, ctx):
    # ---- /metrics: counters moved by what this test did ----
    m1 = srv.metrics()

    def delta(k):
        return m1.get(k, 0) - m0.get(k, 0)

    check(delta("scorch_ingest_profiles_total") == len(pushes.list),
          "ingest counter moved by %d, want %d" % (delta("scorch_ingest_profiles_total"),
                                                   len(pushes.list)))
    check(delta("scorch_ingest_bytes_total") == pushes.bytes,
          "ingest bytes moved by %d, want %d" % (delta("scorch_ingest_bytes_total"),
                                                 pushes.bytes))
    check(delta("scorch_ingest_samples_total") > 0, "ingest samples did not move")
    qc = delta("scorch_query_duration_seconds_count")
    check(qc >= stats["render"], "query histogram counted %d, at least %d renders" %
          (qc, stats["render"]))
    check(m1['scorch_query_duration_seconds_bucket{le="+Inf"}'] ==
          m1["scorch_query_duration_seconds_count"], "+Inf bucket != count")
    buckets = [v for k, v in m1.items() if k.startswith("scorch_query_duration_seconds_bucket")]
    check(buckets == sorted(buckets), "histogram buckets are not cumulative")
    check("scorch_query_duration_seconds_sum" in m1, "no histogram sum")
    # SQLite's page caches in their slab: three quarters of storage.cache_memory (64 MiB),
    # reserved and touched at start (so in RSS), in use after the queries above
    slab = m1['scorch_sqlite_memory_bytes{part="page_cache_slab"}']
    used = m1['scorch_sqlite_memory_bytes{part="page_cache_used"}']
    check(47 << 20 <= slab <= 48 << 20, "the page caches' slab is %d bytes, want 3/4 of 64 MiB"
          % slab)
    check(0 < used <= slab, "the slab's part in use is %d of %d" % (used, slab))
    check(srv.rss_mb() * 2**20 > slab, "RSS %.1f MiB is less than the slab reserved at start "
          "(%.1f MiB)" % (srv.rss_mb(), slab / 2**20))
    check(m1['scorch_sqlite_memory_bytes{part="heap"}'] > 0, "SQLite's heap shows nothing")
    e0 = m1.get('scorch_http_errors_total{reason="bad_request"}', 0)
    f0 = m1.get('scorch_http_errors_total{reason="format"}', 0)
    expect_error(srv, 400, "POST", "/ingest", {"name": "x", "format": "pprof"}, body=b"junk",
                 what="a junk pprof")
    expect_error(srv, 400, "GET", "/api/v1/render", {"type": "cpu:cpu", "query": "{a="},
                 what="a broken selector")
    m2 = srv.metrics()
    check(m2['scorch_http_errors_total{reason="bad_request"}'] +
          m2.get('scorch_http_errors_total{reason="format"}', 0) == e0 + f0 + 2,
          "error counters did not move by 2")
    check(m2["scorch_ingest_profiles_total"] == m1["scorch_ingest_profiles_total"],
          "a refused push was counted as ingested")
    check(srv.ok("/healthz").decode().strip() == "ok", "healthz")
    check(b"<html" in srv.ok("/").lower(), "GET / is not the UI's HTML")
    print("metrics: ingests %d, bytes %d, query histogram %d; errors counted"
          % (len(pushes.list), pushes.bytes, qc))

    tenants(srv)

    # ---- restart on the same data: the same answers ----
    queries = [("/api/v1/profile_types", {}), ("/api/v1/labels", {}),
               ("/api/v1/label_values", {"name": "service_name"}),
               ("/api/v1/series", dict(query='{job="test"}', **RANGE)),
               ("/api/v1/render", dict(query=q("synth"), type="cpu:samples", format="tsv",
                                       **RANGE)),
               ("/api/v1/render", dict(query=q("synth"), type="cpu:samples", format="json",
                                       **RANGE)),
               ("/api/v1/timeline", dict(query='{job="test"}', type="cpu:cpu", step="60s",
                                         **RANGE))]
    if ctx:
        queries += [
            ("/api/v1/render", dict(query='{job="test"}', type="cpu:cpu", format="tsv",
                                    **RANGE)),
            ("/api/v1/render", dict(query=q("mem-sort"), type="heap:inuse_space",
                                    format="folded", **RANGE)),
            ("/api/v1/render", dict(query=q("gauge-app"), type="heap:inuse_space",
                                    format="tsv", **RANGE)),
            ("/api/v1/timeline", dict(query='{job="test"}', type="heap:inuse_space",
                                      step="10s", **RANGE)),
            ("/api/v1/diff", ctx["diff"]),
            ("/api/v1/heatmap", dict(query=q(ctx["perfs"][0]["service"]),
                                     type=ctx["perfs"][0]["type"], **RANGE)),
            ("/api/v1/source", dict(query=q("cpu-sort"), type="cpu:cpu",
                                    function="sort.insertionSort", **RANGE)),
            ("/api/v1/callgraph", dict(query=q("cpu-sort"), type="cpu:cpu", format="dot",
                                       **RANGE)),
        ]
    before = [srv.ok(p, a) for p, a in queries]
    # a second server on the same data would hand out the same ids: it must refuse
    r = subprocess.run([SCORCH, "server", "--data", srv.data, "--listen", "127.0.0.1:0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    check(r.returncode != 0 and b"in use" in r.stderr,
          "a second server on the same data directory: exit %d, %r"
          % (r.returncode, r.stderr[-200:]))
    rc, secs = srv.stop()
    check(rc == 0, "server exited with %s on SIGTERM" % rc)
    srv.start()
    after = [srv.ok(p, a) for p, a in queries]
    for (p, a), x, y in zip(queries, before, after):
        check(x == y, "after a restart %s %s answers differently" % (p, a))
    print("restart: stopped in %.2f s, %d queries answer the same" % (secs, len(queries)))
    auth()


def tenants(srv):
    body = b"tenant;only 7\n"
    t = T0 + 2800
    for org in ("a", "b"):
        srv.push(body, name="tenant-%s{job=t}" % org, format="folded",
                 headers={"X-Scope-OrgID": org}, **{"from": str(t), "until": str(t + 10)})
    svc = srv.json("/api/v1/label_values", {"name": "service_name"})
    check(not [s for s in svc if s.startswith("tenant-")], "tenant pushes visible without "
          "X-Scope-OrgID: %s" % svc)
    for org in ("a", "b"):
        h = {"X-Scope-OrgID": org}
        got = srv.json("/api/v1/label_values", {"name": "service_name"}, headers=h)
        check(got == ["tenant-" + org], "tenant %s sees %s" % (org, got))
        got = srv.json("/api/v1/series", dict(query="{}", **RANGE), headers=h)
        check(len(got) == 1, "tenant %s series: %s" % (org, got))
        tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query="{}", type="cpu:samples",
                                                           format="tsv", **RANGE),
                                    headers=h).decode())
        check(tsv == {"tenant": (0, 7), "only": (7, 7)}, "tenant %s render: %s" % (org, tsv))
        types = [x["id"] for x in srv.json("/api/v1/profile_types", headers=h)]
        check(types == ["cpu:cpu", "cpu:samples"], "tenant %s types %s" % (org, types))
    got = srv.json("/api/v1/series", dict(query="{}", **RANGE), headers={"X-Scope-OrgID": "c"})
    check(got == [], "tenant c sees %s" % got)
    tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query='{service_name=~"tenant-.*"}',
                                                       type="cpu:samples", format="tsv",
                                                       **RANGE)).decode())
    check(tsv == {}, "the default tenant renders other tenants' data: %s" % tsv)
    print("tenants: a, b and the default tenant see only their own data")


def auth():
    tok = "s3cret-token-%d" % os.getpid()
    tf = os.path.join(TMP, "token")
    with open(tf, "w") as f:
        f.write(tok + "\n")
    cfg = os.path.join(TMP, "auth.yaml")
    with open(cfg, "w") as f:
        f.write("auth: {token_file: %s}\n" % tf)
    srv = Server(SCORCH, os.path.join(TMP, "data-auth"), os.path.join(TMP, "auth.log"),
                 config=cfg).start()
    try:
        r = dict(query="{}", type="cpu:samples", **RANGE)
        endpoints = [
            ("POST", "/ingest", {"name": "authapp", "format": "folded", "from": str(T0)},
             b"x;y 3\n"),
            ("GET", "/api/v1/profile_types", {}, None),
            ("GET", "/api/v1/labels", {}, None),
            ("GET", "/api/v1/label_values", {"name": "service_name"}, None),
            ("GET", "/api/v1/series", dict(query="{}"), None),
            ("GET", "/api/v1/render", dict(r, format="tsv"), None),
            ("GET", "/api/v1/timeline", r, None),
            ("GET", "/api/v1/diff", r, None),
            ("GET", "/api/v1/heatmap", r, None),
            ("GET", "/api/v1/callgraph", dict(r, format="dot"), None),
            ("GET", "/api/v1/source", dict(r, function="y"), None),
            ("GET", "/", {}, None),
            ("GET", "/index.html", {}, None),
        ]
        # Basic auth is refused even with the token as its password (docs/api.md)
        basic = "Basic " + base64.b64encode(("anyone:" + tok).encode()).decode()
        bad = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + tok + "x"},
               {"Authorization": "Basic " + tok}, {"Authorization": "Bearer"},
               {"Authorization": basic}]
        for method, path, params, body in endpoints:
            for h in bad:
                if path in ("/", "/index.html"):
                    # a browser gets a page asking for the token, still with 401
                    st, hdrs, data = srv.request(method, path, params, body=body, headers=h)
                    check(st == 401 and b"token" in data and b"<form" in data,
                          "%s %s with %s: %d %s" % (method, path, h, st, data[:120]))
                    continue
                expect_error(srv, 401, method, path, params, body=body, headers=h,
                             words=["token"], what="%s %s with %s" % (method, path, h))
            st, _, data = srv.request(method, path, params, body=body,
                                      headers={"Authorization": "Bearer " + tok})
            check(st == 200, "%s %s with the token: %d %s" % (method, path, st, data[:200]))
        expect_error(srv, 401, "GET", "/api/v1/labels", headers={"Authorization": basic},
                     words=["basic auth is not accepted", "Bearer"])
        # refused from the request head alone: a big body is not read (nor buffered)
        t0 = time.time()
        st, body = raw_exchange(srv.port, b"POST /ingest?name=x HTTP/1.1\r\nHost: x\r\n"
                                b"Content-Length: 60000000\r\n\r\n", timeout=10)
        check(st == 401 and time.time() - t0 < 5, "an unauthorized 60 MB push: %s after "
              "%.1f s" % (st, time.time() - t0))
        # the UI's cookie works like the header
        st, _, _ = srv.request("GET", "/api/v1/labels", headers={"Cookie": "scorch_token=" + tok})
        check(st == 200, "the scorch_token cookie: %d" % st)
        st, _, _ = srv.request("GET", "/api/v1/labels", headers={"Cookie": "scorch_token=x"})
        check(st == 401, "a wrong scorch_token cookie: %d" % st)
        for path in ("/metrics", "/healthz"):
            st, _, _ = srv.request("GET", path)
            check(st == 200, "%s needs no token, got %d" % (path, st))
        m = srv.metrics()
        check(m['scorch_http_errors_total{reason="auth"}'] == len(endpoints) * len(bad) + 3,
              "auth errors counted %s, want %d" % (m['scorch_http_errors_total{reason="auth"}'],
                                                   len(endpoints) * len(bad) + 3))
        check(m["scorch_ingest_profiles_total"] == 1,  # once, with Bearer
              "refused pushes were stored")
        tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(r, format="tsv"), headers={
            "Authorization": "Bearer " + tok}).decode())
        check(tsv == {"x": (0, 3), "y": (3, 3)}, "auth server data: %s" % tsv)  # one push
    finally:
        rc, _ = srv.stop()
    check(rc == 0, "auth server exit status %s" % rc)
    print("auth: %d endpoints refuse %d bad credentials with 401 and work with the token"
          % (len(endpoints), len(bad)))


main_wrapper(main)
