"""Walks the settings table (`scorch settings --tsv`, argv[2]) through every surface that
takes a row: each command of a row with a flag refuses a value just outside the row's bounds
(or not of its type) with the row's own message and takes one just inside, and its --help
names the flag with the row's default; each route of a row with an HTTP parameter answers
400 with the row's message (argv[3]: a server's base URL), and docs/openapi.yaml (argv[4],
when PyYAML is there) gives it the row's bounds, default and choices. A command or route that
parsed the value by hand would answer in other words, or with other bounds, and fail here."""
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

SCORCH, TSV, BASE = sys.argv[1], sys.argv[2], sys.argv[3]

# flags a command takes with a parser of its own, not a row of the table: (command, flag)
OWN = {
    ("ingest", "--format"): "the format registry (formats/format.c)",
    ("convert", "--format"): "none: convert's is --to, the format registry",
    ("collapse perf", "--pid"): "a switch (keep the pid in the name), not record's --pid",
    ("agent", "--data"): "the agent's optional local store: no default",
}
COMMANDS = ["collapse perf", "flamegraph", "diff-folded", "compare", "top", "convert",
            "callgraph", "list", "heatmap", "server", "agent", "ingest", "record"]

bad = []


def fail(msg):
    bad.append(msg)
    print("FAIL: " + msg)


