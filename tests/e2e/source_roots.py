"""source_roots.py - the source view confined to server.source_roots.
Usage: source_roots.py TMPDIR (env: SCORCH). See source_roots.sh."""
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, main_wrapper, pb_field, pb_num, pb_varint  # noqa

SCORCH = os.environ["SCORCH"]
TMP = os.path.realpath(sys.argv[1])
NOW = int(time.time())
T0 = NOW - 600
RANGE = {"from": str(T0 - 60), "until": str(NOW + 60)}
SECRET = "OUTSIDE-%d-SECRET" % os.getpid()
LINE = 2  # the sampled line of every function


def field(num, payload):
    """A length-delimited field (bytes) or a varint field (int)."""
    return pb_num(num, payload) if isinstance(payload, int) else pb_field(num, payload)


def pprof(funcs):
    """A pprof profile (gzipped) with one sample of value 10 per (name, filename), each a
    single frame at LINE. Field numbers: profile.proto (ValueType 1, Sample 2, Location 4,
    Function 5, string_table 6)."""
    strings = [""]

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    body = field(1, field(1, s("samples")) + field(2, s("count")))
    for i, (name, filename) in enumerate(funcs, 1):
        body += field(5, field(1, i) + field(2, s(name)) + field(3, s(name)) +
                      field(4, s(filename)))
        body += field(4, field(1, i) + field(4, field(1, i) + field(2, LINE)))
        body += field(2, field(1, pb_varint(i)) + field(2, pb_varint(10)))
    for x in strings:
        body += field(6, x.encode())
    return gzip.compress(body)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    root = os.path.join(TMP, "roots", "proj")
    good = "package app\nfunc Good() { inside() } // INSIDE-LINE\n"
    write(os.path.join(root, "app", "main.go"), good)
    write(os.path.join(TMP, "outside", "secret.go"), "package x\n%s line two\n" % SECRET)
    os.symlink(os.path.join(TMP, "outside", "secret.go"), os.path.join(root, "link.go"))
    os.symlink(os.path.join(TMP, "outside"), os.path.join(root, "escape"))
    os.symlink(os.path.join(root, "app", "main.go"), os.path.join(root, "inside_link.go"))
    # (function, file named in the profile, whether its text may be shown)
    cases = [
        ("f.good", "app/main.go", True),
        ("f.inside_link", "inside_link.go", True),
        ("f.abs_in_root", "/build/ci/proj/app/main.go", True),  # pprof's /<root base>/ guess
        ("f.dotdot", "../../outside/secret.go", False),
        ("f.dotdot_deep", "app/../../../outside/secret.go", False),
        ("f.absolute", os.path.join(TMP, "outside", "secret.go"), False),
        ("f.symlink_file", "link.go", False),
        ("f.symlink_dir", "escape/secret.go", False),
        ("f.proc_cwd", "/proc/self/cwd/../../outside/secret.go", False),
        ("f.etc", "/etc/hostname", False),
    ]
    cfg = os.path.join(TMP, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write("server: {source_roots: [%s]}\n" % json.dumps(root))
    srv = Server(SCORCH, os.path.join(TMP, "data"), os.path.join(TMP, "server.log"),
                 config=cfg).start()
    try:
        st, _, data = srv.request("POST", "/ingest", {"name": "srcapp.cpu", "format": "pprof",
                                                      "from": str(T0)},
                                  body=pprof([(n, f) for n, f, _ in cases]))
        check(st == 200, "push: %d %r" % (st, data[:200]))
        types = srv.json("/api/v1/profile_types")
        check(types, "no profile types after the push")
        typ = types[0] if isinstance(types[0], str) else types[0].get("id")
        shown = hidden = 0
        for name, filename, readable in cases:
            st, _, data = srv.request("GET", "/api/v1/source", dict(
                query='{service_name="srcapp"}', type=typ, function=name, **RANGE))
            check(st == 200, "%s: status %d %r" % (name, st, data[:200]))
            check(SECRET.encode() not in data, "%s (%s): the outside file's text is in the "
                  "answer" % (name, filename))
            fns = json.loads(data)["functions"]
            check(len(fns) == 1, "%s: %d routines" % (name, len(fns)))
            fn = fns[0]
            sampled = [ln for ln in fn["lines"] if ln["line"] == LINE]
            check(sampled and sampled[0]["flat"] == 10, "%s: line %d's numbers: %s"
                  % (name, LINE, fn["lines"]))
            check(fn["source"] is readable, "%s (%s): source %s, want %s"
                  % (name, filename, fn["source"], readable))
            if readable:
                check(sampled[0].get("text") == good.splitlines()[LINE - 1],
                      "%s: line %d's text %r" % (name, LINE, sampled[0].get("text")))
                shown += 1
            else:
                check(not any(ln.get("text") for ln in fn["lines"]),
                      "%s: text of a file outside the root: %s" % (name, fn["lines"]))
                hidden += 1
        print("source view: %d files inside the root shown, %d outside (.., absolute, "
              "symlinks out, /proc/self/cwd/..) numbers only, their text never sent"
              % (shown, hidden))
    finally:
        srv.kill()


main_wrapper(main)
