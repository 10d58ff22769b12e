#!/usr/bin/env python3
"""make_seeds.py - writes the fuzz seed corpora in fuzz/corpus/<target>/.

Seeds are small (a few KB): hand-written edge cases plus excerpts of ../shared/testdata when
it is there. The corpus is committed; rerun this only to change it:
    python3 fuzz/make_seeds.py [TESTDATA_DIR]
"""
import gzip
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "testdata")


# ---- a tiny protobuf writer, enough for profile.proto ----

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag(num, wt):
    return varint(num << 3 | wt)


def f_varint(num, v):
    return tag(num, 0) + varint(v)


def f_bytes(num, b):
    return tag(num, 2) + varint(len(b)) + b


def f_packed(num, vals):
    return f_bytes(num, b"".join(varint(v) for v in vals))


def value_type(t, u):
    return f_varint(1, t) + f_varint(2, u)


def function(fid, name, system_name=0, filename=0, start_line=0):
    return f_bytes(5, f_varint(1, fid) + f_varint(2, name) + (f_varint(3, system_name) if system_name else b"")
                   + (f_varint(4, filename) if filename else b"") + (f_varint(5, start_line) if start_line else b""))


def line(fid, ln=0, col=0):
    return f_bytes(4, (f_varint(1, fid) if fid else b"") + (f_varint(2, ln) if ln else b"")
                   + (f_varint(3, col) if col else b""))


def location(lid, lines, mapping=0, address=0):
    body = f_varint(1, lid)
    if mapping:
        body += f_varint(2, mapping)
    if address:
        body += f_varint(3, address)
    return f_bytes(4, body + b"".join(lines))


def mapping(mid, start, limit, filename=0, build_id=0):
    return f_bytes(3, f_varint(1, mid) + f_varint(2, start) + f_varint(3, limit)
                   + (f_varint(5, filename) if filename else b"") + (f_varint(6, build_id) if build_id else b""))


def sample(locs, vals, labels=(), packed=True):
    if packed:
        body = f_packed(1, locs) + f_packed(2, vals)
    else:
        body = b"".join(f_varint(1, x) for x in locs) + b"".join(f_varint(2, x) for x in vals)
    for lb in labels:
        body += f_bytes(3, b"".join(f_varint(k, v) for k, v in lb.items()))
    return f_bytes(2, body)


def strings(table):
    return b"".join(f_bytes(6, s) for s in table)


def pprof_seeds():
    s = [b"", b"samples", b"count", b"cpu", b"nanoseconds", b"main", b"main.go", b"work",
         b"inlined", b"/bin/app", b"thread", b"bytes", b"\xff\xfe bad utf8 \"q\" \\ \n", b"caf\xc3\xa9 \xe2\x82\xac"]
    types = f_bytes(1, value_type(1, 2)) + f_bytes(1, value_type(3, 4))
    one_type = f_bytes(1, value_type(1, 2))
    funcs = function(1, 5, 5, 6, 10) + function(2, 7, 0, 6, 20) + function(3, 8, 0, 6, 30) + function(4, 12) + function(5, 13)
    locs = (location(1, [line(1, 11)], 1, 0x1000) + location(2, [line(3, 31), line(2, 21)], 1, 0x2000)
            + location(3, [], 1, 0x3000) + location(4, [line(4), line(5)]) + location(5, [line(0, 5)], 0, 0x5000))
    maps = mapping(1, 0x1000, 0x9000, 9, 0)
    samples = (sample([2, 1], [3, 30000000]) + sample([3, 2, 1], [1, 10000000], [{1: 10, 2: 7}, {1: 10, 3: 42, 4: 11}])
               + sample([4, 5, 1], [0, 5], packed=False) + sample([1], [2, 20]))
    out = {}
    out["inline-labels"] = (types + samples + maps + locs + funcs + strings(s) + f_varint(9, 1700000000000000000)
                            + f_varint(10, 10 ** 10) + f_bytes(11, value_type(3, 4)) + f_varint(12, 10000000)
                            + f_varint(13, 5) + f_varint(14, 3))
    # references before definitions, and ids far too big for a dense table
    out["sparse-ids"] = (strings(s) + sample([7 << 33, 7 << 33], [9]) + location(7 << 33, [line(1 << 40, 1)])
                         + function(1 << 40, 5) + one_type)
    out["empty-type"] = f_bytes(1, value_type(0, 0))
    out["no-types"] = sample([], []) + strings([b""])
    out["negative-values"] = (one_type + function(1, 5) + location(1, [line(1)]) + sample([1], [-5])
                              + sample([1], [5]) + sample([1], [(1 << 63) - 1]) + sample([1], [(1 << 63) - 1])
                              + strings(s))
    out["unknown-fields"] = (one_type + f_varint(99, 1) + tag(98, 1) + b"\0" * 8 + tag(97, 5) + b"\0" * 4
                             + f_bytes(96, b"xyz") + function(1, 5) + location(1, [line(1)]) + sample([1], [1])
                             + strings(s))
    # inlined lines count as frames (fuzz_limits: 1,024 a sample), strings are
    # bounded (4,096 bytes)
    out["inlined-over-depth"] = (one_type + function(1, 5) + location(1, [line(1, i) for i in range(1100)])
                                 + location(2, [line(1, 1)] * 3) + sample([1], [1]) + sample([2, 2], [1])
                                 + strings(s))
    out["long-string"] = (one_type + function(1, 5) + location(1, [line(1)]) + sample([1], [1])
                          + strings(s[:5] + [b"x" * 5000]))
    for name in ("mem-sort.pb.gz", "mem-strconv.pb.gz"):
        path = os.path.join(TESTDATA, "pprof", name)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                out[name.replace(".pb.gz", "")] = gzip.decompress(fh.read())
    return out


