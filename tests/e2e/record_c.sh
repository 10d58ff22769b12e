#!/bin/sh
# scorch record on small C programs built here: hot functions and the caller chain with
# frame pointers; a binary without them (stacks marked [truncated: <binary>] and counted);
# a shared library, and one dlopen'ed while recording; a thread started after recording
# began; short-lived children (exec'd and forked) named by their comm; kernel frames of a
# program busy in a system call; -p and -a; a graceful SIGINT; the errors.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
need_cmd go "Debian's golang-go (for go tool pprof)"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
e2e_tmp
need_perf
src=$SCORCH_SRC/tests/data/record
cd "$tmp" || fail "no $tmp"

# ---- frame pointers: hot_leaf on top, the whole chain down from main (the unwind tables
# walk it, as they do by default; record_unwind.sh tests them without frame pointers) ----
cc_prog hot_fp "$src/hot.c" $FP
start ./hot_fp 6
record fp.pb.gz -p $p -F 299 --duration 1.5
kill $p
top=$(top_flat fp.pb.gz)
[ "$top" = hot_leaf ] || { sort -k2 -nr fp.pb.gz.folded | head; fail "hot_leaf should top, got '$top'"; }
n=$(total fp.pb.gz)
[ "$n" -ge 100 ] || fail "only $n samples at 299 Hz in 1.5 s"
chain=$(stacks fp.pb.gz '(^|;)__libc_start_call_main;main;hot_outer;hot_middle;hot_leaf ')
[ $((chain * 10)) -ge $((n * 7)) ] ||
    { cat fp.pb.gz.folded; fail "__libc_start_call_main;main;hot_outer;hot_middle;hot_leaf: $chain of $n"; }
[ "$(stacks fp.pb.gz truncated)" = 0 ] || fail "a frame-pointer build has no truncated stacks"
grep -q "recorded [0-9]* samples" fp.pb.gz.log || fail "no summary: $(cat fp.pb.gz.log)"

# ---- no frame pointers, walked by frame pointers alone: the stacks are cut short, and said
# to be (record_unwind.sh has the unwind tables make them whole) ----
cc_prog hot_nofp "$src/hot.c" -fomit-frame-pointer
start ./hot_nofp 6
record nofp.pb.gz -p $p -F 299 --duration 1.5 --unwind=fp
kill $p
n=$(total nofp.pb.gz)
cut=$(stacks nofp.pb.gz '^\[truncated: hot_nofp\];')
[ $((cut * 10)) -ge $((n * 7)) ] || { cat nofp.pb.gz.folded; fail "[truncated: hot_nofp]: $cut of $n"; }
[ "$(top_flat nofp.pb.gz)" = hot_leaf ] || fail "hot_leaf should still top without frame pointers"
grep -q "truncated stacks by binary: .*/hot_nofp $cut" nofp.pb.gz.log ||
    fail "the summary should count hot_nofp's $cut truncated stacks: $(cat nofp.pb.gz.log)"
# the total counts every binary's (a sample caught in libc, which has no frame pointers
# either, is one more: seen once in CI)
all=$(stacks nofp.pb.gz '^\[truncated: ')
go tool pprof -comments nofp.pb.gz >nofp.comments 2>/dev/null
grep -q "truncated stacks: $all of $n samples" nofp.comments && grep -q "/hot_nofp: $cut\$" nofp.comments ||
    fail "the profile's comments should count the truncated stacks: $(cat nofp.comments)"

# ---- a shared library, and one loaded while recording ----
gcc -O2 -g $FP -shared -fPIC -o libhot.so "$src/libhot.c" || fail "gcc libhot"
gcc -O2 -g $FP -shared -fPIC -DLATE -o liblate.so "$src/libhot.c" || fail "gcc liblate"
cc_prog uselib "$src/uselib.c" $FP -L. -lhot -Wl,-rpath,"$tmp" -ldl
start ./uselib 8 "$tmp/go-lib" "$tmp/liblate.so"
"$SCORCH" record -p $p -F 299 --duration 2.5 -o lib.pb.gz 2>lib.pb.gz.log &
r=$!
wait_log lib.pb.gz.log "recording process"
sleep 0.5
touch go-lib
wait $r || fail "record of uselib failed: $(cat lib.pb.gz.log)"
kill $p
reports lib.pb.gz
[ "$(stacks lib.pb.gz ';main;lib_entry;lib_hot ')" -gt 0 ] || { cat lib.pb.gz.folded; fail "main;lib_entry;lib_hot"; }
[ "$(stacks lib.pb.gz ';main;call_late;late_entry;late_hot ')" -gt 0 ] ||
    { cat lib.pb.gz.folded; fail "the library dlopen'ed while recording: main;call_late;late_entry;late_hot"; }
go tool pprof -raw lib.pb.gz >lib.raw 2>/dev/null
grep -q "$tmp/libhot.so" lib.raw && grep -q "$tmp/liblate.so" lib.raw || fail "no mappings of the libraries"

