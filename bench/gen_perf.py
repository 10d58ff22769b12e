#!/usr/bin/env python3
"""gen_perf.py OUTDIR [SECONDS] [HZ] [CPUS]: writes a perf script capture (as `perf script`
prints a `perf record -a -g -F HZ`) of SECONDS seconds at HZ on CPUS CPUs, one file per
minute (OUTDIR/perf-NNN.txt, each starting on a whole second), for benchmarks. Shape: a
few services' call stacks 6-14 frames deep, the CPUs 60% idle, except for the first 150 ms
of every second when one service keeps them busy (the heatmap shows a band)."""
import os
import random
import sys


def main():
    out = sys.argv[1]
    secs = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
    hz = int(sys.argv[3]) if len(sys.argv) > 3 else 99
    cpus = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    rnd = random.Random(1)
    os.makedirs(out, exist_ok=True)
    funcs = ["handle_%d" % i for i in range(60)] + ["parse_%d" % i for i in range(40)]
    stacks = []
    for _ in range(400):
        depth = rnd.randint(6, 14)
        stacks.append(["main", "serve"] + [rnd.choice(funcs) for _ in range(depth - 2)])
    burst = ["main", "tick", "flush_buffers", "compress_block", "deflate_slow", "longest_match"]
    idle = ["cpu_startup_entry", "do_idle", "default_idle_call", "native_safe_halt"]
    period = 1000000000 // hz
    t0 = 5000.0
    for minute in range((secs + 59) // 60):
        with open(os.path.join(out, "perf-%03d.txt" % minute), "w") as f:
            for s in range(minute * 60, min(secs, minute * 60 + 60)):
                for k in range(hz):
                    for cpu in range(cpus):
                        off = (k + cpu * 0.5) / hz
                        t = t0 + s + off
                        if off < 0.15:
                            comm, st = "app", burst
                        elif rnd.random() < 0.6:
                            comm, st = "swapper", idle
                        else:
                            comm, st = "app", rnd.choice(stacks)
                        f.write("%s %d [%03d] %.6f: %d cpu-clock:\n" %
                                (comm, 0 if comm == "swapper" else 4242, cpu, t, period))
                        for fn in reversed(st):
                            f.write("\t%x %s+0x1%s\n" % (rnd.getrandbits(40), fn,
                                    " ([kernel.kallsyms])" if comm == "swapper" else " (/usr/bin/app)"))
                        f.write("\n")


if __name__ == "__main__":
    main()