FOLDED = {
    "simple": b"main;work;inner 10\nmain;work 5\nmain;other 3\n",
    "comments-blank-crlf": b"# a comment\n\nmain;a 1\r\nmain;b  2 \r\n  \nmain;a 4\n",
    "differential": b"main;a 1 2\nmain;b 3 0\nmain;a;c 0 7\n",
    "fractions": b"a;b 1.5\na;b 2.\na 0.4\nb .5\n",
    "odd-frames": b";; 1\na;;b 2\n 3\nx y z 4\n\xff\xfe;\xc3\xa9\xe2\x82\xac 5\nq\t\"\\ 6\n",
    "no-count": b"main;a\nmain;b x\n\nmain;c 9",
    "huge-counts": b"a 9223372036854775807\na 9223372036854775807\nb 99999999999999999999999\n",
    "deep": b";".join(b"f%d" % i for i in range(300)) + b" 1\n",
    "long-frame": b"main;" + b"x" * 5000 + b";leaf 1\n",
    "deep-over": b";".join(b"f%d" % (i % 7) for i in range(1100)) + b" 1\n",
    "java-names": b"java;Ljava/lang/Thread;.run;Lcom/x/Y;.z_[j];do_syscall_64_[k] 12\n"
                  b"swapper;cpu_startup_entry;do_idle 40\n",
}

PERF_HAND = [
    b"prog 123/456 [001] 1.000001: 1 cycles:\n\tffffffff81000000 do_syscall_64+0x10 ([kernel.kallsyms])\n"
    b"\t400123 main+0x3 (/bin/prog)\n\n",
    b"java 99 cycles:\n\t7f0000001000 Ljava/lang/Thread;::run (/tmp/perf-99.map)\n"
    b"\t7f0000002000 [unknown] (/tmp/perf-99.map)\n\n",
    b"a b c 5 [000] 2.5: cpu-clock:\n\t1 f (x)\n\t2 g+0x1 (y)\n\n"
    b"a b c 5 [000] 2.6: 3 page-faults:\n\t1 f (x)\n\n",
    b"swapper     0 [000]   759.337518:    2004008 cpu-clock:pppH: \n"
    b"\tffffffff821f2c2b pv_native_safe_halt+0xb ([kernel.kallsyms])\n\n",
]


def perf_excerpt():
    path = os.path.join(TESTDATA, "perf", "system-wide-go-xz.perf.txt")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        blocks = fh.read().split(b"\n\n")
    # one idle, one xz and a few Go samples: every header and frame shape in the file
    picked, kinds = [], set()
    for b in blocks:
        comm = b.split(None, 1)[0] if b.strip() else b""
        if comm not in kinds or (comm == b"goload" and len(picked) < 8):
            kinds.add(comm)
            picked.append(b)
        if sum(len(x) for x in picked) > 3000:
            break
    return b"\n\n".join(picked) + b"\n\n"


def f_fixed64(num, v):
    return tag(num, 1) + (v & ((1 << 64) - 1)).to_bytes(8, "little")


# ---- OTLP profiles (opentelemetry-proto v1development field numbers) ----

