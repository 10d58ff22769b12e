#!/bin/sh
# Benchmark: `scorch record -a` at 99 Hz on this machine while a load runs (a C program busy
# on one core, built without frame pointers, with a frameless leaf, a deep recursion and a
# shared library (tests/data/record/nofp.c), a Go program, a Python loop, and a shell
# starting a short-lived process every 50 ms, for COMM/MMAP/FORK/EXIT records and new
# binaries). In the same run, on the same load, each for SECONDS:
#   scorch record -a                 the default: unwind tables on 32 KiB stack copies, and
#   scorch record -a --unwind=fp     the kernel's frame pointer chains only (no stack
#                                    copies), both at once (the same samples of the load)
#   perf record -a -g                frame pointers; + perf script, which names its samples
#   perf record -a --call-graph dwarf  perf's unwinding (8 KiB copies); + perf script,
#                                    which is where perf unwinds them
#   scorch record -a --push 10s      the continuous mode (a server started here)
# and off CPU (a program sleeping 8 ms and spinning 2 ms in turn joins the load):
#   scorch record -a --off-cpu       the sched_switch tracepoint on every switch, with stack
#                                    copies, paired into time off CPU; beside it, at the same
#                                    time, scorch record -a without (what off CPU adds)
#   perf record -a -g -e cpu-clock -e sched:sched_switch -c 1   the same events, frame
#                                    pointers; + perf script --no-inline (addr2line on every
#                                    inlined frame of a system-wide recording takes minutes). Debian's perf ignores its own
#                                    --off-cpu (built without BPF skeletons), and neither
#                                    pairs the switches into time off CPU
#   perf record --call-graph dwarf, same events   perf's unwinding; + perf script
# Prints, for each, its CPU as % of one core, its peak RSS, the samples and the CPU per
# sample, and for scorch the share of samples whose stacks are still cut short
# ([truncated: <binary>]) and the unwinding figures. scorch's CPU includes symbolizing every
# distinct address and writing the gzipped pprof; perf record's includes writing perf.data
# and its build-id pass, but no symbols (perf script adds them, measured apart).
# Goals: < 1% of one core and < 100 MB with unwinding (0.5% and 50 MB before it).
#
# usage: bench/record.sh [SECONDS] [offcpu]   (default 30; offcpu: the off-CPU runs only;
#        needs root or CAP_PERFMON, perf)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dur=${1:-30}
mode=${2:-all}
[ -x "$root/build/scorch" ] || make -C "$root" build >/dev/null
command -v perf >/dev/null || { echo "bench/record.sh: needs perf (linux-perf)" >&2; exit 77; }
tmp=$(mktemp -d)
load=""
cleanup() {
    for p in $load; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
src=$root/tests/data/record
gcc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$tmp/libnofp.so" "$src/libnofp.c"
gcc -O2 -g -fomit-frame-pointer -o "$tmp/nofp" "$src/nofp.c" -L"$tmp" -lnofp -Wl,-rpath,"$tmp"
gcc -O2 -g -fomit-frame-pointer -o "$tmp/sleepspin" "$src/sleepspin.c"
(cd "$root/tests/data/goprog" && HOME=${HOME:-/tmp} GOCACHE=${TMPDIR:-/tmp}/scorch-gocache GOFLAGS=-mod=mod \
    GOPROXY=off go build -o "$tmp/goburn" .)
total=$((dur * 6 + 60))
"$tmp/goburn" burn "$total" & load="$load $!"
"$tmp/nofp" "$total" & load="$load $!"
python3 -c "
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + $total
while time.time() < end:
    fib(18); time.sleep(0.01)" & load="$load $!"
(end=$(($(date +%s) + total)); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; sleep 0.05; done) &
load="$load $!"
"$tmp/sleepspin" "$total" >/dev/null & load="$load $!"
sleep 1

# run.py OUT PROBE CMD...: runs CMD (stderr to OUT); PROBE seconds after the start reads its
# CPU so far from /proc (the sampling, before the end's work); prints "cpu_seconds
# maxrss_mib wall_seconds probe_cpu_seconds"
cat >"$tmp/run.py" <<'PY'
import os, sys, time
out = open(sys.argv[1], "wb")
probe = float(sys.argv[2])
tick = os.sysconf("SC_CLK_TCK")
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out.fileno(), 2)
    os.execvp(sys.argv[3], sys.argv[3:])