def thousandths(v):
    s = "%d.%03d" % (v // 1000, v % 1000)
    return s.rstrip("0").rstrip(".")


def outside(r):
    """Values the row refuses: just past each bound, and one not of its type."""
    t, lo, hi = r["type"], r["min"], r["max"]
    vals = []
    if t in ("count", "bytes"):
        vals += [str(lo - 1)] if lo > 0 else ["-1"]
        vals += [str(hi + 1)] if hi else []
        vals.append("12x")
    elif t == "duration":
        vals += ["%dns" % (lo - 1)] if lo > 0 else []
        vals += ["%dns" % (hi + 1)] if hi else []
        vals.append("soon")
    elif t == "number":
        vals.append("0" if lo == 1 else thousandths(lo - 1) if lo > 1 else "-1")
        if hi:
            # past it by a thousandth, or by a thousandth of it where a double cannot tell
            vals.append(thousandths(hi) if r["below"] else thousandths(hi + max(1, hi // 1000)))
        vals.append("nan")
    elif t == "choice":
        vals.append("nope")
    elif t == "addr":
        vals.append("4040")
    elif t == "url":
        vals.append("ftp://x")
    return vals


def inside(r):
    """Values the row takes: its bounds (inside), its default."""
    t, lo, hi = r["type"], r["min"], r["max"]
    vals = [r["default"]] if r["default"] else []
    if t in ("count", "bytes"):
        vals += [str(lo)] + ([str(hi)] if hi else [])
    elif t == "duration":
        vals += ["%dns" % max(lo, 1)] + (["%dns" % hi] if hi else [])
    elif t == "number":
        vals.append(thousandths(lo if lo != 1 else 1))
        if hi:
            # short of an excluded max by a thousandth, or by a thousandth of it where a
            # double cannot tell
            vals.append(thousandths(hi - max(1, hi // 1000) if r["below"] else hi))
    return vals


def flag_block(help_text, flag):
    """The lines of --help that describe flag: its line and the indented ones after it."""
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\s+(-\w, )?%s(\b|=|\s)" % re.escape(flag), line):
            block = [line]
            indent = len(line) - len(line.lstrip())
            for nxt in lines[i + 1:]:
                stripped = nxt.lstrip()
                if not stripped or (stripped.startswith("-") and
                                    len(nxt) - len(stripped) <= indent + 2):
                    break
                block.append(nxt)
            return " ".join(b.strip() for b in block)
    return None


def run(argv):
    p = subprocess.run([SCORCH] + argv, capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


rows = []
for line in open(TSV).read().splitlines():
    key, flag, cmds, param, routes, typ, lo, hi, default, what = line.split("\t")
    none = lambda v: None if v == "-" else v  # noqa: E731
    rows.append(dict(key=none(key), flag=none(flag), cmds=none(cmds), param=none(param),
                     routes=none(routes), type=typ, min=int(lo), max=int(hi),
                     default=none(default), what=what, below=" below " in what))

helps = {c: run(c.split() + ["--help"])[1] for c in COMMANDS}
flags_checked = params_checked = 0

# 1. flags: each command of the row refuses with the row's words and takes what is inside
for r in rows:
    if not r["flag"]:
        continue
    if not r["cmds"]:
        fail("%s has no commands" % r["flag"])
        continue
    for cmd in r["cmds"].split(", "):
        block = flag_block(helps.get(cmd, ""), r["flag"])
        if block is None:
            fail("scorch %s --help does not describe %s" % (cmd, r["flag"]))
            continue
        if r["default"] and r["type"] != "bool" and not (r["default"] in block and "default" in block):
            fail("scorch %s --help: %s does not say its default %s: %r" %
                 (cmd, r["flag"], r["default"], block))
        if r["type"] in ("bool", "path", "string", "list"):
            continue  # switches and names: no bounds to walk
        for v in outside(r):
            rc, _, err = run(cmd.split() + [r["flag"], v, "--help"])
            want = "'%s' must be %s, not '%s'" % (r["flag"], r["what"], v)
            if rc != 2 or want not in err:
                fail("scorch %s %s %s: exit %d, %r (want 2 and %r)" %
                     (cmd, r["flag"], v, rc, err.strip(), want))
        for v in inside(r):
            rc, _, err = run(cmd.split() + [r["flag"], v, "--help"])
            if rc != 0:
                fail("scorch %s %s %s refused: %r" % (cmd, r["flag"], v, err.strip()))
        flags_checked += 1

# 2. no command takes a flag of the table without being named in its row
by_flag = {}
for r in rows:
    if r["flag"]:
        by_flag.setdefault(r["flag"], set()).update((r["cmds"] or "").split(", "))
for cmd, text in helps.items():
    for flag in sorted(set(re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", text, re.M))):
        if flag in by_flag and cmd not in by_flag[flag] and (cmd, flag) not in OWN:
            fail("scorch %s takes %s but no row of the table names it" % (cmd, flag))

# 3. HTTP parameters: each route refuses with 400 and the row's words
common = {"query": '{service_name="walk"}', "type": "cpu:cpu", "from": "now-1h",
          "until": "now", "series": '{service_name="walk"}', "time": "now", "name": "walk",
          "format": None}


def request(route, params):
    q = {k: v for k, v in dict(common, **params).items() if v is not None}
    url = BASE + route + "?" + urllib.parse.urlencode(q)
    data = b"main;work 1\n" if route == "/ingest" else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


for r in rows:
    if not r["param"]:
        continue
    if not r["routes"]:
        fail("parameter %s has no routes" % r["param"])
        continue
    for route in r["routes"].split(", "):
        for v in outside(r):
            st, body = request(route, {r["param"]: v})
            want = "'%s' must be %s, not '%s'" % (r["param"], r["what"], v)
            try:
                msg = json.loads(body).get("error", "")
            except ValueError:
                msg = body
            if st != 400 or want not in msg:
                fail("%s?%s=%s: %d %r (want 400 and %r)" % (route, r["param"], v, st,
                                                            body[:300], want))
        for v in inside(r):
            st, body = request(route, {r["param"]: v})
            if "'%s' must be" % r["param"] in body:
                fail("%s?%s=%s refused: %d %r" % (route, r["param"], v, st, body[:300]))
        params_checked += 1

# 4. docs/openapi.yaml: each route's parameter has the row's bounds, default and choices
try:
    import yaml
except ImportError:
    yaml = None
    print("note: no PyYAML, docs/openapi.yaml not compared with the table")
if yaml and len(sys.argv) > 4:
    spec = yaml.safe_load(open(sys.argv[4]))

    def resolve(p):
        while "$ref" in p:
            node = spec
            for part in p["$ref"].lstrip("#/").split("/"):
                node = node[part]
            p = node
        return p

    for r in rows:
        for route in (r["routes"] or "").split(", ") if r["param"] else []:
            ops = spec["paths"].get(route, {})
            op = ops.get("post" if route == "/ingest" else "get", {})
            ps = [resolve(p) for p in op.get("parameters", [])]
            mine = [p for p in ps if p.get("name") == r["param"] and p.get("in") == "query"]
            if not mine:
                fail("openapi.yaml: %s has no parameter %s" % (route, r["param"]))
                continue
            sch = mine[0].get("schema", {})
            want = {}
            if r["type"] == "count":
                want = {"type": "integer", "minimum": r["min"]}
                if r["max"]:
                    want["maximum"] = r["max"]
                if r["default"]:
                    want["default"] = int(r["default"])
            elif r["type"] == "number":
                want = {"type": "number"}
                if r["default"]:
                    want["default"] = float(r["default"])
            elif r["type"] == "choice":
                want = {"enum": sorted(r["what"][len("one of "):].split(", ")),
                        "default": r["default"]}
                sch = dict(sch, enum=sorted(str(e) for e in sch.get("enum", [])),
                           default=str(sch.get("default")))
            elif r["type"] == "duration":
                want = {"type": "string"}
            for k, v in want.items():
                if sch.get(k) != v:
                    fail("openapi.yaml: %s %s: %s is %r, the table says %r" %
                         (route, r["param"], k, sch.get(k), v))

if flags_checked < 20 or params_checked < 10:
    fail("only %d flags and %d parameters walked" % (flags_checked, params_checked))
if bad:
    sys.exit(1)
print("ok: %d flag uses and %d parameter uses read through the table" %
      (flags_checked, params_checked))