def otlp_request():
    """ExportProfilesServiceRequest: a resource with attributes, a scope, one profile with
    the three sample shapes (values only, timestamps only, paired), attributes and links,
    and a dictionary whose tables start with their zero value."""
    strs = [b"", b"samples", b"count", b"cpu", b"nanoseconds", b"main", b"work", b"leaf",
            b"thread.name", b"t1", b"app.go", b"bytes", b"alloc"]
    d = b""
    d += f_bytes(1, b"") + f_bytes(1, f_varint(2, 0x1000) + f_varint(4, 10))
    d += f_bytes(2, b"") + f_bytes(2, f_bytes(3, f_varint(1, 1)) + f_varint(1, 1))
    d += f_bytes(2, f_bytes(3, f_varint(1, 2) + f_varint(2, 10)))
    d += f_bytes(2, f_varint(2, 0x1234) + f_bytes(3, f_varint(1, 3)) + f_bytes(3, f_varint(1, 2) + f_varint(2, 11)))
    d += f_bytes(3, b"") + f_bytes(3, f_varint(1, 5) + f_varint(3, 10)) + f_bytes(3, f_varint(1, 6))
    d += f_bytes(3, f_varint(1, 7))
    d += f_bytes(4, b"") + f_bytes(4, f_bytes(1, bytes(range(1, 17))) + f_bytes(2, b"\xaa" * 8))
    d += b"".join(f_bytes(5, x) for x in strs)
    d += f_bytes(6, b"") + f_bytes(6, f_varint(1, 8) + f_bytes(2, f_varint(8, 9)))
    d += f_bytes(6, f_varint(1, 12) + f_bytes(2, f_varint(3, 5)) + f_varint(3, 11))
    d += f_bytes(7, b"") + f_bytes(7, f_packed(1, [3, 1])) + f_bytes(7, f_packed(1, [2, 1]))
    ns = 10**9
    prof = f_bytes(1, f_varint(1, 1) + f_varint(2, 2)) + f_fixed64(3, 1700000000 * ns)
    prof += f_varint(4, 10 * ns) + f_bytes(5, f_varint(1, 3) + f_varint(2, 4)) + f_varint(6, 10000000)
    prof += f_bytes(2, f_varint(1, 1) + f_packed(4, [10]) + f_packed(2, [1, 2]) + f_varint(3, 1))
    prof += f_bytes(2, f_varint(1, 2) + f_fixed64(5, 1700000001 * ns) + f_fixed64(5, 1700000002 * ns))
    prof += f_bytes(2, f_varint(1, 1) + f_packed(4, [2, 3])
                    + f_bytes(5, (1700000003 * ns).to_bytes(8, "little") + (1700000004 * ns).to_bytes(8, "little")))
    kv = lambda k, v: f_bytes(1, f_bytes(1, k) + f_bytes(2, f_bytes(1, v)))
    res = kv(b"service.name", b"svc") + kv(b"host.name", b"h1")
    scope = f_bytes(1, f_bytes(1, b"scope") + f_bytes(2, b"1"))
    rp = f_bytes(1, res) + f_bytes(2, scope + f_bytes(2, prof))
    return f_bytes(1, rp) + f_bytes(2, d)


OTLP_JSON = (b'{"resourceProfiles":[{"resource":{"attributes":[{"key":"service.name","value":'
             b'{"stringValue":"svc"}}]},"scopeProfiles":[{"scope":{"name":"s"},"profiles":[{'
             b'"sampleType":{"typeStrindex":1,"unitStrindex":2},"timeUnixNano":"1700000000000000000",'
             b'"profileId":"00112233445566778899aabbccddeeff","samples":[{"stackIndex":1,"values":["7"],'
             b'"timestampsUnixNano":["1700000000500000000"],"linkIndex":1,"attributeIndices":[1]}]}]}]}],'
             b'"dictionary":{"stringTable":["","samples","count","f","k"],"functionTable":[{},'
             b'{"nameStrindex":3}],"locationTable":[{},{"lines":[{"functionIndex":1}]}],"stackTable":'
             b'[{},{"locationIndices":[1]}],"linkTable":[{},{"traceId":"0102030405060708090a0b0c0d0e0f10",'
             b'"spanId":"a1a2a3a4a5a6a7a8"}],"attributeTable":[{},{"keyStrindex":4,"value":'
             b'{"doubleValue":1.5}}],"mappingTable":[{}]}}')


def push_request(pprof):
    """push.v1.PushRequest: two series with labels and raw pprofs."""
    lab = lambda k, v: f_bytes(1, f_bytes(1, k) + f_bytes(2, v))
    s1 = lab(b"__name__", b"process_cpu") + lab(b"service_name", b"app") + f_bytes(2, f_bytes(1, pprof))
    s2 = lab(b"service_name", b"app") + f_bytes(2, f_bytes(1, gzip.compress(pprof, mtime=0)) + f_bytes(2, b"id"))
    return f_bytes(1, s1) + f_bytes(1, s2)