pcpu = 0.0
if probe > 0:
    time.sleep(probe)
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        pcpu = (int(f[11]) + int(f[12])) / tick
    except (OSError, IndexError):
        pass
_, status, ru = os.wait4(pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("%s failed: %s" % (sys.argv[3], open(sys.argv[1]).read()))
print("%.3f %.1f %.2f %.3f" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0,
                               time.perf_counter() - t0, pcpu))
PY
probe=$(python3 -c "print($dur - 0.5)")
# scorch RUN-NAME ARGS...: a recording of the whole machine; its figures in $tmp/NAME.*
scorch_run() {
    _n=$1
    shift
    python3 "$tmp/run.py" "$tmp/$_n.log" "$probe" "$root/build/scorch" record -a -F 99 -v \
        --duration "$dur" -o "$tmp/$_n.pb.gz" "$@" >"$tmp/$_n.res"
}
if [ "$mode" != offcpu ]; then
# both at once: the same samples of the same load, walked the two ways
scorch_run auto &
scorch_run fp --unwind=fp
wait $!
python3 "$tmp/run.py" "$tmp/perf.log" "$probe" perf record -F 99 -a -g -e cpu-clock \
    -o "$tmp/perf.data" -- sleep "$dur" >"$tmp/perf.res"
python3 "$tmp/run.py" "$tmp/script.log" 0 sh -c "perf script -i '$tmp/perf.data' >/dev/null" \
    >"$tmp/script.res"
python3 "$tmp/run.py" "$tmp/dwarf.log" "$probe" perf record -F 99 -a --call-graph dwarf \
    -e cpu-clock -o "$tmp/dwarf.data" -- sleep "$dur" >"$tmp/dwarf.res"
python3 "$tmp/run.py" "$tmp/dscript.log" 0 sh -c \
    "perf script -F comm,ip,sym,dso -i '$tmp/dwarf.data' >'$tmp/dwarf.txt'" >"$tmp/dscript.res"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/build/scorch" server --data "$tmp/data" --listen "127.0.0.1:$port" --no-fsync \
    >"$tmp/server.log" 2>&1 &
load="$load $!"
sleep 1
python3 "$tmp/run.py" "$tmp/push.log" 0 "$root/build/scorch" record -a -F 99 -v \
    --duration "$dur" --push "http://127.0.0.1:$port" --interval 10 --queue-dir "$tmp/q" \
    >"$tmp/push.res"
fi
# off CPU: with and without at once (the same load), then perf on the same events
scorch_run base &
scorch_run off --off-cpu
wait $!
python3 "$tmp/run.py" "$tmp/operf.log" "$probe" perf record -a -g -e cpu-clock/freq=99/ \
    -e sched:sched_switch -c 1 -o "$tmp/operf.data" -- sleep "$dur" >"$tmp/operf.res"
python3 "$tmp/run.py" "$tmp/oscript.log" 0 sh -c "perf script --no-inline -i '$tmp/operf.data' >/dev/null" \
    >"$tmp/oscript.res"
python3 "$tmp/run.py" "$tmp/odwarf.log" "$probe" perf record -a --call-graph dwarf \
    -e cpu-clock/freq=99/ -e sched:sched_switch -c 1 -o "$tmp/odwarf.data" -- sleep "$dur" \
    >"$tmp/odwarf.res"
python3 "$tmp/run.py" "$tmp/odscript.log" 0 sh -c "perf script --no-inline -i '$tmp/odwarf.data' >/dev/null" \
    >"$tmp/odscript.res"
python3 - "$dur" "$tmp" "$mode" <<'PY'
import re, sys
d, tmp = float(sys.argv[1]), sys.argv[2]
def res(name):
    cpu, rss, wall, probe = map(float, open("%s/%s.res" % (tmp, name)).read().split())
    return cpu, rss, probe
def log(name):
    return open("%s/%s.log" % (tmp, name), errors="replace").read()
def samples(name):
    m = re.search(r"recorded (\d+) samples", log(name)) or re.search(r"\((\d+) samples\)", log(name))
    return int(m.group(1)) if m else 0
def truncated(name):
    m = re.search(r"(\d+) truncated stacks", log(name))
    return int(m.group(1)) if m else 0
def row(name, cpu, rss, n, extra=""):
    per = cpu / n * 1e6 if n else float("nan")
    print("%-34s %6.3f%% of one core %6.1f MiB %6d samples %6.1f us/sample%s" %
          (name, 100 * cpu / d, rss, n, per, extra))
