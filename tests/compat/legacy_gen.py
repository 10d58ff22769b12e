#!/usr/bin/env python3
"""Writes the profiles tests/compat/legacy_top.sh compares with go tool pprof.

legacy_gen.py cpu BINARY OUTDIR   gperftools CPU profiles of BINARY's functions in the four
                                  encodings pprof reads (32/64-bit words, either order), and a
                                  Java one
legacy_gen.py text BINARY OUTDIR  contention, mutex, threadz, goroutine, heap (Go's, heapz_v2,
                                  growthz) text profiles on BINARY's functions,
                                  Java's heapz and contentionz
legacy_gen.py rawpprof BINARY OUT a pprof of BINARY's addresses, not symbolized
legacy_gen.py names OUT           a pprof whose functions have C++, Rust, Go and Java names,
                                  each its own system name, as pprof-rs and others write them
"""
import gzip
import os
import struct
import subprocess
import sys

BASE = 0x10000000  # fits 32-bit words; the executable segment is mapped at BASE + 0x1000


def symbols(binary):
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "Tt":
            syms[f[2]] = int(f[0], 16)
    return syms


def maps(binary):
    return ("%x-%x r-xp 00001000 08:01 4242 %s\n" % (BASE + 0x1000, BASE + 0x2000, binary) +
            "7f000000-7f100000 r-xp 00000000 08:01 4243 /usr/lib/x86_64-linux-gnu/libc.so.6\n")


def stacks(binary):
    s = symbols(binary)
    a = lambda name, off: BASE + s[name] + off
    # leaf first; callers are return addresses (one past the call), as the profilers write
    return [
        (7, [a("leaf_a", 4), a("mid", 10), a("main", 21)]),
        (3, [a("leaf_b", 2), a("mid", 17), a("main", 21), 0x7f001235]),
        (2, [a("leaf_b", 6), a("leaf_b", 6 + 1), a("mid", 17), a("main", 21)]),  # leaf twice
        (1, [a("mid", 3), a("main", 30)]),
    ]


def cpu(binary, outdir):
    for name, fmt in (("cpu32le", "<I"), ("cpu32be", ">I"), ("cpu64le", "<Q"), ("cpu64be", ">Q")):
        w = lambda v: struct.pack(fmt, v)
        b = w(0) + w(3) + w(0) + w(1000) + w(0)  # header: period 1000 us
        for count, pcs in stacks(binary):
            b += w(count) + w(len(pcs)) + b"".join(w(pc) for pc in pcs)
        b += w(0) + w(1) + w(0)
        b += maps(binary).encode()
        open(os.path.join(outdir, name + ".prof"), "wb").write(b)
    # Java's: third header word 1, addresses not adjusted, named by the text after the trailer
    w = lambda v: struct.pack("<Q", v)
    b = w(0) + w(3) + w(1) + w(10000) + w(0)
    for count, pcs in ((4, [0x100, 0x200, 0x300]), (2, [0x400, 0x300]), (1, [0x100, 0x100])):
        b += w(count) + w(len(pcs)) + b"".join(w(pc) for pc in pcs)
    b += w(0) + w(1) + w(0)
    b += (b"0x100 com.example.A.f (A.java:1)\n0x200 com.example.B.g (B.java:2)\n"
          b"0x300 com.example.Main.main (Main.java:3)\n0x400 VM\n")
    open(os.path.join(outdir, "java_cpu.prof"), "wb").write(b)


def addrs(pcs):
    return " ".join("0x%x" % pc for pc in pcs)


def text(binary, outdir):
    st = stacks(binary)
    m = maps(binary)
    files = {
        "contention.txt": "--- contention:\ncycles/second=2000000000\nsampling period=100\n"
        "ms since reset=5000\n" + "".join(" %d %d @ %s\n" % (c * 1000000, c, addrs(p))
                                          for c, p in st) + "--- Memory map: ---\n" + m,
        "mutex.txt": "--- mutex:\ncycles/second=3000000000\nsampling period=1\n" +
        "".join("%d %d @ %s\n" % (c * 77777, c, addrs(p)) for c, p in st),
        "threadz.txt": "--- threadz 1 ---\n\n" + "".join(
            "--- Thread %x (name: worker/%d) stack: ---\n  PC: %s\n" % (0x7f00 + i, 100 + i, addrs(p))
            for i, (c, p) in enumerate(st)) +
        "--- Thread 7fff (name: idle/9) stack: ---\n  same as previous thread\n"
        "--- Memory map: ---\n" + m,
        "goroutine.txt": "goroutine profile: total 13\n" +
        "".join("%d @ %s\n#\t0x1\tx+0x1\n" % (c, addrs(p)) for c, p in st) + "\n",
        "goheap.txt": "heap profile: 13: 13312 [40: 2097152] @ heap/1048576\n" +
        "".join("%d: %d [%d: %d] @ %s\n" % (c, c * 1024, 3 * c, 3 * c * 65536, addrs(p))
                for c, p in st) + "\n# runtime.MemStats\n# Alloc = 1\n",
        "heapz.txt": "heap profile:   13:  13312 [  13:  13312] @ heapz_v2/524288\n" +
        "".join("%d: %d [%d: %d] @ %s\n" % (c, c * 4096, c, c * 4096, addrs(p)) for c, p in st) +
        "MAPPED_LIBRARIES:\n" + m,
        "growth.txt": "heap profile:   13:  13312 [  0:  0] @ growthz\n" +
        "".join("%d: %d [0: 0] @ %s\n" % (c, c * 1000, addrs(p)) for c, p in st) +
        "--- Memory map: ---\n" + m,
    }
    java_names = ("0x100 java.util.ArrayList.grow (ArrayList.java:237)\n"
                  "0x200 com.example.Cache.put (Cache.java:42)\n"
                  "0x300 com.example.Main.main (Main.java:10)\n"
                  "0x400 libfoo.so_fn (/usr/lib/libfoo.so)\n"
                  "0x500 Interpreter generated stub/JIT\n")
    files["java_heap.txt"] = ("--- heapz 1 ---\nformat = java\nresolution = bytes\n"
                              "    4096   2 @ 0x100 0x200 0x300\n    8192   1 @ 0x400 0x300\n"
                              "    1000   10 @ 0x500\n" + java_names)
    files["java_contention.txt"] = ("--- contentionz 1 ---\nformat = java\n"
                                    "resolution = microseconds\nsampling period = 100\n"
                                    "ms since reset = 6000\n  5000  3 @ 0x100 0x200\n"
                                    "  900  1 @ 0x300\n" + java_names)
    for name, body in files.items():
        open(os.path.join(outdir, name), "w").write(body)