def otlp_main():
    """fuzz_otlp's seeds: the first byte picks the decoder (0 OTLP protobuf, 1 OTLP JSON,
    2 push protobuf, 3 push JSON)."""
    pp = pprof_seeds()
    req = otlp_request()
    write("otlp", "pb-shapes", b"\0" + req)
    pprof = pp["inline-labels"]
    payload = f_bytes(1, f_bytes(2, f_bytes(2, f_bytes(9, b"pprof") + f_bytes(10, pprof))))
    write("otlp", "pb-pprof-payload", b"\0" + payload)
    write("otlp", "json-shapes", b"\1" + OTLP_JSON)
    write("otlp", "push-pb", b"\2" + push_request(pprof))
    write("otlp", "push-json", b'\3{"series":[{"labels":[{"name":"service_name","value":"x"}],'
          b'"samples":[{"rawProfile":"' + __import__("base64").b64encode(pprof) + b'"}]}]}')


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data)


# ---- perf records (fuzz_record): what a ring holds, little-endian ----

import struct

PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512


def rec(rtype, body, misc=0, pid=1000, tid=1000, time=0, sample_id=True):
    if sample_id:
        body += struct.pack("<IIQII", pid, tid, time, 0, 0)
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def padded(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)


def r_comm(pid, tid, name, exec_=False, t=0):
    return rec(3, struct.pack("<II", pid, tid) + padded(name), 0x2000 if exec_ else 0, pid, tid, t)


def r_mmap2(pid, addr, length, pgoff, path, ino=1234, t=0):
    body = struct.pack("<IIQQQIIQQII", pid, pid, addr, length, pgoff, 8, 1, ino, 0, 5, 2)
    return rec(10, body + padded(path), 0, pid, pid, t)


def r_task(rtype, pid, ppid, tid, ptid, t=0):
    return rec(rtype, struct.pack("<IIIIQ", pid, ppid, tid, ptid, t), 0, pid, tid, t)


def r_sample(pid, tid, t, ips, period=10101010):
    body = struct.pack("<QIIQIIQQ", ips[-1] if ips else 0, pid, tid, t, 0, 0, period, len(ips))
    body += b"".join(struct.pack("<Q", ip) for ip in ips)
    return rec(9, body, sample_id=False)


def r_sample_stack(pid, tid, t, ips, regs, stack, period=10101010):
    """A sample with user registers (abi 64: bp, sp, ip) and a stack copy, as with unwinding."""
    body = struct.pack("<QIIQIIQQ", ips[-1] if ips else 0, pid, tid, t, 0, 0, period, len(ips))
    body += b"".join(struct.pack("<Q", ip) for ip in ips)
    body += struct.pack("<QQQQ", 2, *regs) + struct.pack("<Q", len(stack)) + stack + struct.pack("<Q", len(stack))
    return rec(9, body, sample_id=False)


def r_switch_out(pid, tid, t, ips, state):
    """A sched_switch sample (--off-cpu): the callchain, then the tracepoint's raw fields
    (prev_state at 32 of 64); the type's top bit makes fuzz_record feed it as a switch ring's."""
    body = struct.pack("<QIIQIIQQ", ips[-1] if ips else 0, pid, tid, t, 0, 0, 1, len(ips))
    body += b"".join(struct.pack("<Q", ip) for ip in ips)
    raw = bytearray(68)
    raw[32:40] = struct.pack("<Q", state)
    body += struct.pack("<I", len(raw)) + bytes(raw)
    return rec(9 | 0x80000000, body, sample_id=False)


def r_switch_in(pid, tid, t, cpu_wide=False):
    body = struct.pack("<II", 1, 1) if cpu_wide else b""
    return rec(15 if cpu_wide else 14, body, 0, pid, tid, t)


