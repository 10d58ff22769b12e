#!/bin/sh
# JFR files on the command line. A Java program run with the JDK's own recorder
# (settings=profile, TLAB allocation events on) spends its CPU in two distinguishable
# methods (one doing three times the other's work), allocates, contends for a monitor and
# parks: scorch's CPU samples per leaf
# function and the hottest stack equal what `jfr print --json` says of the same file (each
# sample worth the recording's period), and so do the allocation, monitor and park events'
# counts and sums. A synthetic recording in async-profiler's shape (two chunks with their own
# ids and tick rates, Latin-1, UTF-16 and pooled strings, an event type scorch skips, a
# sleeping sample, a lambda class) gives exactly the folded stacks tests/e2e/jfr_synth.py
# says for every sample type; `heatmap --sample-index` maps one kind's samples at their
# times; `flamegraph` and `convert --to pprof` read it too; a truncated
# recording fails with a reason.
# ctest-timeout: 90
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd java "the JDK (openjdk-17-jdk-headless)"
need_cmd javac "the JDK (openjdk-17-jdk-headless)"
need_cmd jfr "the JDK's jfr tool (openjdk-17-jdk-headless)"
need_python json
e2e_tmp

# ---- the synthetic recording: exact ----
$py "$SCORCH_SRC/tests/e2e/jfr_synth.py" "$tmp" || fail "jfr_synth.py"
for t in cpu wall alloc_in_new_tlab_objects alloc_in_new_tlab_bytes alloc_outside_tlab_objects \
    alloc_outside_tlab_bytes contentions delay park_contentions park_delay; do
    "$SCORCH" convert --to folded --sample-index "$t" "$tmp/synth.jfr" -o "$tmp/got.$t" ||
        fail "convert --sample-index $t"
    cmp -s "$tmp/want.$t" "$tmp/got.$t" ||
        { diff "$tmp/want.$t" "$tmp/got.$t" >&2; fail "synthetic recording: $t differs"; }
done
gzip -c "$tmp/synth.jfr" >"$tmp/synth.jfr.gz"
"$SCORCH" convert --to folded "$tmp/synth.jfr.gz" -o "$tmp/got.gz" || fail "gzipped recording"
cmp -s "$tmp/want.cpu" "$tmp/got.gz" || fail "the default sample type is not cpu"
"$SCORCH" flamegraph "$tmp/synth.jfr" >"$tmp/f.svg" || fail "flamegraph"
grep -q 'Foo$$Lambda_.run' "$tmp/f.svg" || fail "flame graph without the lambda frame"
# the heatmap of one kind: its samples at their times (ten CPU samples over two chunks 2 s
# apart; two native method samples)
for t in cpu:10:3 wall:2:1; do
    "$SCORCH" heatmap --sample-index "${t%%:*}" "$tmp/synth.jfr" >"$tmp/heat" || fail "heatmap $t"
    $py - "$tmp/heat" "$t" <<'EOF' || fail "heatmap $t: $(cat "$tmp/heat")"
import json, sys
h = json.load(open(sys.argv[1]))
_, n, cols = sys.argv[2].split(":")
sys.exit(0 if sum(map(sum, h["values"])) == int(n) and h["cols"] == int(cols) else 1)
EOF
done
"$SCORCH" convert --to pprof "$tmp/synth.jfr" -o "$tmp/s.pb.gz" || fail "convert --to pprof"
"$SCORCH" convert --to folded "$tmp/s.pb.gz" -o "$tmp/got.pb" || fail "re-read pprof"
cmp -s "$tmp/want.cpu" "$tmp/got.pb" || fail "pprof round trip differs"

# a truncated recording is refused with a reason (every truncation and many corruptions:
# tests/unit/test_jfr.c)
head -c 3000 "$tmp/synth.jfr" >"$tmp/cut.jfr"
"$SCORCH" top "$tmp/cut.jfr" 2>"$tmp/err" && fail "a truncated recording was read"
grep -q "^scorch: cannot read '.*cut.jfr': bad JFR chunk header at offset [0-9]* (size" "$tmp/err" ||
    fail "truncation not named: $(cat "$tmp/err")"

# ---- the JDK's own recorder ----
cat >"$tmp/JfrWork.java" <<'EOF'
import java.util.*;
import java.util.concurrent.locks.LockSupport;
public class JfrWork {
    static volatile long sink;
    static final Object lock = new Object();
    static long hotLoop(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i * 31L) ^ (s >>> 3); return s; }
    static long coolLoop(int n) { long s = 1; for (int i = 0; i < n; i++) s = s * 7 + i; return s; }
    static void alloc() { List<byte[]> l = new ArrayList<>(); for (int i = 0; i < 200; i++) l.add(new byte[1024 * (1 + i % 64)]); sink += l.size(); }
    static void holdLock() throws InterruptedException { synchronized (lock) { Thread.sleep(25); } }
    static volatile boolean done;
    public static void main(String[] a) throws Exception {
        // at least a[0] ms and 1 s of this thread's CPU (a loaded machine runs it less), at most 15 s
        long start = System.nanoTime(), min = Long.parseLong(a[0]) * 1000000L;
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        Thread t = new Thread(() -> { try { while (!done) { holdLock(); LockSupport.parkNanos(30000000L); } } catch (InterruptedException e) {} });
        t.start();
        for (;;) {
            long el = System.nanoTime() - start;
            if ((el >= min && mx.getCurrentThreadCpuTime() - cpu0 >= 1000000000L) || el >= 15000000000L) break;
            sink += hotLoop(3000000); sink += coolLoop(1000000); alloc(); synchronized (lock) { sink++; }
        }
        done = true;
        t.join();
    }
}
EOF
(cd "$tmp" && javac JfrWork.java) || fail "javac"
(cd "$tmp" && java -XX:StartFlightRecording=filename=w.jfr,settings=profile,+jdk.ObjectAllocationInNewTLAB#enabled=true \
    JfrWork 2000 >java.log 2>&1) || { cat "$tmp/java.log" >&2; fail "java"; }
