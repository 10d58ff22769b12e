#!/usr/bin/env python3
"""Writes small profile.proto files for the CLI tests, each a case named on the command line.

usage: cli_pprof.py CASE OUT   (uncompressed protobuf; CASE as in CASES below)

A profile is given as stacks of function names, leaf first; "g@f" is one location whose
lines are g inlined into f (innermost first, as profile.proto orders them).
"""
import sys


def varint(n):
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(num, payload):
    if isinstance(payload, int):
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def packed(num, values):
    return field(num, b"".join(varint(v) for v in values))


def profile(types, samples, binary=None):
    """types: [(type, unit)]; samples: [([frame, ...] leaf first, [value per type])]."""
    strings = [""]

    def s(text):
        if text not in strings:
            strings.append(text)
        return strings.index(text)

    functions, locations = {}, {}

    def fn_id(name):
        if name not in functions:
            functions[name] = len(functions) + 1
        return functions[name]

    def loc_id(frame):
        if frame not in locations:
            locations[frame] = len(locations) + 1
        return locations[frame]

    out = bytearray()
    for t, u in types:
        out += field(1, field(1, s(t)) + field(2, s(u)))
    for stack, values in samples:
        out += field(2, packed(1, [loc_id(f) for f in stack]) + packed(2, values))
    out += field(3, field(1, 1) + field(2, 0x1000) + field(3, 0x100000) +
                 (field(5, s(binary)) if binary else b""))
    for frame, lid in list(locations.items()):
        lines = b"".join(field(4, field(1, fn_id(name))) for name in frame.split("@"))
        out += field(4, field(1, lid) + field(2, 1) + lines)
    for name, fid in functions.items():
        out += field(5, field(1, fid) + field(2, s(name)))
    for text in strings:
        out += field(6, text.encode())
    return bytes(out)


def edge_cut():
    """Big flat, 600 leaves under the node cut, and g called by h (100) and inlined into f
    (7, under 0.001 of the 9907 in all): no "(inline)" mark for g at pprof's cuts."""
    samples = [(["big", "main"], [5000]), (["g", "h", "main"], [100]),
               (["g@f", "main"], [7])]
    samples += [(["t%d" % i, "main"], [8]) for i in range(600)]
    return profile([("samples", "count")], samples)


CASES = {
    # a function without a name: pprof's -top calls it <unknown>, or [binary] with a file
    "nameless": lambda: profile([("samples", "count")],
                                [(["leaf", "", "main"], [5]), (["x", "main"], [3])]),
    "nameless-bin": lambda: profile([("samples", "count")],
                                    [(["leaf", "", "main"], [5]), (["x", "main"], [3])],
                                    binary="/usr/bin/prog"),
    # a sample type without a name: no "Type:" line
    "untyped": lambda: profile([("", "count")], [(["f", "main"], [3])]),
    # a light inlined edge (5 of 10005) that pprof's edge cut drops, also at -nodefraction=0
    "light-inline": lambda: profile([("samples", "count")],
                                    [(["big", "main"], [10000]), (["g@f", "main"], [5])]),
    "edge-cut": edge_cut,
    # bad inputs: no sample types; a sample on a location that is not there
    "no-types": lambda: field(6, b""),
    "bad-location": lambda: profile([("samples", "count")], [(["f", "main"], [2])]) +
    field(2, packed(1, [9]) + packed(2, [1])),
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        sys.exit("usage: cli_pprof.py CASE OUT (cases: %s)" % ", ".join(sorted(CASES)))
    with open(sys.argv[2], "wb") as f:
        f.write(CASES[sys.argv[1]]())