def record_seeds():
    base = (r_comm(1000, 1000, "prog", True, 1) +
            r_mmap2(1000, 0x400000, 0x10000, 0, "/bin/prog", t=2) +
            r_mmap2(1000, 0x7f0000000000, 0x20000, 0x1000, "/lib/libc.so.6", 99, 3) +
            r_mmap2(1000, 0x7f1000000000, 0x1000, 0, "//anon", 0, 4))
    user = [PERF_CONTEXT_USER, 0x401010, 0x402020, 0x7f0000001234]
    kern = [PERF_CONTEXT_KERNEL, 0xffffffff81000100, 0xffffffff81000200] + user
    seeds = {
        "basic": bytes([0]) + base + r_sample(1000, 1000, 10, user) + r_sample(1000, 1000, 11, kern),
        "fork-exec-exit": bytes([3]) + base + r_task(7, 1001, 1000, 1001, 1000, 5) +
        r_sample(1001, 1001, 12, user) + r_comm(1001, 1001, "child", True, 13) +
        r_mmap2(1001, 0x500000, 0x1000, 0, "/bin/child", 77, 14) +
        r_sample(1001, 1001, 15, [PERF_CONTEXT_USER, 0x500010]) +
        r_task(4, 1001, 1000, 1001, 1000, 16) + r_sample(1001, 1001, 17, user),
        "threads-jit-lost": bytes([2]) + base + r_task(7, 1000, 1000, 1005, 1000, 5) +
        r_sample(1000, 1005, 20, [PERF_CONTEXT_USER, 0x7f1000000100, 0x1234]) +
        rec(2, struct.pack("<QQ", 1, 7)) + rec(13, struct.pack("<Q", 3)) +
        r_sample(0, 0, 21, [PERF_CONTEXT_KERNEL, 0xffffffff81000300]),
        "regs-stack": bytes([0]) + base + r_sample_stack(
            1000, 1000, 40, user, (0x7ffc0010, 0x7ffc0000, 0x401010),
            struct.pack("<QQQQ", 0x402020, 0x7ffc0030, 0x7f0000001234, 0)) +
        r_sample_stack(1000, 1000, 41, kern, (0, 0x7ffc0000, 0x401010), b""),
        # the first byte's top bit turns --off-cpu on: spans blocked (S), preempted, in D
        "offcpu": bytes([0x83]) + base + r_sample(1000, 1000, 10, kern) +
        r_switch_out(1000, 1000, 20, kern, 1) + r_switch_in(1000, 1000, 5000) +
        r_switch_out(1000, 1000, 6000, user, 0x100) + r_switch_in(1000, 1000, 7000, True) +
        r_switch_out(1000, 1000, 8000, kern, 2) + r_sample(1000, 1001, 9000, user) +
        r_switch_in(1000, 1000, 20000) + r_switch_out(1000, 1000, 30000, kern, 1) +
        r_task(4, 1000, 1000, 1000, 1000, 31000),
        "overlapping-maps": bytes([1]) + base +
        r_mmap2(1000, 0x404000, 0x2000, 0x9000, "/bin/other", 55, 6) +
        r_sample(1000, 1000, 30, [PERF_CONTEXT_USER, 0x405000, 0x403000, 0x40c000]),
    }
    return seeds


# ---- symbol sources (fuzz_symtab): the first byte picks the parser ----

def gopclntab():
    hdr = struct.pack("<IBBBBQQQQQQQQ", 0xfffffff0, 0, 0, 1, 8, 2, 0, 0x401000, 200, 0, 0, 0, 80)
    d = bytearray(512)
    d[:len(hdr)] = hdr
    d[80:100] = struct.pack("<IIIII", 0, 40, 0x100, 48, 0x180)
    d[120:128] = struct.pack("<II", 0, 0)
    d[128:136] = struct.pack("<II", 0x100, 10)
    d[200:220] = b"main.main\0main.burn\0"
    return bytes(d)


def tiny_elf(eh_frame=None, eh_addr=0):
    """An ELF64 with a PT_LOAD, .text, .symtab/.strtab and a build-id note (and an .eh_frame
    at eh_addr when given)."""
    text = b"\x55\x48\x89\xe5\x5d\xc3" * 8
    strtab = b"\0main\0helper\0"
    syms = (b"\0" * 24 +
            struct.pack("<IBBHQQ", 1, 0x12, 0, 1, 0x401000, 16) +
            struct.pack("<IBBHQQ", 6, 0x02, 0, 1, 0x401010, 0))
    note = struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes(range(20))
    shstr = b"\0.text\0.symtab\0.strtab\0.note.gnu.build-id\0.shstrtab\0" + (b".eh_frame\0" if eh_frame else b"")
    parts = [text, syms, strtab, note, shstr] + ([eh_frame] if eh_frame else [])
    offs, off = [], 64 + 56
    for p_ in parts:
        offs.append(off)
        off += len(p_)
    shoff = off
    ehdr = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, b"\0" * 7, 2, 62, 1,
                       0x401000, 64, shoff, 0, 64, 56, 1, 64, 6 + (eh_frame is not None), 5)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, offs[0], 0x401000, 0x401000, len(text), len(text), 0x1000)

    def sh(name, typ, flags, addr, o, size, link=0, info=0, align=1, ent=0):
        return struct.pack("<IIQQQQIIQQ", name, typ, flags, addr, o, size, link, info, align, ent)
    shdrs = (b"\0" * 64 + sh(1, 1, 6, 0x401000, offs[0], len(text), align=16) +
             sh(7, 2, 0, 0, offs[1], len(syms), 3, 1, 8, 24) + sh(15, 3, 0, 0, offs[2], len(strtab)) +
             sh(23, 7, 2, 0, offs[3], len(note), align=4) + sh(42, 3, 0, 0, offs[4], len(shstr)))
    if eh_frame:
        shdrs += sh(52, 1, 2, eh_addr, offs[5], len(eh_frame), align=8)
    return ehdr + phdr + b"".join(parts) + shdrs