jfr print --json --events jdk.ExecutionSample,jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationSample,jdk.JavaMonitorEnter,jdk.ThreadPark \
    "$tmp/w.jfr" >"$tmp/w.json" || fail "jfr print"
for t in cpu alloc_in_new_tlab_objects alloc_in_new_tlab_bytes alloc_sample_bytes contentions \
    delay park_contentions; do
    "$SCORCH" convert --to folded --sample-index "$t" "$tmp/w.jfr" -o "$tmp/w.$t" ||
        fail "convert --sample-index $t of the JDK's recording"
done
$py - "$tmp" <<'EOF' || fail "scorch and jfr print disagree"
import collections, json, sys
d = sys.argv[1]

ALL = json.load(open("%s/w.json" % d))["recording"]["events"]

def events(name):
    """the events of a type that have a stack trace (scorch has nothing to put the others on)"""
    return [e for e in ALL if e["type"] == name and e["values"]["stackTrace"] is not None]

def frames(e):
    return [f["method"]["type"]["name"] + "." + f["method"]["name"]
            for f in e["values"]["stackTrace"]["frames"]]

def folded(t):
    out = {}
    for line in open("%s/w.%s" % (d, t), encoding="utf-8"):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        out[stack] = int(v)
    return out

def leaf_sums(t):
    sums = collections.Counter()
    for stack, v in folded(t).items():
        sums[stack.split(";")[-1]] += v
    return sums

import re
def merge(name):  # scorch's naming of JVM-generated lambda classes
    return re.sub(r"\$\$Lambda[^.;]*\.", "$$Lambda_.", name)

ok = True
def check(what, cond, detail=""):
    global ok
    if not cond:
        ok = False
        print("MISMATCH %s %s" % (what, detail), file=sys.stderr)

# CPU: samples per leaf function, each worth the period, and the hottest full stack
ex = events("jdk.ExecutionSample")
check("cpu samples", len(ex) >= 10, "only %d execution samples" % len(ex))
want = collections.Counter(merge(frames(e)[0]) if frames(e) else "" for e in ex)
got = leaf_sums("cpu")
period = sum(got.values()) // len(ex)
check("period", period in (10000000, 20000000) and period * len(ex) == sum(got.values()),
      "%d ns for %d samples" % (sum(got.values()), len(ex)))
check("cpu per leaf", {k: v * period for k, v in want.items()} == dict(got),
      "\njfr:    %s\nscorch: %s" % (sorted(want.items()), sorted(got.items())))
# the two methods are told apart: both are leaves, the one with three times the work more often
check("two loops", got["JfrWork.hotLoop"] > got["JfrWork.coolLoop"] > 0, str(sorted(got.items())))
stacks = collections.Counter(";".join(reversed([merge(f) for f in frames(e)])) for e in ex)
top_stack, top_n = stacks.most_common(1)[0]
check("hottest stack", folded("cpu").get(top_stack) == top_n * period,
      "%s: %d samples, scorch %s" % (top_stack, top_n, folded("cpu").get(top_stack)))
check("hottest stack shape", top_stack.split(";")[0] == "JfrWork.main", top_stack)

# allocations: events and bytes (TLAB size; the sample's weight) per leaf
tl = events("jdk.ObjectAllocationInNewTLAB")
check("tlab events", len(tl) > 0)
check("tlab objects", sum(leaf_sums("alloc_in_new_tlab_objects").values()) == len(tl))
check("tlab bytes", sum(leaf_sums("alloc_in_new_tlab_bytes").values()) ==
      sum(e["values"]["tlabSize"] for e in tl))
al = events("jdk.ObjectAllocationSample")
check("sampled bytes", sum(leaf_sums("alloc_sample_bytes").values()) ==
      sum(e["values"]["weight"] for e in al))
# locks: one contention per event, the monitor's at JfrWork.main
me = events("jdk.JavaMonitorEnter")
check("monitor events", len(me) > 0 and sum(leaf_sums("contentions").values()) == len(me),
      "%d events, scorch %s" % (len(me), dict(leaf_sums("contentions"))))
check("monitor delay", sum(leaf_sums("delay").values()) > 0)
tp = events("jdk.ThreadPark")
check("park events", len(tp) > 0 and sum(leaf_sums("park_contentions").values()) == len(tp))
sys.exit(0 if ok else 1)
EOF
echo "jfr_cli: ok"
