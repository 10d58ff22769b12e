#!/usr/bin/env python3
"""callgraph_dot.py FILE.dot - a canonical, order-free digest of a pprof-style DOT call graph
for tests/compat/callgraph.sh: one line per node (name, label with flat/cum, font size,
colours), per tag box (its node, label, value), per edge (caller and callee names,
attributes) and for the legend, sorted. Node ids (N1, N2, ...) are replaced by names, so two
graphs compare equal when they draw the same thing even if the ids are numbered in another
order."""
import re
import sys

NODE = re.compile(r'^N(\d+) \[label="(.*)" id="node\d+" fontsize=(\d+) shape=box '
                  r'tooltip="(.*) \(([^()]*)\)" '
                  r'color="(#[0-9a-f]{6})" fillcolor="(#[0-9a-f]{6})"\]$')
NODELET = re.compile(r'^(N[0-9_N]+) \[label = "(.*)" id="[^"]*" fontsize=8 shape=box3d '
                     r'tooltip="([^"]*)"\]$')
EDGE = re.compile(r'^(N[0-9_N]+) -> (N[0-9_N]+) \[(.*)\]$')


def main():
    names, lines, boxes = {}, [], {}
    text = open(sys.argv[1], encoding="utf-8").read().splitlines()
    for ln in text:
        m = NODE.match(ln)
        if m:
            names["N" + m.group(1)] = m.group(4)
            lines.append("node\t%s\t%s\tfontsize=%s\t%s\t%s\tcum=%s" % (
                m.group(4), m.group(2), m.group(3), m.group(6), m.group(7), m.group(5)))
    for ln in text:
        m = NODELET.match(ln)
        if m:
            boxes[m.group(1)] = m.group(2)
    for ln in text:
        if NODE.match(ln):
            continue
        m = NODELET.match(ln)
        if m:
            owner = re.match(r"N+(\d+)", m.group(1)).group(1)
            lines.append("tag\t%s\t%s\t%s" % (names.get("N" + owner, "?"), m.group(2), m.group(3)))
            continue
        m = EDGE.match(ln)
        if m:
            src, dst = m.group(1), m.group(2)
            if dst in boxes:
                owner = re.match(r"N+(\d+)", dst).group(1)
                lines.append("tagedge\t%s\t%s\t%s" % (names.get("N" + owner, "?"), boxes[dst],
                                                      m.group(3)))
            else:
                lines.append("edge\t%s\t%s\t%s" % (names.get(src, src), names.get(dst, dst),
                                                   m.group(3)))
            continue
        if ln.startswith("subgraph cluster_L"):
            lines.append("legend\t" + ln)
        elif ln.startswith("digraph") or ln.startswith("node [") or ln == "}":
            lines.append("frame\t" + ln)
        else:
            lines.append("other\t" + ln)
    for ln in sorted(lines):
        print(ln)


if __name__ == "__main__":
    main()
