#!/usr/bin/env python3
"""jfr_synth.py - writes a small JFR recording shaped like async-profiler's (contextId on
its samples), Pyroscope's LabelsSnapshot for it, and what scorch must read from them.

    jfr_synth.py OUTDIR [SHIFT_S]

writes OUTDIR/synth.jfr (two chunks, each with its own constant pool ids and time base),
OUTDIR/labels.pb (the LabelsSnapshot protobuf) and OUTDIR/want.<sample type> (folded
stacks as `scorch convert --to folded --sample-index TYPE` prints them for the file alone,
the cpu period being the recording's own 20 ms). The recording covers the last SHIFT_S
(default 10) seconds before now. Everything the JDK's own recordings do not exercise is
in it (and native method samples, which the test program of jfr_cli.sh makes none of): Latin-1, UTF-16 and pooled strings, an event type scorch skips with inline struct
arrays, a sleeping sample, a lambda's generated class, ticks that are not nanoseconds.
"""
import os
import struct
import sys
import time


def varint(v):
    """JFR's varint: 7 bits a byte, the 9th byte carries 8."""
    v &= (1 << 64) - 1
    out = bytearray()
    for _ in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v & 0xFF)
    return bytes(out)


def padded(v):
    """A 4-byte varint, as the JDK writes event sizes."""
    return bytes([(v & 0x7F) | 0x80, ((v >> 7) & 0x7F) | 0x80, ((v >> 14) & 0x7F) | 0x80, (v >> 21) & 0x7F])


def utf8(s):
    b = s.encode()
    return b"\x03" + varint(len(b)) + b


def latin1(s):
    b = s.encode("latin-1")
    return b"\x05" + varint(len(b)) + b


def utf16(s):
    units = s.encode("utf-16-be")
    codes = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    return b"\x04" + varint(len(codes)) + b"".join(varint(c) for c in codes)


def event(type_id, body):
    payload = varint(type_id) + body
    return padded(len(payload) + 4) + payload


# type ids
LONG, INT, BOOL, STRING = 20, 21, 22, 23
SYMBOL, CLASS, METHOD, FRAME, TRACE, STATE, THREAD, PAIR = 30, 31, 32, 33, 34, 35, 36, 37
EXEC, TLAB, MONITOR, PARK, SETTING, CUSTOM, NATIVE, OUTSIDE = 101, 102, 103, 104, 105, 106, 107, 108

CLASSES = [
    (LONG, "long", []), (INT, "int", []), (BOOL, "boolean", []), (STRING, "java.lang.String", []),
    (SYMBOL, "jdk.types.Symbol", [("string", STRING, 0, 0)]),
    (CLASS, "java.lang.Class", [("name", SYMBOL, 1, 0), ("hidden", BOOL, 0, 0)]),
    (METHOD, "jdk.types.Method", [("type", CLASS, 1, 0), ("name", SYMBOL, 1, 0),
                                  ("descriptor", SYMBOL, 1, 0), ("modifiers", INT, 0, 0)]),
    (FRAME, "jdk.types.StackFrame", [("method", METHOD, 1, 0), ("lineNumber", INT, 0, 0),
                                     ("bytecodeIndex", INT, 0, 0)]),
    (TRACE, "jdk.types.StackTrace", [("truncated", BOOL, 0, 0), ("frames", FRAME, 0, 1)]),
    (STATE, "jdk.types.ThreadState", [("name", STRING, 0, 0)]),
    (THREAD, "java.lang.Thread", [("javaName", STRING, 0, 0)]),
    (PAIR, "my.Pair", [("a", LONG, 0, 0), ("b", STRING, 0, 0)]),
    (EXEC, "jdk.ExecutionSample", [("startTime", LONG, 0, 0), ("sampledThread", THREAD, 1, 0),
                                   ("stackTrace", TRACE, 1, 0), ("state", STATE, 1, 0),
                                   ("contextId", LONG, 0, 0)]),
    (TLAB, "jdk.ObjectAllocationInNewTLAB", [("startTime", LONG, 0, 0), ("eventThread", THREAD, 1, 0),
                                             ("stackTrace", TRACE, 1, 0), ("objectClass", CLASS, 1, 0),
                                             ("allocationSize", LONG, 0, 0), ("tlabSize", LONG, 0, 0),
                                             ("contextId", LONG, 0, 0)]),
    (MONITOR, "jdk.JavaMonitorEnter", [("startTime", LONG, 0, 0), ("duration", LONG, 0, 0),
                                       ("eventThread", THREAD, 1, 0), ("stackTrace", TRACE, 1, 0),
                                       ("monitorClass", CLASS, 1, 0), ("contextId", LONG, 0, 0)]),
    (PARK, "jdk.ThreadPark", [("startTime", LONG, 0, 0), ("duration", LONG, 0, 0),
                              ("eventThread", THREAD, 1, 0), ("stackTrace", TRACE, 1, 0),
                              ("parkedClass", CLASS, 1, 0), ("timeout", LONG, 0, 0)]),
    (SETTING, "jdk.ActiveSetting", [("startTime", LONG, 0, 0), ("duration", LONG, 0, 0),
                                    ("eventThread", THREAD, 1, 0), ("id", LONG, 0, 0),
                                    ("name", STRING, 0, 0), ("value", STRING, 0, 0)]),
    (NATIVE, "jdk.NativeMethodSample", [("startTime", LONG, 0, 0), ("sampledThread", THREAD, 1, 0),
                                        ("stackTrace", TRACE, 1, 0), ("state", STATE, 1, 0)]),
    (OUTSIDE, "jdk.ObjectAllocationOutsideTLAB", [("startTime", LONG, 0, 0), ("eventThread", THREAD, 1, 0),
                                                  ("stackTrace", TRACE, 1, 0), ("objectClass", CLASS, 1, 0),
                                                  ("allocationSize", LONG, 0, 0), ("contextId", LONG, 0, 0)]),
    (CUSTOM, "my.Custom", [("startTime", LONG, 0, 0), ("pairs", PAIR, 0, 1), ("note", STRING, 0, 0)]),
]