def symtab_seeds():
    return {
        "kallsyms": b"\0ffffffff81000000 T _stext\nffffffff81000000 t __pfx\n"
                    b"ffffffff81000100 t helper\t[mod]\nffffffff81000200 D data\nbad\n",
        "perf-map": b"\x01" + b"0x7f0000001000 0x40 LazyCompile:~f a.js:1\n7f0000002000 10 Interp\n",
        "maps": b"\x02" + b"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/prog\n"
                b"7f1c2a000000-7f1c2a022000 r-xp 00001000 fd:01 1234567 /opt/x y/lib.so (deleted)\n"
                b"7ffd0000-7ffd1000 rw-p 00000000 00:00 0\n",
        "gopclntab": b"\x03" + struct.pack("<Q", 0x401000) + gopclntab(),
        "elf": b"\x04" + tiny_elf(),
    }


# ---- call frame information (fuzz_unwind) ----

def uleb(v):
    return varint(v)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def cfi_entry(body):
    body += b"\0" * (-(len(body) + 4) % 4)  # DW_CFA_nop padding
    return struct.pack("<I", len(body)) + body


def cfi_section(addr, fdes):
    """A CIE ("zR", pcrel sdata4, code 1, data -8, ra 16, CFA rsp+8, ra at cfa-8) and FDEs
    (lo, range, instructions) of it; the section's bytes and the FDEs' offsets."""
    out = cfi_entry(b"\0\0\0\0\1zR\0" + uleb(1) + sleb(-8) + bytes([16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1]))
    offs = []
    for lo, rng, insns in fdes:
        offs.append(len(out))
        ptr = len(out) + 4
        rel = lo - (addr + ptr + 4)
        out += cfi_entry(struct.pack("<Iii", ptr, rel, rng) + b"\0" + insns)
    return out, offs


UNWIND_FDES = [
    # push rbp; realigned frame: CFA and rbp through rbp; an undefined return address
    (0x2000, 0x20, bytes([0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0f, 3, 0x76, 0x78, 6, 0x10, 6, 2, 0x76, 0,
                          0x44, 0x0a, 0x07, 16, 0x42, 0x0b, 0x42, 0x0c, 10, 0])),
    # the PLT's expression
    (0x2040, 0x40, bytes([0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22])),
    # a frame pointer frame, advance_loc1/2/4, restore
    (0x2080, 0x100, bytes([0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x02, 0x40, 0xc6, 0x03, 0x10, 0,
                           0x0c, 7, 8])),
]


def unwind_seeds():
    eh, offs = cfi_section(0x1000, UNWIND_FDES)
    # .eh_frame_hdr at 0x800: version 1, pcrel sdata4 eh_frame_ptr, udata4 count, datarel sdata4 table
    hdr = bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack("<iI", 0x1000 - 0x804, len(offs))
    hdr += b"".join(struct.pack("<ii", lo - 0x800, 0x1000 + o - 0x800) for (lo, _, _), o in zip(UNWIND_FDES, offs))
    # .debug_frame: a version 4 CIE (id all ones, address size 8) and an FDE with plain addresses
    dcie = cfi_entry(b"\xff\xff\xff\xff\4\0\x08\0" + uleb(1) + sleb(-8) + uleb(16) + bytes([0x0c, 7, 8, 0x90, 1]))
    dbg = dcie + cfi_entry(struct.pack("<IQQ", 0, 0x3000, 0x40) + bytes([0x41, 0x0e, 16]))
    # a stack for the walk: registers (pc in the frame pointer FDE, sp, fp), then frames
    stack = struct.pack("<QQQ", 0x2090, 0x7000, 0x7000 + 32) + struct.pack("<QQQQ", 0, 0x2050, 0x7040, 0x2010)

    def raw(mode, h, d, e):
        return bytes([mode]) + struct.pack("<HH", len(h), len(d)) + h + d + e
    return {
        "sections": raw(0, hdr, dbg, eh),
        "no-hdr": raw(0, b"", b"", eh),
        "debug-frame-only": raw(0, b"", dbg, b""),
        "arm64": raw(2, b"", b"", eh),
        "tiny-limit": raw(4, hdr, b"", eh),
        "walk": raw(0, b"", b"", stack + eh),
        "elf": b"\x01" + tiny_elf(eh, 0x1000),
    }