def cut(name):
    n = samples(name)
    return "  %4.1f%% truncated" % (100.0 * truncated(name) / n) if n else ""
def offcpu():
    print("off CPU, system-wide, cpu-clock at 99 Hz + every sched_switch, for %.0f s, same load:" % d)
    def switches(name):
        m = re.search(r"off CPU: (\d+) switches", log(name))
        return int(m.group(1)) if m else 0
    b, o, p, ps, dw, dws = (res(x) for x in ("base", "off", "operf", "oscript", "odwarf", "odscript"))
    ns = samples("off") + switches("off")
    row("scorch record -a (beside the next)", b[0], b[1], samples("base"))
    lost = re.search(r"(\d+) switch samples lost", log("off"))
    row("scorch record -a --off-cpu", o[0], o[1], ns, "  (%d cpu + %d switches; %s switches lost)" %
        (samples("off"), switches("off"), lost.group(1) if lost else "?"))
    def perf_lost(name):
        m = re.search(r"lost (\d+) chunks", log(name))
        return "  (%s chunks lost)" % m.group(1) if m else ""
    row("perf -g -e cpu-clock,sched_switch", p[0], p[1], samples("operf"), perf_lost("operf"))
    row("  + perf script", p[0] + ps[0], max(p[1], ps[1]), samples("operf"))
    row("perf --call-graph dwarf, same", dw[0], dw[1], samples("odwarf"), perf_lost("odwarf"))
    row("  + perf script", dw[0] + dws[0], max(dw[1], dws[1]), samples("odwarf"))
    print("  off CPU adds %.3f%% of one core, %.1f MiB to scorch record -a" % (100 * (o[0] - b[0]) / d, o[1] - b[1]))
    for line in log("off").splitlines():
        if "off CPU:" in line or "user stacks:" in line:
            print("  " + line)
if sys.argv[3] == "offcpu":
    offcpu()
    sys.exit(0)
# perf --call-graph dwarf's own truncated share: samples whose outermost frame is not a
# thread's or process's entry
roots = {"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
         "start_thread", "clone", "clone3", "__clone", "__clone3", "runtime.goexit",
         "runtime.goexit.abi0", "runtime.mstart", "runtime.mstart.abi0", "runtime.rt0_go.abi0"}
dn = dcut = 0
last = None
for line in open(tmp + "/dwarf.txt", errors="replace"):
    if not line.strip():
        if last is not None:
            sym, dso = last
            dn += 1
            dcut += "kernel" not in dso and sym not in roots
        last = None
    elif line.startswith((" ", "\t")):
        parts = line.split()
        last = (parts[1] if len(parts) > 2 else "[unknown]", parts[-1])
print("system-wide at 99 Hz for %.0f s, same load:" % d)
a, f, p, ps, dw, dws, u = (res(x) for x in ("auto", "fp", "perf", "script", "dwarf", "dscript", "push"))
row("scorch record -a", a[0], a[1], samples("auto"), cut("auto"))
row("scorch record -a --unwind=fp", f[0], f[1], samples("fp"), cut("fp"))
row("perf record -a -g", p[0], p[1], samples("perf"))
row("perf record -g + perf script", p[0] + ps[0], max(p[1], ps[1]), samples("perf"))
row("perf record --call-graph dwarf", dw[0], dw[1], samples("dwarf"))
row("perf --call-graph dwarf + script", dw[0] + dws[0], max(dw[1], dws[1]), samples("dwarf"),
    "  %4.1f%% not at an entry" % (100.0 * dcut / dn if dn else 0))
row("scorch record -a --push 10s", u[0], u[1], samples("push"), cut("push"))
for name in ("auto", "fp"):
    r = res(name)
    print("  scorch %s: sampling %.3f%% of one core (%.1f us/sample), %.0f ms at the end" %
          (name, 100 * r[2] / (d - 0.5), r[2] / max(samples(name), 1) * 1e6, 1000 * (r[0] - r[2])))
for line in log("auto").splitlines():
    if "user stacks:" in line or "symbol tables" in line:
        print("  " + line)
def goals(name, cpu, rss):
    print("goals (%s): < 1%% of one core: %s; < 100 MB RSS: %s" %
          (name, "met" if 100 * cpu / d < 1 else "NOT met", "met" if rss * 1.048576 < 100 else "NOT met"))
goals("-o", a[0], a[1])
goals("--push", u[0], u[1])
offcpu()
PY