def metadata():
    strings = []

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    def element(name, attrs, children):
        out = varint(s(name)) + varint(len(attrs))
        for k, v in attrs:
            out += varint(s(k)) + varint(s(v))
        return out + varint(len(children)) + b"".join(children)

    classes = []
    for cid, name, fields in CLASSES:
        fs = []
        for fname, ftype, cp, arr in fields:
            attrs = [("name", fname), ("class", str(ftype))]
            if cp:
                attrs.append(("constantPool", "true"))
            if arr:
                attrs.append(("dimension", "1"))
            fs.append(element("field", attrs, [element("annotation", [("class", "999")], [])]))
        attrs = [("id", str(cid)), ("name", name)]
        if cid >= 100:
            attrs.append(("superType", "jdk.jfr.Event"))
        classes.append(element("class", attrs, fs))
    root = element("root", [], [element("metadata", [], classes),
                                element("region", [("locale", "en_US")], [])])
    body = varint(0) + varint(0) + varint(1) + varint(len(strings))
    body += b"".join(utf8(x) for x in strings) + root
    return event(0, body)


def chunk(base, start_ns, tps, samples, settings, custom):
    """One chunk; ids start at base so that each chunk's differ. samples: (type, stack,
    ctx, ms, extra) with stack leaf first as (class, method, line)."""
    syms, classes, methods, traces = {}, {}, {}, {}

    def sym(x):
        return syms.setdefault(x, base + len(syms))

    def cls(x):
        sym(x)
        return classes.setdefault(x, base + len(classes))

    def meth(c, m):
        cls(c)
        sym(m)
        return methods.setdefault((c, m), base + len(methods))

    def trace(stack):
        for c, m, _ in stack:
            meth(c, m)
        return traces.setdefault(tuple(stack), base + len(traces))

    for s in samples:
        trace(s[1])
    desc = sym("()V")
    # pools: the String pool, symbols (in three encodings, one pooled), classes, methods,
    # traces, thread states, threads
    pools = []
    strpool = [(7, utf8("STATE_RUNNABLE")), (8, utf8("pooled")), (9, utf8("mid"))]
    pools.append((STRING, [varint(i) + v for i, v in strpool]))
    ents = []
    for x, i in syms.items():
        if x == "leaf":
            enc = utf16(x)
        elif x == "mid":
            enc = b"\x02" + varint(9)
        elif x == "othér" or x == "App":
            enc = latin1(x)
        else:
            enc = utf8(x)
        ents.append(varint(i) + enc)
    pools.append((SYMBOL, ents))
    pools.append((CLASS, [varint(i) + varint(sym(c)) + b"\x00" for c, i in classes.items()]))
    pools.append((METHOD, [varint(i) + varint(classes[c]) + varint(syms[m]) + varint(desc) + varint(9)
                           for (c, m), i in methods.items()]))
    tents = []
    for st, i in traces.items():
        fr = b"".join(varint(methods[(c, m)]) + varint(line & 0xFFFFFFFF) + varint(0) for c, m, line in st)
        tents.append(varint(i) + b"\x00" + varint(len(st)) + fr)
    pools.append((TRACE, tents))
    pools.append((STATE, [varint(1) + b"\x02" + varint(7), varint(2) + utf8("STATE_SLEEPING")]))
    pools.append((THREAD, [varint(1) + utf8("main")]))
    cp = varint(1) + varint(0) + varint(0) + b"\x01" + varint(len(pools))
    for t, ents in pools:
        cp += varint(t) + varint(len(ents)) + b"".join(ents)

    evs = b""
    for sid, name, value in settings:
        evs += event(SETTING, varint(0) + varint(0) + varint(1) + varint(sid) + utf8(name) + utf8(value))
    if custom:
        pairs = varint(2) + varint(5) + utf8("x") + varint(6) + b"\x02" + varint(8)
        evs += event(CUSTOM, varint(0) + pairs + latin1("n\xf6te"))
    for typ, stack, ctx, ms, extra in samples:
        t = ms * tps // 1000
        tr = traces[tuple(stack)]
        if typ == "exec":
            evs += event(EXEC, varint(t) + varint(1) + varint(tr) + varint(extra or 1) + varint(ctx))
        elif typ == "outside":
            evs += event(OUTSIDE, varint(t) + varint(1) + varint(tr) + varint(classes["App"]) + varint(extra) +
                         varint(ctx))
        elif typ == "native":
            evs += event(NATIVE, varint(t) + varint(1) + varint(tr) + varint(1))
        elif typ == "tlab":
            evs += event(TLAB, varint(t) + varint(1) + varint(tr) + varint(classes["App"]) + varint(16) +
                         varint(extra) + varint(ctx))
        elif typ == "monitor":
            evs += event(MONITOR, varint(t) + varint(extra) + varint(1) + varint(tr) + varint(classes["App"]) +
                         varint(ctx))
        elif typ == "park":
            evs += event(PARK, varint(t) + varint(extra) + varint(1) + varint(tr) + varint(classes["App"]) +
                         varint(0))
    meta = metadata()
    cp_event = event(1, cp)
    body = meta + cp_event + evs
    size = 68 + len(body)
    header = b"FLR\0" + struct.pack(">HHqqqqqqqI", 2, 1, size, 68 + len(meta), 68, start_ns,
                                    int(1e9), 0, tps, 1)
    return header + body


