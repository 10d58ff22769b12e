#!/bin/sh
# Benchmark: `scorch record -a` at 99 Hz for 30 s on this machine while a load runs (a C
# program busy on one core with deep-ish stacks, a Go program, and a shell starting a
# short-lived process every 50 ms, for COMM/MMAP/FORK/EXIT records and new binaries),
# then `perf record -F 99 -a -g` (cpu-clock) on the same load in the same run. Prints, for
# each, its CPU as % of one core, its peak RSS, the samples and the CPU per sample, and
# scorch's figures against perf's. scorch's include symbolizing every distinct address
# and writing the gzipped pprof; perf's include writing perf.data and its build-id pass at
# the end, but no symbols (`perf script` would add them: measured too, as perf+script).
# Then `scorch record -a --push` (a profile every 10 s to a server started here, symbols
# and open DWARF kept between intervals), the continuous mode, for as long again.
# Goals: < 0.5% of one core, < 50 MB RSS.
#
# usage: bench/record.sh [SECONDS]   (default 30; needs root or CAP_PERFMON, perf)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dur=${1:-30}
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
gcc -O2 -g -fno-omit-frame-pointer -o "$tmp/hot" "$src/hot.c"
(cd "$root/tests/data/goprog" && HOME=${HOME:-/tmp} GOCACHE=${TMPDIR:-/tmp}/scorch-gocache GOFLAGS=-mod=mod \
    GOPROXY=off go build -o "$tmp/goburn" .)
total=$((dur * 2 + 30))
"$tmp/hot" "$total" & load="$load $!"
"$tmp/goburn" burn "$total" & load="$load $!"
(end=$(($(date +%s) + total)); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; sleep 0.05; done) &
load="$load $!"
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
set -- $(python3 "$tmp/run.py" "$tmp/scorch.log" "$probe" "$root/build/scorch" record -a -F 99 \
    --duration "$dur" -o "$tmp/scorch.pb.gz")
s_cpu=$1 s_rss=$2 s_wall=$3 s_probe=$4
s_n=$(sed -n 's/.*recorded \([0-9]*\) samples.*/\1/p' "$tmp/scorch.log")
set -- $(python3 "$tmp/run.py" "$tmp/perf.log" "$probe" perf record -F 99 -a -g -e cpu-clock \
    -o "$tmp/perf.data" -- sleep "$dur")
p_cpu=$1 p_rss=$2 p_wall=$3 p_probe=$4
p_n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$tmp/perf.log")
set -- $(python3 "$tmp/run.py" "$tmp/script.log" 0 sh -c "perf script -i '$tmp/perf.data' >/dev/null")
ps_cpu=$1 ps_rss=$2
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/build/scorch" server --data "$tmp/data" --listen "127.0.0.1:$port" --no-fsync \
    >"$tmp/server.log" 2>&1 &
load="$load $!"
sleep 1
set -- $(python3 "$tmp/run.py" "$tmp/push.log" 0 "$root/build/scorch" record -a -F 99 \
    --duration "$dur" --push "http://127.0.0.1:$port" --interval 10 --queue-dir "$tmp/q")
u_cpu=$1 u_rss=$2
u_n=$(sed -n 's/.*recorded \([0-9]*\) samples.*/\1/p' "$tmp/push.log")
python3 - "$dur" "$s_cpu" "$s_rss" "$s_n" "$p_cpu" "$p_rss" "$p_n" "$ps_cpu" "$ps_rss" "$s_probe" \
    "$p_probe" "$(grep -o 'symbols of [0-9]* binaries, [0-9]* distinct addresses' "$tmp/scorch.log")" \
    "$u_cpu" "$u_rss" "$u_n" <<'PY'
import sys
d, s_cpu, s_rss, s_n, p_cpu, p_rss, p_n, ps_cpu, ps_rss, s_probe, p_probe, syms, u_cpu, u_rss, u_n = sys.argv[1:]
u_cpu, u_rss, u_n = float(u_cpu), float(u_rss), int(u_n or 0)
d = float(d)
s_cpu, s_rss, p_cpu, p_rss, ps_cpu, ps_rss, s_probe, p_probe = map(
    float, (s_cpu, s_rss, p_cpu, p_rss, ps_cpu, ps_rss, s_probe, p_probe))
s_n, p_n = int(s_n or 0), int(p_n or 0)
def row(name, cpu, rss, n):
    per = cpu / n * 1e6 if n else float("nan")
    print("%-28s %6.3f%% of one core  %6.1f MiB  %6d samples  %6.1f us/sample" %
          (name, 100 * cpu / d, rss, n, per))
print("system-wide at 99 Hz for %.0f s, same load:" % d)
row("scorch record -a", s_cpu, s_rss, s_n)
row("perf record -a -g", p_cpu, p_rss, p_n)
row("perf record + perf script", p_cpu + ps_cpu, max(p_rss, ps_rss), p_n)
row("scorch record -a --push 10s", u_cpu, u_rss, u_n)
print("  scorch: sampling %.3f%% of one core (%.1f us/sample); at the end %.0f ms to symbolize "
      "(%s) and write" % (100 * s_probe / (d - 0.5), s_probe / max(s_n, 1) * 1e6,
                          1000 * (s_cpu - s_probe), syms))
print("  perf: sampling %.3f%% of one core; at the end %.0f ms (build ids, no symbols)" %
      (100 * p_probe / (d - 0.5), 1000 * (p_cpu - p_probe)))
print("scorch / perf record: CPU %.2fx, RSS %.2fx; scorch / perf record+script: CPU %.2fx" %
      (s_cpu / p_cpu if p_cpu else float("nan"), s_rss / p_rss if p_rss else float("nan"),
       s_cpu / (p_cpu + ps_cpu) if p_cpu + ps_cpu else float("nan")))
def goals(name, cpu, rss):
    print("goals (%s): < 0.5%% of one core: %s; < 50 MB RSS: %s" %
          (name, "met" if 100 * cpu / d < 0.5 else "NOT met", "met" if rss * 1.048576 < 50 else "NOT met"))
goals("-o", s_cpu, s_rss)
goals("--push", u_cpu, u_rss)
PY
