#!/usr/bin/env python3
"""heatmap_ref.py ROWS FILE - the heatmap of docs/api-heatmap.md computed from `perf script` text
without scorch, for tests/compat/heatmap.sh.

Samples are found the way FlameScope finds them: a line with "<seconds>: <event>:" starts
a sample, and the sample's text is that line and the following ones, each stripped on the
right and concatenated. A sample is idle when that text contains "swapper" followed later
by one of FlameScope's idle function names. Cells use exact decimal arithmetic on the
printed timestamp: column = floor(t) - floor(start), row = floor(rows * frac(t)).

One difference from FlameScope is deliberate: scorch's perf script decoder counts a sample
once a blank line ends it, as stackcollapse-perf.pl does, so a last sample cut off by the
end of the file is not counted here either (FlameScope would count it).

Prints {"start":S,"rows":R,"cols":C,"values":[[...]...],"flamescope_float_cells":N} where N
counts the samples whose cell FlameScope's own float arithmetic would place differently.
"""
import json
import math
import re
import sys

HEADER = re.compile(r" +([0-9]+)(?:\.([0-9]*))?: .+?:")
IDLE = re.compile(r"swapper.*(cpuidle|cpu_idle|cpu_bringup_and_idle|native_safe_halt"
                  r"|xen_hypercall_sched_op|xen_hypercall_vcpu_op)")
NS = 10**9


def samples(path):
    """Yields (timestamp in ns, timestamp as printed, sample text) for each sample."""
    cur, ended = None, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = HEADER.search(line)
            if m:
                if cur:
                    yield cur
                frac = (m.group(2) or "")[:9].ljust(9, "0")
                ts = int(m.group(1)) * NS + int(frac)
                printed = m.group(1) + "." + (m.group(2) or "0")
                cur, ended = [ts, printed, line.rstrip()], False
            elif cur:
                if not line.strip():
                    ended = True
                cur[2] += line.rstrip()
    if cur and ended:
        yield cur


def main():
    rows, path = int(sys.argv[1]), sys.argv[2]
    all_ts, busy, fs_start = [], [], None
    for ts, printed, text in samples(path):
        all_ts.append(ts)
        fs_start = float(printed) if fs_start is None else min(fs_start, float(printed))
        if not IDLE.search(text):
            busy.append((ts, printed))
    if not all_ts:
        print(json.dumps({"start": 0, "rows": rows, "cols": 0, "values": []}))
        return
    start, last = min(all_ts), max(all_ts)
    first_sec = start // NS
    cols = last // NS - first_sec + 1
    values = [[0] * rows for _ in range(cols)]
    moved = 0
    for ts, printed in busy:
        c = ts // NS - first_sec
        r = rows * (ts % NS) // NS
        values[c][r] += 1
        # FlameScope: col = int(floor(ts - floor(start))), row from the top = rows -
        # int(floor(rows * (ts % 1))) - 1, on floats
        t = float(printed)
        fc = int(math.floor(t - math.floor(fs_start)))
        fr = rows - 1 - (rows - int(math.floor(rows * (t % 1))) - 1)
        if (fc, fr) != (c, r):
            moved += 1
    sec, frac = divmod(start, NS)
    s = str(sec) + ("." + ("%09d" % frac).rstrip("0") if frac else "")
    print('{"start":%s,"rows":%d,"cols":%d,"values":%s,"flamescope_float_cells":%d}'
          % (s, rows, cols, json.dumps(values, separators=(",", ":")), moved))


if __name__ == "__main__":
    main()