# ---- a pprof by hand (profile.proto) ----

def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def uint(num, v):
    return varint(num << 3) + varint(v)


NAMES = [
    "ns::Foo<int>::bar(int) const",
    "std::vector<std::string, std::allocator<std::string> >::push_back(std::string const&)",
    "(anonymous namespace)::helper(long)",
    "<pprof::backtrace::backtrace_rs::Trace as pprof::backtrace::Trace>::trace",
    "core::ptr::drop_in_place<alloc::vec::Vec<u8>>",
    "_ZN4work6Engine3runEl",
    "_ZN4work3BoxIlE4spinEl",
    "_ZNSt6vectorIiSaIiEE9push_backERKi",
    "_Z3fooi.constprop.0",
    "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
    "_ZN71_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h1a2b3c4d5e6f7a8bE",
    "main.Map[...]",
    "main.(*List[...]).Push",
    "slices.SortFunc[...].func1",
    "example.com/pkg/v2.(*Server).Handle",
    "com.example.Foo.bar(Ljava/lang/String;)V",
    "operator<<",
    "plain_c_function",
]


def names(out):
    strings = ["", "samples", "count", "cpu", "nanoseconds"]
    idx = lambda s: strings.index(s) if s in strings else (strings.append(s) or len(strings) - 1)
    body = field(1, uint(1, idx("samples")) + uint(2, idx("count")))
    body += field(1, uint(1, idx("cpu")) + uint(2, idx("nanoseconds")))
    n = len(NAMES)
    for i, name in enumerate(NAMES):
        s = idx(name)
        body += field(5, uint(1, i + 1) + uint(2, s) + uint(3, s) + uint(4, idx("src.cc")))
        body += field(4, uint(1, i + 1) + uint(3, 0x1000 + 16 * i) +
                      field(4, uint(1, i + 1) + uint(2, 10 + i)))
    # one function whose name differs from its system name: pprof leaves it whole
    s1, s2 = idx("ns::Kept<int>::f(int)"), idx("_ZN2ns4KeptIiE1fEi")
    body += field(5, uint(1, n + 1) + uint(2, s1) + uint(3, s2))
    body += field(4, uint(1, n + 1) + uint(3, 0x9000) + field(4, uint(1, n + 1)))
    for i in range(n + 1):
        locs = [i + 1, ((i + 1) % (n + 1)) + 1]
        vals = [i + 1, (i + 1) * 10000000]
        body += field(2, field(1, b"".join(varint(x) for x in locs)) +
                      field(2, b"".join(varint(x) for x in vals)))
    for s in strings:
        body += field(6, s.encode())
    body += uint(12, 10000000)  # period
    body += field(11, uint(1, idx("cpu")) + uint(2, idx("nanoseconds")))
    open(out, "wb").write(gzip.compress(body))


def rawpprof(binary, out):
    """A pprof of addresses only, in a mapping of BINARY that has no functions yet: pprof
    symbolizes it from the binary, as it does a legacy profile."""
    strings = ["", "samples", "count", binary]
    body = field(1, uint(1, 1) + uint(2, 2))
    body += field(3, uint(1, 1) + uint(2, BASE + 0x1000) + uint(3, BASE + 0x2000) +
                  uint(4, 0x1000) + uint(5, 3))
    addrs = {}
    for count, pcs in stacks(binary):
        ids = []
        for pc in pcs:
            if pc not in addrs:
                addrs[pc] = len(addrs) + 1
                body += field(4, uint(1, addrs[pc]) + uint(2, 1) + uint(3, pc))
            ids.append(addrs[pc])
        body += field(2, field(1, b"".join(varint(x) for x in ids)) + field(2, varint(count)))
    for s in strings:
        body += field(6, s.encode())
    open(out, "wb").write(gzip.compress(body))


if __name__ == "__main__":
    if sys.argv[1] == "cpu":
        cpu(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "text":
        text(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "rawpprof":
        rawpprof(sys.argv[2], sys.argv[3])
    else:
        names(sys.argv[2])
