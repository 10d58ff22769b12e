#!/usr/bin/env python3
"""gen_folded.py - writes a synthetic but realistic folded-stack file for benchmarks.

Models a program as a call graph: a few thousand functions (C, C++, Java and kernel
names), each with a handful of callees, popularity Zipf-like. Stacks are random walks
from a few thread entry points; depth ends when a function returns, typically 15-60
frames. Distinct stacks get Zipf-like counts; lines are sorted like stackcollapse output.

usage: gen_folded.py [--lines N] [--functions N] [--seed S] > out.folded
"""
import argparse
import bisect
import random
import sys


def make_names(rng, n):
    pkgs = ["com/acme/svc", "org/apache/http", "io/netty/channel", "java/util", "net/db"]
    cls = ["Handler", "Pool", "Codec", "Buffer", "Parser", "Router", "Cache", "Worker"]
    verbs = ["read", "write", "parse", "encode", "decode", "flush", "lookup", "run", "poll",
             "dispatch", "alloc", "free", "copy", "hash", "compare", "visit", "emit", "apply"]
    cpp_ns = ["std", "boost::asio", "folly", "absl", "tbb", "v8::internal"]
    kern = ["do_syscall_64", "entry_SYSCALL_64", "ksys_read", "vfs_read", "tcp_sendmsg",
            "ip_output", "schedule", "finish_task_switch", "page_fault", "handle_mm_fault",
            "copy_user_enhanced_fast_string", "__softirqentry_text_start", "net_rx_action"]
    names, seen = [], set()
    while len(names) < n:
        k = rng.random()
        if k < 0.35:
            s = "%s/%s%d.%s" % (rng.choice(pkgs), rng.choice(cls), rng.randrange(40),
                                rng.choice(verbs))
            if rng.random() < 0.3:
                s += "_[j]"
        elif k < 0.65:
            s = "%s::%s%d<%s>::%s" % (rng.choice(cpp_ns), rng.choice(cls), rng.randrange(40),
                                      rng.choice(["int", "char*", "std::string", "Node&"]),
                                      rng.choice(verbs))
        elif k < 0.85:
            s = "%s_%s_%d" % (rng.choice(verbs), rng.choice(verbs), rng.randrange(200))
        else:
            s = "%s_%d_[k]" % (rng.choice(kern), rng.randrange(20))
        if s not in seen:
            seen.add(s)
            names.append(s)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=300000)
    ap.add_argument("--functions", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    names = make_names(rng, a.functions)
    nf = len(names)
    # Zipf popularity over functions: callee choices favour popular functions.
    zipf = [1.0 / (i + 1) ** 0.8 for i in range(nf)]
    cum, acc = [], 0.0
    for w in zipf:
        acc += w
        cum.append(acc)

    def popular():
        return bisect.bisect_left(cum, rng.random() * acc)

    callees, ccum = [], []
    for f in range(nf):
        cs = [popular() for _ in range(rng.randint(2, 9))]
        ws, s = [], 0.0
        for i in range(len(cs)):
            s += 1.0 / (i + 1) ** 1.3
            ws.append(s)
        callees.append(cs)
        ccum.append(ws)
    roots = [rng.randrange(nf) for _ in range(6)]
    stacks = {}
    target = a.lines
    while len(stacks) < target:
        f = roots[int(rng.random() ** 2 * len(roots))]
        path = ["app", names[f]]
        depth = 0
        while True:
            depth += 1
            # return probability grows with depth: most stacks 15-60 frames deep
            if depth > 8 and rng.random() < 0.02 + depth / 900.0:
                break
            if depth > 120:
                break
            ws = ccum[f]
            f = callees[f][bisect.bisect_left(ws, rng.random() * ws[-1])]
            path.append(names[f])
        key = ";".join(path)
        if key not in stacks:
            # Zipf-like counts: most stacks seen a few times, a few very often
            stacks[key] = max(1, int(1.0 / (rng.random() ** 1.2 + 1e-4)) // 3 + 1)
    out = sys.stdout
    for k in sorted(stacks):
        out.write("%s %d\n" % (k, stacks[k]))


if __name__ == "__main__":
    main()