def main():
    out = sys.argv[1]
    shift = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    start = (int(time.time()) - shift) * 1000000000
    main_ = ("App", "main", 30)
    s1 = [("App", "leaf", 10), ("App", "mid", 20), main_]
    s2 = [("App", "othér", 11), ("App", "main", 31)]
    s3 = [("Foo$$Lambda$14/0x0000000800c03000", "run", -1), main_]
    c1 = [("exec", s1, 1, 100, 1)] * 3 + [("exec", s2, 2, 200, 1)] * 2 + [("exec", s3, 0, 300, 1),
                                                                         ("exec", s1, 1, 400, 2)]
    c1 += [("tlab", s2, 2, 500, 1000), ("tlab", s2, 0, 600, 3000), ("monitor", s1, 1, 700, 5000),
           ("outside", s3, 0, 800, 70000)]
    c2 = [("exec", s1, 1, 100, 1)] * 4 + [("park", s2, 0, 200, 2000)] + [("native", s1, 0, 300, 0)] * 2
    data = chunk(100, start, 1000000000, c1, [(EXEC, "period", "20 ms"), (NATIVE, "period", "30 ms")], True)
    data += chunk(5000, start + 2 * 1000000000, 1000000, c2, [], False)
    with open(os.path.join(out, "synth.jfr"), "wb") as f:
        f.write(data)

    # LabelsSnapshot: contexts {1: {endpoint: /api/a, user: u1}, 2: {endpoint: /api/b}}
    def pb_varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def field(num, wt, payload):
        tag = pb_varint(num << 3 | wt)
        if wt == 0:
            return tag + pb_varint(payload)
        return tag + pb_varint(len(payload)) + payload

    strs = {10: "endpoint", 11: "/api/a", 12: "user", 13: "u1", 14: "/api/b"}
    ctxs = {1: [(10, 11), (12, 13)], 2: [(10, 14)]}
    snap = b""
    for cid, pairs in ctxs.items():
        ctx = b"".join(field(1, 2, field(1, 0, k) + field(2, 0, v)) for k, v in pairs)
        snap += field(1, 2, field(1, 0, cid) + field(2, 2, ctx))
    for sid, text in strs.items():
        snap += field(2, 2, field(1, 0, sid) + field(2, 2, text.encode()))
    with open(os.path.join(out, "labels.pb"), "wb") as f:
        f.write(snap)

    want = {
        "cpu": ["App.main;App.mid;App.leaf 140000000", "App.main;App.othér 40000000",
                "App.main;Foo$$Lambda_.run 20000000"],
        "wall": ["App.main;App.mid;App.leaf 60000000"],
        "alloc_in_new_tlab_objects": ["App.main;App.othér 2"],
        "alloc_in_new_tlab_bytes": ["App.main;App.othér 4000"],
        "alloc_outside_tlab_objects": ["App.main;Foo$$Lambda_.run 1"],
        "alloc_outside_tlab_bytes": ["App.main;Foo$$Lambda_.run 70000"],
        "contentions": ["App.main;App.mid;App.leaf 1"],
        "delay": ["App.main;App.mid;App.leaf 5000"],
        "park_contentions": ["App.main;App.othér 1"],
        "park_delay": ["App.main;App.othér 2000000"],
    }
    for k, lines in want.items():
        with open(os.path.join(out, "want." + k), "w", encoding="utf-8") as f:
            f.write("\n".join(sorted(lines, key=lambda x: x.encode())) + "\n")


if __name__ == "__main__":
    main()
