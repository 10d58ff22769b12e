#!/usr/bin/env python3
"""gen_pprof.py OUT [SAMPLES] [SEED]: writes a realistic gzipped pprof heap profile for
benchmarks, by hand on the protobuf wire format (independent of scorch's encoder).

Shape: one binary mapping; 2,000 functions in 80 packages with file names; locations with
addresses, line numbers and ~15% inlined frames; call stacks 8-64 deep walking a random call
graph from a few roots with Zipf-like popularity (many samples share prefixes, as real
programs do); four sample types like Go's heap profile (alloc_objects, alloc_space,
inuse_objects, inuse_space), alloc_space the default."""
import gzip
import random
import sys


def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def ln(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def u(field, v):
    return key(field, 0) + varint(v) if v else b""


def main():
    out = sys.argv[1]
    nsamples = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    strings, sindex = [""], {"": 0}

    def s(x):
        if x not in sindex:
            sindex[x] = len(strings)
            strings.append(x)
        return sindex[x]

    nfuncs, npkgs = 2000, 80
    pkgs = ["example.com/svc/%s%d" % (rnd.choice(["api", "db", "cache", "codec", "net", "util"]), i)
            for i in range(npkgs)]
    funcs = []
    for i in range(nfuncs):
        pkg = pkgs[rnd.randrange(npkgs)]
        name = "%s.(*T%d).%s%d" % (pkg, i % 37, rnd.choice(["Handle", "Get", "Put", "encode",
                                                              "decode", "run", "loop"]), i)
        funcs.append((s(name), s("/src/%s/file%d.go" % (pkg, i % 11)), 10 + i % 500))
    # random call graph: each function calls a few nearby others (wrapping around, so some
    # call chains recurse, as in real programs)
    callees = [[(i + rnd.randint(1, 300)) % nfuncs for _ in range(rnd.randint(1, 6))]
               for i in range(nfuncs)]
    # a location per (function, call site); some carry an inlined callee
    locs, loc_of = [], {}

    def location(f, site):
        k = (f, site)
        if k not in loc_of:
            lines = [(f, funcs[f][2] + site)]
            if rnd.random() < 0.15 and callees[f]:
                lines.insert(0, (callees[f][0], 5 + site))  # inlined into f, innermost first
            locs.append((0x400000 + 16 * len(locs), lines))
            loc_of[k] = len(locs)
        return loc_of[k]

    roots = [0, 250, 500, 750, 1000, 1250, 1500, 1750]
    samples = bytearray()
    for _ in range(nsamples):
        f = roots[min(int(rnd.paretovariate(1.2)) - 1, len(roots) - 1)]
        depth = rnd.randint(8, 64)
        stack = []
        for _d in range(depth):
            site = rnd.randrange(3)
            stack.append(location(f, site))
            c = callees[f]
            f = c[min(int(rnd.paretovariate(1.5)) - 1, len(c) - 1)]
        stack.reverse()  # leaf first
        objs = rnd.randint(1, 64)
        size = objs * rnd.choice([16, 32, 64, 128, 1024, 4096])
        inuse = objs if rnd.random() < 0.3 else 0
        packed = b"".join(varint(x) for x in stack)
        vals = varint(objs) + varint(size) + varint(inuse) + varint(inuse * size // objs)
        samples += ln(2, ln(1, packed) + ln(2, vals))

    body = bytearray()
    for t, unit in (("alloc_objects", "count"), ("alloc_space", "bytes"),
                    ("inuse_objects", "count"), ("inuse_space", "bytes")):
        body += ln(1, u(1, s(t)) + u(2, s(unit)))
    body += samples
    body += ln(3, u(1, 1) + u(2, 0x400000) + u(3, 0x400000 + 16 * len(locs) + 4096) +
               u(5, s("/usr/local/bin/svc")) + u(6, s("feedfacecafebeef")) + u(7, 1) + u(8, 1) +
               u(9, 1) + u(10, 1))
    for i, (addr, lines) in enumerate(locs):
        m = u(1, i + 1) + u(2, 1) + u(3, addr)
        for f, line in lines:
            m += ln(4, u(1, f + 1) + u(2, line))
        body += ln(4, m)
    for i, (name, fname, start) in enumerate(funcs):
        body += ln(5, u(1, i + 1) + u(2, name) + u(3, name) + u(4, fname) + u(5, start))
    period_type = ln(11, u(1, s("space")) + u(2, s("bytes")))
    default = s("alloc_space")
    for x in strings:
        body += ln(6, x.encode())
    body += u(9, 1700000000000000000) + period_type + u(12, 524288) + u(14, default)
    with gzip.open(out, "wb", compresslevel=6) as f:
        f.write(bytes(body))


main()