# ---- ClickHouse answers (RowBinary), the first byte choosing the parser ----

def rb_u64(v):
    return (v & ((1 << 64) - 1)).to_bytes(8, "little")


def rb_str(b):
    return varint(len(b)) + b


def rb_arr(items, enc):
    return varint(len(items)) + b"".join(enc(x) for x in items)


def clickhouse_seeds():
    stacks = (rb_u64(11) + rb_arr([1, 2, 3], rb_u64) + rb_arr([0, 1, 0], lambda x: bytes([x])) +
              rb_u64(12) + rb_arr([], rb_u64) + rb_arr([], lambda x: bytes([x])))
    frames = b"".join(rb_u64(i) + rb_str(b"main.f%d" % i) + rb_str(b"/src/main.go") +
                      rb_u64(10 * i) + rb_str(b"/bin/app") for i in (1, 2, 3))
    timed = (rb_u64(7) + rb_u64(5000000000) + rb_u64(1000000000) +
             rb_arr([11, 12, 11], rb_u64) + rb_arr([1, -1, 3], rb_u64) +
             rb_arr([5000000001, 5000000002, 5000000002], rb_u64) +
             rb_u64(7) + rb_u64(4000000000) + rb_u64(0) + rb_arr([], rb_u64) * 3)
    counts = b"".join(rb_u64(k) + rb_u64(7) + rb_u64(3) + rb_u64(30000000000) + rb_u64(3)
                      for k in (0, 1, 5))
    strings = rb_str(b"env") + rb_str(b"service_name") + rb_str(b"") + rb_str(b"x" * 300)
    return {"stacks": b"\0" + stacks, "frames": b"\1" + frames, "timed": b"\2" + timed,
            "counts": b"\3" + counts, "strings": b"\4" + strings,
            "stacks-truncated": b"\0" + stacks[:-5], "timed-uneven": b"\2" + timed[:40] +
            rb_arr([1], rb_u64) + rb_arr([], rb_u64) + rb_arr([], rb_u64),
            "huge-length": b"\4" + varint(1 << 62) + b"x"}


def block_seeds():
    """Stored sample blocks (store/block.h), raw codec: an aggregated and a timed one, and
    the damages the store must survive (a row count past any it writes, no column)."""
    agg = b"\0" + bytes([1]) + varint(3) + varint(2) + varint(1) + varint(2) + varint(7) + \
        varint(1) + varint(10) + bytes(varint(2) + varint(4) + varint(6) + varint(1) +
                                        varint(3) + varint(5))
    timed = b"\0" + bytes([2]) + varint(2) + varint(1) + varint(2) + varint(1) + \
        varint(3400) + varint(10) + varint(1) + varint(2) + varint(4)
    return {"agg": agg, "timed": timed,
            "too-many-rows": b"\0" + bytes([1]) + varint(1 << 28) + varint(1),
            "no-columns": b"\0" + bytes([1]) + varint(1) + varint(0) + varint(5),
            "unknown-codec": b"\xff"}


