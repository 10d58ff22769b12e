#!/usr/bin/env python3
"""totals.py - compares a speedscope file with `go tool pprof -raw` of the same profile.

Usage: totals.py RAW.txt FILE.json
Per sample type: the profile exists with the right unit, endValue and the sum of weights
equal the sum of that column in the raw listing (exact integers), at least one speedscope
sample per non-zero raw value (pprof merges duplicate samples as it reads, scorch keeps them); activeProfileIndex is pprof's default type ([dflt]) or the last one.

`pprof -raw` leaves out samples that have no locations (its -top total still counts them:
cpu-encoding_json has one), so those, which speedscope gets as empty stacks, are added to
the raw sums from the speedscope side and counted apart.
"""
import json
import re
import sys

UNITS = {"nanoseconds": "nanoseconds", "microseconds": "microseconds",
         "milliseconds": "milliseconds", "seconds": "seconds", "bytes": "bytes"}


def parse_raw(path):
    types, rows, dflt = [], [], None
    state = 0
    for line in open(path, encoding="utf-8", errors="replace"):
        if state == 0:
            if line.startswith("Samples:"):
                state = 1
        elif state == 1:
            for i, t in enumerate(line.split()):
                if t.endswith("[dflt]"):
                    dflt = i
                    t = t[: -len("[dflt]")]
                name, _, unit = t.partition("/")
                types.append((name, unit))
            state = 2
        else:
            if not line.startswith(" "):
                break  # "Locations" and later sections
            m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", line)
            if m:
                rows.append([int(v) for v in m.group(1).split()])
    return types, rows, dflt


def main():
    raw, js = sys.argv[1], sys.argv[2]
    types, rows, dflt = parse_raw(raw)
    doc = json.load(open(js, encoding="utf-8"))
    errs = []
    if len(doc["profiles"]) != len(types):
        errs.append("%d profiles for %d sample types" % (len(doc["profiles"]), len(types)))
    want_active = dflt if dflt is not None else len(types) - 1
    if doc.get("activeProfileIndex") != want_active:
        errs.append("activeProfileIndex %s, want %d" % (doc.get("activeProfileIndex"), want_active))
    for i, (name, unit) in enumerate(types):
        if i >= len(doc["profiles"]):
            break
        p = doc["profiles"][i]
        col = [r[i] for r in rows if len(r) == len(types)]
        empty = [w for s, w in zip(p["samples"], p["weights"]) if not s]
        total = sum(col) + sum(empty)
        nonzero = sum(1 for v in col if v != 0) + len(empty)
        if not p["name"].endswith("(%s)" % name) and p["name"] != name:
            errs.append("profile %d is named %r, want type %s" % (i, p["name"], name))
        if p["unit"] != UNITS.get(unit, "none"):
            errs.append("%s: unit %s for %s" % (name, p["unit"], unit))
        if p["endValue"] != total or sum(p["weights"]) != total:
            errs.append("%s: endValue %s, weights sum %s, pprof -raw sum %s"
                        % (name, p["endValue"], sum(p["weights"]), total))
        # pprof merges samples with equal locations and labels as it reads, scorch does not
        if len(p["samples"]) < nonzero:
            errs.append("%s: %d samples, pprof -raw has %d non-zero" % (name, len(p["samples"]), nonzero))
    if not rows:
        errs.append("no samples parsed from %s" % raw)
    for e in errs:
        print("%s: %s" % (js, e), file=sys.stderr)
    if not errs:
        print("%s: totals match go tool pprof -raw (%d types, %d samples)" % (js, len(types), len(rows)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