# ---- a thread started after recording began, with its own tid ----
cc_prog threads "$src/threads.c" $FP -pthread
for mode in p a; do
    rm -f go-thr
    start ./threads 8 "$tmp/go-thr"
    if [ $mode = p ]; then target="-p $p"; else target=-a; fi
    "$SCORCH" record $target -F 199 --duration 2.5 -o thr-$mode.pb.gz 2>thr-$mode.pb.gz.log &
    r=$!
    wait_log thr-$mode.pb.gz.log "recording "
    sleep 0.5
    touch go-thr
    wait $r || fail "record -$mode of threads failed: $(cat thr-$mode.pb.gz.log)"
    kill $p
    reports thr-$mode.pb.gz
    [ "$(stacks thr-$mode.pb.gz 'start_thread;late_main;late_work ')" -gt 0 ] ||
        { cat thr-$mode.pb.gz.folded; fail "-$mode: start_thread;late_main;late_work (started later)"; }
    [ "$(stacks thr-$mode.pb.gz 'start_thread;early_main;early_work ')" -gt 0 ] || fail "-$mode: early_work"
    # the late thread's samples carry its own tid, neither the process's nor the early one's
    go tool pprof -tagfocus="pid=^$p\$" -tags thr-$mode.pb.gz >thr-$mode.tags 2>/dev/null
    tids=$(awk '/^ *tid:/{f=1; next} f&&/^ *[a-z_]+:/{f=0} f&&/%\)/{n++} END{print n+0}' thr-$mode.tags)
    [ "$tids" -ge 2 ] || fail "-$mode: expected the samples of 2 threads, got $tids tids: $(cat thr-$mode.tags)"
    go tool pprof -tagfocus="pid=^$p\$" -tagignore="tid=^$p\$" -top thr-$mode.pb.gz >thr-$mode.top 2>/dev/null
    grep -q ' late_work$' thr-$mode.top || fail "-$mode: late_work under a tid of its own"
done

# ---- short-lived children: exec'd (comm child) and forked (comm forkling) ----
cc_prog child "$src/child.c" $FP
cc_prog forker "$src/forker.c" $FP
for mode in p a; do
    start ./forker 6 "$tmp/child"
    if [ $mode = p ]; then target="-p $p"; else target=-a; fi
    record fork-$mode.pb.gz $target -F 299 --duration 2
    kill $p
    for c in child:child_hot forkling:forkling_hot; do
        comm=${c%%:*} fn=${c#*:}
        go tool pprof -tagfocus="comm=^$comm\$" -top fork-$mode.pb.gz >fork-$mode-$comm.top 2>/dev/null
        got=$(awk '/flat%/{getline; print $NF; exit}' fork-$mode-$comm.top)
        [ "$got" = "$fn" ] ||
            fail "-$mode: the samples of comm $comm should top in $fn, got '$got': $(cat fork-$mode-$comm.top)"
    done
    [ "$(stacks fork-$mode.pb.gz ';main;child_hot ')" -gt 0 ] || fail "-$mode: the exec'd child's main;child_hot"
done

# ---- kernel frames: busy in read(2) ----
cc_prog syscall "$src/syscall.c" $FP
start ./syscall 6
record sys.pb.gz -p $p -F 299 --duration 1.5
kill $p
n=$(total sys.pb.gz)
kern=$(stacks sys.pb.gz ';main;reader;.*(do_syscall_64|entry_SYSCALL_64)')
[ $((kern * 2)) -ge "$n" ] || { sort -k2 -nr sys.pb.gz.folded | head; fail "kernel frames under main;reader: $kern of $n"; }
[ "$(stacks sys.pb.gz 'ksys_read;.*(read_zero|read_iter_zero|iov_iter_zero|clear_user)')" -gt 0 ] ||
    { sort -k2 -nr sys.pb.gz.folded | head -3; fail "the kernel's /dev/zero read should show"; }

# ---- SIGINT ends the recording and still writes it ----
start ./hot_fp 6
"$SCORCH" record -p $p -o int.pb.gz 2>int.pb.gz.log &
r=$!
wait_log int.pb.gz.log "recording process"
sleep 1
kill -INT $r
wait $r || fail "record should exit 0 after SIGINT: $(cat int.pb.gz.log)"
kill $p
reports int.pb.gz
[ "$(top_flat int.pb.gz)" = hot_leaf ] || fail "after SIGINT the profile should hold hot_leaf"

# ---- errors: a process that does not exist; not permitted ----
"$SCORCH" record -p 999999999 -o x.pb.gz 2>err.txt && fail "record of a missing process succeeded"
grep -q "^scorch: no process 999999999$" err.txt || fail "missing process: $(cat err.txt)"
"$SCORCH" record -a -p 1 2>err.txt && fail "-a with -p succeeded"
grep -q "exclude each other" err.txt || fail "-a -p: $(cat err.txt)"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] && [ "$paranoid" -ge 1 ] && command -v setpriv >/dev/null; then
    setpriv --reuid=65534 --regid=65534 --clear-groups "$SCORCH" record -a --duration 0.2 \
        -o /dev/null 2>err.txt && fail "record -a as nobody succeeded with perf_event_paranoid $paranoid"
    grep -q "^scorch: cannot open perf events for all CPUs (-a): .*(kernel.perf_event_paranoid is $paranoid): run as root or with CAP_PERFMON, or sysctl kernel.perf_event_paranoid=0$" err.txt ||
        fail "the permission error should name the setting and the fix: $(cat err.txt)"
    # -p of one's own process: user frames only, as paranoid 2 allows
    if [ "$paranoid" -le 2 ]; then
        chmod 755 "$tmp"
        start setpriv --reuid=65534 --regid=65534 --clear-groups ./hot_fp 4
        sleep 0.2
        setpriv --reuid=65534 --regid=65534 --clear-groups "$SCORCH" record -p $p --duration 1 \
            -o - >user.pb.gz 2>user.log || fail "record -p of one's own process: $(cat user.log)"
        kill $p
        grep -q "user frames only" user.log || fail "unprivileged -p should say it has user frames only"
        reports user.pb.gz
        [ "$(top_flat user.pb.gz)" = hot_leaf ] || fail "unprivileged -p: hot_leaf"
    fi
fi
echo "ok: hot functions, chains, truncation, libraries, late threads, children, kernel frames"
