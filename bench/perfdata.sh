#!/bin/sh
# perfdata.sh - `scorch top perf.data` against `perf script` alone and against
# `perf script | scorch top` on the same file, for two recordings:
#   system   `perf record -a -g` of this machine for a few seconds while a load runs (a
#            compression loop, a compiler started again and again, a shell loop): many
#            short processes, a hundred binaries to name, the kernel's stacks
#   program  `perf record -g` of one program (xz compressing) for as long: one process,
#            a few binaries, many samples
# For each: the best of 5 or more wall times and CPU times (user + system), the ratios, and whether
# the two `top`s agree (text, and tsv with exact values per function).
#
# usage: bench/perfdata.sh [SECONDS]        (default 5)
# env:   SCORCH (default build/scorch); PERF_DATA / PERF_DATA_PROGRAM (existing recordings
#        instead of recording); KEEP=DIR keeps the recordings there
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch=${SCORCH:-$root/build/scorch}
secs=${1:-5}
[ -x "$scorch" ] || { echo "no scorch binary at '$scorch' (run 'make build')" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed (linux-perf)" >&2; exit 1; }

tmp=$(mktemp -d)
load=""
cleanup() {
    for p in $load; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

data=${PERF_DATA:-}
if [ -z "$data" ]; then
    data=$tmp/sys.data
    (while :; do gzip -9 -c "$scorch" >/dev/null; done) &
    load="$load $!"
    (while :; do printf 'int f(int x){return x*x;}\nint main(void){return f(3);}\n' |
        gcc -O2 -x c -o /dev/null - 2>/dev/null; done) &
    load="$load $!"
    (while :; do ls -R /usr/lib >/dev/null 2>&1; done) &
    load="$load $!"
    sleep 0.5
    perf record -a -g -o "$data" -- sleep "$secs" 2>"$tmp/record.log" ||
        { cat "$tmp/record.log" >&2; exit 1; }
    for p in $load; do kill "$p" 2>/dev/null || true; done
    load=""
    wait 2>/dev/null || true
fi
program=${PERF_DATA_PROGRAM:-}
if [ -z "$program" ]; then
    program=$tmp/program.data
    command -v xz >/dev/null || { echo "xz is not installed" >&2; exit 1; }
    # (xz -9 compresses random bytes at 1 to 3 MB/s: 8 MB a second outlasts the recording)
    head -c $((secs * 8000000)) /dev/urandom >"$tmp/xz.in"
    perf record -g -o "$program" -- timeout "$secs" xz -9 -T1 -c "$tmp/xz.in" \
        >/dev/null 2>"$tmp/record.log" || [ -s "$program" ] ||
        { cat "$tmp/record.log" >&2; exit 1; }
    rm -f "$tmp/xz.in"
fi
if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    cp "$data" "$KEEP/system.data"
    cp "$program" "$KEEP/program.data"
fi
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"

# best CMD: best of 5 runs of CMD (of up to 30, for a second in all, when it is quick) (stdout to $tmp/out; through sh only when it is a
# pipeline, so a single command's figure carries no shell's start-up): "wall cpu" in seconds
best() {
    python3 - "$tmp/out" "$@" <<'PY'
import os, shlex, sys, time
out, cmd = sys.argv[1], sys.argv[2]
argv = ["sh", "-c", cmd] if "|" in cmd else shlex.split(cmd)
wall = cpu = None
spent, runs = 0.0, 0
while runs < 5 or (spent < 1.0 and runs < 30):
    runs += 1
    with open(out, "wb") as f:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(f.fileno(), 1)
            if "|" not in cmd:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            os.execvp(argv[0], argv)
        _, st, ru = os.wait4(pid, 0)
        dt = time.perf_counter() - t0
    spent += dt
    if os.waitstatus_to_exitcode(st):
        sys.exit("failed: " + cmd)
    c = ru.ru_utime + ru.ru_stime
    wall = dt if wall is None else min(wall, dt)
    cpu = c if cpu is None else min(cpu, c)
print("%.4f %.4f" % (wall, cpu))
PY
}

# compare NAME FILE: the figures for one recording
compare() {
    name=$1 f=$2
    samples=$(perf script -i "$f" -F time 2>/dev/null | wc -l)
    echo
    echo "== $name: $(wc -c <"$f") bytes of perf.data, $samples samples"
    set -- $(best "perf script -i '$f'")
    script_wall=$1 script_cpu=$2
    set -- $(best "perf script -i '$f' 2>/dev/null | '$scorch' top -")
    pipe_wall=$1 pipe_cpu=$2
    cp "$tmp/out" "$tmp/top.ref"
    set -- $(best "'$scorch' top '$f'")
    top_wall=$1 top_cpu=$2
    cp "$tmp/out" "$tmp/top.out"

    printf '%-34s %8s %8s\n' "" "wall s" "cpu s"
    printf '%-34s %8.3f %8.3f\n' "perf script" "$script_wall" "$script_cpu"
    printf '%-34s %8.3f %8.3f\n' "perf script | scorch top" "$pipe_wall" "$pipe_cpu"
    printf '%-34s %8.3f %8.3f\n' "scorch top perf.data" "$top_wall" "$top_cpu"
    python3 -c '
import sys
sw, sc, pw, pc, tw, tc = map(float, sys.argv[1:])
print("ratio vs perf script:          %.1fx faster (wall), %.1fx (cpu)" % (sw / tw, sc / tc))
print("ratio vs perf script | top:    %.1fx faster (wall), %.1fx (cpu)" % (pw / tw, pc / tc))
' "$script_wall" "$script_cpu" "$pipe_wall" "$pipe_cpu" "$top_wall" "$top_cpu"
    # the same per function? (tsv: every function, exact values)
    "$scorch" top --format tsv "$f" >"$tmp/tsv.out"
    perf script -i "$f" 2>/dev/null | "$scorch" top --format tsv - >"$tmp/tsv.ref"
    echo "functions: $(($(wc -l <"$tmp/tsv.ref") - 1)) in perf script | scorch top --format tsv, \
$(diff "$tmp/tsv.out" "$tmp/tsv.ref" | grep -c '^>') of them with other values or names here:"
    diff "$tmp/tsv.out" "$tmp/tsv.ref" | grep '^[<>]' | head -10
    if cmp -s "$tmp/top.out" "$tmp/top.ref"; then
        echo "top: identical to perf script | scorch top"
    else
        echo "top: $(diff "$tmp/top.out" "$tmp/top.ref" | grep -c '^[<>]') lines differ from perf script | scorch top:"
        diff "$tmp/top.out" "$tmp/top.ref" | grep '^[<>]' | head -10
    fi
}

compare system "$data"
compare program "$program"