def main():
    for k, v in block_seeds().items():
        write("block", k, v)
    for k, v in clickhouse_seeds().items():
        write("clickhouse", k, v)
    pp = pprof_seeds()
    for k, v in pp.items():
        write("pprof", k, v)
    for k, v in FOLDED.items():
        write("folded", k, v)
    perf = list(PERF_HAND)
    ex = perf_excerpt()
    if ex:
        perf.append(ex)
    for i, v in enumerate(perf):
        # fuzz_perf takes its options from the first byte: a few combinations
        write("perf", "seed-%d" % i, bytes([[0, 1, 3, 4, 8, 16, 31][i % 7]]) + v)
    # detect: every format, gzipped and not, and concatenated gzip members
    write("detect", "pprof-raw", pp["inline-labels"])
    write("detect", "pprof-gz", gzip.compress(pp["inline-labels"]))
    if "mem-sort" in pp:
        write("detect", "mem-sort-gz", gzip.compress(pp["mem-sort"]))
    write("detect", "folded", FOLDED["simple"])
    write("detect", "folded-gz-2members", gzip.compress(b"a;b 1\n") + gzip.compress(b"a;c 2\n") + b"\0\0")
    write("detect", "perf", PERF_HAND[0] + PERF_HAND[3])
    if ex:
        write("detect", "perf-excerpt-gz", gzip.compress(ex))
    write("detect", "empty", b"")
    # ingest: 7 parameter lines (name, from, until, format, sampleRate, units,
    # aggregationType), then the body; bad times, names and bodies
    def ingest(name, params, body):
        write("ingest", name, b"\n".join(params + [b""] * (7 - len(params))) + b"\n" + body)
    ingest("year-2500", [b"app.cpu", b"16725225600"], FOLDED["simple"])
    ingest("until-before-from", [b"app.cpu", b"1700000100", b"1700000000"], FOLDED["simple"])
    ingest("bad-name", [b"bad}"], FOLDED["simple"])
    ingest("no-format-noise", [b"app"], bytes((i * 73 + 19) % 256 for i in range(512)))
    ingest("no-format-pprof", [b"app"], gzip.compress(pp["inline-labels"], mtime=0))
    ingest("inlined-over-depth", [b"app", b"", b"", b"pprof"], pp["inlined-over-depth"])
    # gzip trailers that claim too little: two members (the last one's size), and a lie
    ingest("gzip-2members", [b"app.cpu", b"", b"", b"folded"],
           gzip.compress(FOLDED["deep"], mtime=0) + gzip.compress(FOLDED["simple"], mtime=0))
    liar = bytearray(gzip.compress(FOLDED["deep"], mtime=0))
    liar[-4:] = (100).to_bytes(4, "little")
    ingest("gzip-liar", [b"app.cpu", b"", b"", b"folded"], bytes(liar))
    # delta: two profiles, the first one's length in two little-endian bytes
    def pair(name, a, b):
        if a in pp and b in pp:
            write("delta", name, len(pp[a]).to_bytes(2, "little") + pp[a] + pp[b])
    pair("mem-sort-twice", "mem-sort", "mem-sort")
    pair("mem-sort-then-strconv", "mem-sort", "mem-strconv")
    pair("negative-then-labels", "negative-values", "inline-labels")
    pair("sparse-then-mem", "sparse-ids", "mem-sort")
    for k, v in record_seeds().items():
        write("record", k, v)
    for k, v in symtab_seeds().items():
        write("symtab", k, v)
    for k, v in unwind_seeds().items():
        write("unwind", k, v)
    otlp_main()
    http_main(pp)


def http_main(pp):
    """fuzz_http's seeds: the first byte picks how the rest becomes a request (0 raw, 1 a
    body POSTed to /ingest?<first line>, 2 the same as multipart, 3 OTLP or Connect with the
    first line the Content-Type, 'c' first for Connect)."""
    def raw(head, body=b""):
        return b"\0" + head.replace(b"\n", b"\r\n") + body
    write("http", "raw-healthz", raw(b"GET /healthz HTTP/1.1\nHost: x\nConnection: close\n\n"))
    write("http", "raw-ingest-chunked",
          raw(b"POST /ingest?name=app.cpu&format=folded HTTP/1.1\nHost: x\n"
              b"Transfer-Encoding: chunked\nConnection: close\n\n",
              b"9\r\nmain;a 1\n\r\n0\r\n\r\n"))
    write("http", "raw-render",
          raw(b"GET /render?query=app.cpu%7B%7D&from=now-1h&until=now&format=json HTTP/1.1\n"
              b"Host: x\nConnection: close\n\n"))
    write("http", "raw-bad-header", raw(b"POST /ingest?name=a HTTP/1.1\nContent-Length: x\n\n"))
    write("http", "ingest-folded", b"\1name=app.cpu%7Benv%3Dprod%7D&format=folded\n" + FOLDED["simple"])
    write("http", "ingest-pprof-gz", b"\1name=app.cpu&from=now-10s&until=now&format=pprof\n"
          + gzip.compress(pp["inline-labels"], mtime=0))
    write("http", "ingest-perf", b"\1name=app&format=perf_script&sampleRate=99\n" + PERF_HAND[0])
    write("http", "ingest-no-format", b"\1name=app.cpu\n" + FOLDED["deep"])
    write("http", "multipart-pprof-config", b"\2name=app.alloc&format=pprof\n" + pp["mem-sort"]
          if "mem-sort" in pp else b"\2name=app.alloc&format=pprof\n" + pp["inline-labels"])
    write("http", "multipart-with-config",
          b"\2name=app&format=pprof\n" + pp["inline-labels"] + b"\n--\n"
          b'{"samples":{"units":"samples","aggregation":"sum","display-name":"cpu"}}')
    write("http", "otlp-pb", b"\3application/x-protobuf\n" + otlp_request())
    write("http", "otlp-json", b"\3application/json\n" + OTLP_JSON)
    write("http", "connect-pb", b"\3capplication/proto\n" + push_request(pp["inline-labels"]))
    write("http", "connect-json", b'\3capplication/json\n{"series":[{"labels":[{"name":'
          b'"service_name","value":"x"}],"samples":[{"rawProfile":"'
          + __import__("base64").b64encode(pp["inline-labels"]) + b'"}]}]}')


if __name__ == "__main__":
    main()
