"""Walks the settings table (`scorch settings --tsv`, argv[2]) through every surface that
takes a row: each command of a row with a flag refuses a value just outside the row's bounds
(or not of its type) with the row's own message and takes one just inside, and its --help
names the flag with the row's default. A command that parsed the value by hand would answer
in other words, or with other bounds, and fail here."""
import re
import subprocess
import sys

SCORCH, TSV = sys.argv[1], sys.argv[2]

# flags a command takes with a parser of its own, not a row of the table: (command, flag)
OWN = {
    ("ingest", "--format"): "the format registry (formats/format.c)",
    ("convert", "--format"): "none: convert's is --to, the format registry",
    ("collapse perf", "--pid"): "a switch (keep the pid in the name), not record's --pid",
    ("agent", "--listen"): "the agent's optional /metrics listener: no default",
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
            vals.append(thousandths(hi - 1 if r["below"] else hi))
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
flags_checked = 0

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

if flags_checked < 20:
    fail("only %d flags walked" % flags_checked)
if bad:
    sys.exit(1)
print("ok: %d flag uses read through the table" % flags_checked)
