"""cpuprofile_expect.py - what a V8 .cpuprofile says, read with Python's json alone (no scorch
code), for tests/e2e/cpuprofile.sh:

  cpuprofile_expect.py folded FILE samples|cpu   folded stacks (root first, sorted lines):
                                                 per sample 1, or its time delta in ns
                                                 (negative deltas count 0)
  cpuprofile_expect.py totals FILE               "<samples> <cpu ns> <first sample time ns>"
  cpuprofile_expect.py trace FILE OUT [array]    the same profile as a Chrome trace: a
                                                 Profile event and two ProfileChunk events
                                                 (nodes with parent), {"traceEvents":...}
                                                 or a bare array
"""
import json
import sys


def stacks(prof):
    nodes = {n["id"]: n for n in prof["nodes"]}
    parent = {}
    for n in prof["nodes"]:
        for c in n.get("children", []):
            parent[c] = n["id"]

    def name(n):
        return n["callFrame"]["functionName"] or "(anonymous)"

    def stack(i):
        out = []
        while i is not None:
            n = nodes[i]
            if name(n) == "(root)" and i not in parent and out:
                break
            out.append(name(n))
            i = parent.get(i)
        return ";".join(reversed(out))

    return stack


def main():
    what, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        prof = json.load(f)
    if what == "folded":
        stack = stacks(prof)
        sums = {}
        for s, d in zip(prof["samples"], prof["timeDeltas"]):
            v = 1 if sys.argv[3] == "samples" else max(d, 0) * 1000
            k = stack(s)
            sums[k] = sums.get(k, 0) + v
        lines = sorted("%s %d" % (k, v) for k, v in sums.items() if v)
        sys.stdout.write("".join(l + "\n" for l in sorted(lines, key=lambda l: l.encode())))
    elif what == "totals":
        d = prof["timeDeltas"]
        print(len(prof["samples"]), sum(max(x, 0) for x in d) * 1000,
              (prof["startTime"] + d[0]) * 1000)
    elif what == "trace":
        parent = {}
        for n in prof["nodes"]:
            for c in n.get("children", []):
                parent[c] = n["id"]
        nodes = []
        for n in prof["nodes"]:
            m = {"id": n["id"], "callFrame": n["callFrame"]}
            if n["id"] in parent:
                m["parent"] = parent[n["id"]]
            nodes.append(m)
        half, nh = len(prof["samples"]) // 2, len(nodes) // 2
        ev = [{"name": "TracingStartedInBrowser", "ph": "I", "pid": 7, "tid": 9, "ts": 1,
               "args": {"data": {"frames": [{"frame": "A", "url": "x"}]}}},
              {"name": "Profile", "ph": "P", "pid": 7, "tid": 9, "id": "0x1", "ts": 2,
               "args": {"data": {"startTime": prof["startTime"]}}}]
        # parents come before children in V8's node order, so a chunk never names a node
        # of a later one
        for nn, ss in ((nodes[:nh], slice(0, half)), (nodes[nh:], slice(half, None))):
            ev.append({"name": "ProfileChunk", "ph": "P", "pid": 7, "tid": 9, "id": "0x1",
                       "ts": 3, "args": {"data": {
                           "cpuProfile": {"nodes": nn, "samples": prof["samples"][ss]},
                           "timeDeltas": prof["timeDeltas"][ss]}}})
        out = ev if sys.argv[4:] == ["array"] else {"traceEvents": ev, "metadata": {}}
        with open(sys.argv[3], "w") as f:
            json.dump(out, f, indent=1)


main()
