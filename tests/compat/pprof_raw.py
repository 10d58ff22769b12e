#!/usr/bin/env python3
"""Independent oracle for `scorch top --format tsv`: reads `go tool pprof -raw` output on
stdin and prints flat/cum per function for one sample type, computed from the raw samples
and locations (flat: innermost frame of the leaf location; cum: each function once per
sample). Usage: go tool pprof -raw F | pprof_raw.py SAMPLE_TYPE_INDEX_OR_NAME"""
import re
import sys


def main():
    want = sys.argv[1] if len(sys.argv) > 1 else ""
    lines = sys.stdin.read().splitlines()
    i = lines.index("Samples:") + 1
    types = [t.split("/")[0] for t in lines[i].split()]
    dflt = [k for k, t in enumerate(lines[i].split()) if t.endswith("[dflt]")]
    if want == "":
        col = dflt[0] if dflt else len(types) - 1
    elif want.isdigit():
        col = int(want)
    else:
        col = types.index(want)
    i += 1
    samples = []
    while not lines[i].startswith("Locations"):
        m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$", lines[i])
        if m:
            vals = [int(x) for x in m.group(1).split()]
            samples.append((vals[col], [int(x) for x in m.group(2).split()]))
        i += 1
    i += 1
    locs, cur = {}, None
    while i < len(lines) and not lines[i].startswith("Mappings"):
        m = re.match(r"^\s*(\d+): (0x[0-9a-f]+)(?: M=\d+)?(.*)$", lines[i])
        rest = m.group(3) if m else lines[i]
        if m:
            cur = int(m.group(1))
            locs[cur] = []
        toks = rest.split()
        # "<function> <file>:<line> s=<start>"; names have no spaces in Go
        if len(toks) >= 3 and toks[-1].startswith("s="):
            locs[cur].append(" ".join(toks[:-2]))
        elif m and not toks:
            locs[cur].append(None)
        i += 1
    flat, cum = {}, {}
    for v, ls in samples:
        if v == 0 or not ls:
            continue
        leaf = locs[ls[0]]
        if leaf and leaf[0] is not None:
            flat[leaf[0]] = flat.get(leaf[0], 0) + v
        seen = set()
        for lid in ls:
            for fn in locs[lid]:
                if fn is not None and fn not in seen:
                    seen.add(fn)
                    cum[fn] = cum.get(fn, 0) + v
    for fn in sorted(cum):
        print("%d\t%d\t%s" % (flat.get(fn, 0), cum[fn], fn))


main()
