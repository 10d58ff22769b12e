#!/usr/bin/env python3
"""measure.py [-n RUNS] [-o OUTFILE] -- CMD...: runs CMD RUNS times (default 3), prints the
best wall time in seconds and the largest peak RSS in MiB as "seconds maxrss_mib", one line.
stdout of CMD goes to OUTFILE (default /dev/null)."""
import os
import sys
import time


def main():
    args = sys.argv[1:]
    runs, out = 3, os.devnull
    while args and args[0] != "--":
        if args[0] == "-n":
            runs = int(args[1])
            args = args[2:]
        elif args[0] == "-o":
            out = args[1]
            args = args[2:]
        else:
            sys.exit("usage: measure.py [-n RUNS] [-o OUT] -- CMD...")
    cmd = args[1:]
    best, rss = None, 0
    for _ in range(runs):
        with open(out, "wb") as f:
            t0 = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                os.dup2(f.fileno(), 1)
                os.execvp(cmd[0], cmd)
            _, status, ru = os.wait4(pid, 0)
            dt = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("measure.py: %s failed" % " ".join(cmd))
        best = dt if best is None else min(best, dt)
        rss = max(rss, ru.ru_maxrss)
    print("%.4f %.1f" % (best, rss / 1024.0))


main()
