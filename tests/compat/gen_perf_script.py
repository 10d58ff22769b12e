#!/usr/bin/env python3
"""Writes random `perf script`-like text that exercises the corner cases of
stackcollapse-perf.pl's line rules: odd headers, symbols with parentheses, "->" inline
chains, [unknown] frames, Java and Go names, JIT maps, missing blank lines, comments.

usage: gen_perf_script.py SEED NSAMPLES > file
"""
import random
import sys

COMMS = ["java", "swapper", "V8 WorkerThread", "a", "ab", "perf", "xz", "kworker/0:1",
         "java-x", "Lfoo", "node", "go load", "x:y", "0", "7z", "comm;semi", "sp ace",
         "t\tab", "java 12"]
EVENTS = ["cycles", "instructions", "cpu-clock", "cpu-clock:pppH", "cycles:u",
          "sched:sched_switch", "page-faults"]
SYMS = ["main", "foo+0x1b", "bar+0x0", "baz+0xABC", "qux+0x", "[unknown]", "(fn)",
        "std::vector<int>::push_back(int const&)", "(anonymous namespace)::f(int)",
        "ns::(anonymous namespace)::g+0x10", "net/http.(*Client).Do",
        "runtime.(*mheap).alloc+0x4f", "a.(b", "x).y", "Lorg/mozilla/Foo;.call(Lx;)V",
        "Ljava/lang/Thread;::run", "L/x", "LNoSlash;::m", "RegExp:[&<>\"']",
        "it's \"quoted\"", "a->b", "a->b->c+0x3", "->lead", "trail->", "->", "a->->b",
        "x_[i]->y_[i]", "f_[j]", "semi;colon", "with space", "with  two  spaces",
        "paren (inside)", "", "+0x12", "interp (x", "end)", "tab\tsym", "_[k]"]
DSOS = ["[kernel.kallsyms]", "/lib/x86_64-linux-gnu/libc.so.6", "[unknown]",
        "/tmp/perf-1234.map", "/tmp/perf-.map", "/tmp/perf-12x.map", "x/tmp/perf-9.map.old",
        "/boot/vmlinux", "/usr/lib/debug/vmlinux-5.0", "[nf_conntrack]", "unknown.so",
        "[unknown", "", "/a/b/c (deleted)", "a)b", "anon_inode:[perf_event]",
        "/usr/bin/ja va", "[vdso]"]


def addr(r):
    return r.choice(["0", "ffffffff8103ce3b", "7f0e2a1b", "deadbeef", "ABCDEF", "x_1",
                     "%x" % r.getrandbits(40)])


def header(r):
    comm = r.choice(COMMS)
    pid = str(r.choice([0, 1, 12, 4152, 25607]))
    form = r.random()
    if form < 0.3:
        ids = pid
    elif form < 0.5:
        ids = pid + "/" + str(r.choice([0, 0, 7, 25608]))
    elif form < 0.55:
        ids = pid + "//" + str(r.choice([0, 9]))
    elif form < 0.6:
        ids = pid + "/"
    else:
        ids = pid
    pad = r.choice([" ", "  ", "     ", "\t"])
    cpu = r.choice(["", " [000]", " [011]", "  [1]"])
    time = r.choice(["", " %d.%06d:" % (r.randint(0, 999999), r.randint(0, 999999))])
    period = r.choice(["", "", " 1", " 0", " 10101010", "   2004008", " 3"])
    ev = r.choice(EVENTS[:2] * 4 + EVENTS)
    tail = r.choice([":", ": ", ":  ", ":\t", ":x"])
    line = comm + pad + ids + cpu + time + period + " " + ev + tail
    if r.random() < 0.05:
        line = comm + pad + ids  # no trailing fields at all
    if r.random() < 0.03:
        line = comm + pad + ids + " " + ev + ":"  # no time
    return line


def frame(r):
    lead = r.choice(["\t", "\t    ", "        ", "", " ", "\t\t"])
    sym = r.choice(SYMS)
    if r.random() < 0.1:
        sym = r.choice(SYMS) + "->" + r.choice(SYMS)
    dso = r.choice(DSOS)
    sep = r.choice([" ", " ", " ", "  ", ""])
    line = lead + addr(r) + sep + sym + " (" + dso + ")"
    x = r.random()
    if x < 0.03:
        line += " trailing"
    elif x < 0.05:
        line = lead + addr(r) + " (" + dso + ")"
    elif x < 0.06:
        line = lead + addr(r) + " " + sym
    elif x < 0.07:
        line = lead + "ff (x)"
    return line


def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    out = []
    if r.random() < 0.3:
        out.append("# ========")
        out.append("# cmdline : /usr/bin/perf record -F 99 -a -g -- sleep 1")
    for _ in range(n):
        out.append(header(r))
        for _ in range(r.choice([0, 1, 2, 3, 5, 8])):
            out.append(frame(r))
            if r.random() < 0.02:
                out.append("#comment in a stack")
            if r.random() < 0.02:
                out.append(header(r))  # a header with no blank line before it
        x = r.random()
        if x < 0.9:
            out.append("")
        elif x < 0.95:
            out.append("")
            out.append("")
    text = "\n".join(out)
    if r.random() < 0.7:
        text += "\n"
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
