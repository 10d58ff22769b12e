#!/bin/sh
# scorch record on a program built without frame pointers (-O2 -fomit-frame-pointer: a
# frameless leaf, a recursion 40 calls deep, a shared library built the same way): the unwind
# tables give whole stacks, from _start down to the leaf, in nearly every sample, where the
# kernel's frame pointer walk (--unwind=fp) cuts them; the same process recorded by
# `perf record --call-graph dwarf` reaches the same outermost function and the same hottest
# stacks (skipped when perf cannot record here). Stripped of its symbols, the program's
# stacks are still whole: the tables, not the names, say where a stack starts.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
e2e_tmp
need_perf
src=$SCORCH_SRC/tests/data/record
cd "$tmp" || fail "no $tmp"
gcc -O2 -g -fomit-frame-pointer -shared -fPIC -o libnofp.so "$src/libnofp.c" || fail "gcc libnofp"
cc_prog nofp "$src/nofp.c" -fomit-frame-pointer -L. -lnofp -Wl,-rpath,"$tmp"

# share PCT FILE ERE: the percentage of FILE's samples whose stack matches ERE
share() {
    awk -v re="$2" '{n+=$NF} $0 ~ re {m+=$NF} END{printf "%d", n ? 100*m/n : 0}' "$1.folded"
}

start ./nofp 30 # (killed after the recordings)
sleep 0.3

# ---- the default (auto): whole stacks ----
record auto.pb.gz -p $p -F 299 --duration 2 -v
n=$(total auto.pb.gz)
[ "$n" -ge 100 ] || fail "only $n samples at 299 Hz in 2 s"
whole=$(share auto.pb.gz '^_start;.*__libc_start_call_main;main;')
[ "$whole" -ge 95 ] || { sort -t' ' -k2 -nr auto.pb.gz.folded | head; fail "whole stacks (_start ... main): $whole% of $n"; }
[ "$(stacks auto.pb.gz truncated)" -le $((n / 20)) ] || fail "truncated stacks: $(stacks auto.pb.gz truncated) of $n"
# each of the three hot places, with its whole chain, about a third of the time
for chain in 'main;spin_phase;spin_leaf ' 'main;lib_entry;lib_hot ' \
    "main;$(printf 'recurse;%.0s' $(seq 41))recurse_leaf "; do
    got=$(share auto.pb.gz "__libc_start_call_main;$chain")
    [ "$got" -ge 15 ] || { sort -t' ' -k2 -nr auto.pb.gz.folded | head; fail "$chain: $got% of $n"; }
done
grep -q "user stacks: [0-9]* by the unwind tables" auto.pb.gz.log ||
    fail "-v should give the unwinding figures: $(cat auto.pb.gz.log)"
go_on=$(command -v go || true)
if [ -n "$go_on" ]; then
    go tool pprof -comments auto.pb.gz 2>/dev/null | grep -q -- "--unwind=auto --stack-size 32768" ||
        fail "the profile's comment should say how stacks were walked"
fi

# ---- --unwind=fp: the kernel's frame pointer chain, cut short ----
record fp.pb.gz -p $p -F 299 --duration 2 --unwind=fp
nf=$(total fp.pb.gz)
cut=$(share fp.pb.gz '^\[truncated: ')
[ "$cut" -ge 50 ] || { sort -t' ' -k2 -nr fp.pb.gz.folded | head; fail "--unwind=fp should cut most stacks: $cut% of $nf"; }
echo "truncated without frame pointers: $cut% by frame pointers (--unwind=fp), $((100 - whole))% or less by the unwind tables"

# ---- --unwind=cfi, and a copy too small for the recursion: cut at the copy's end ----
record small.pb.gz -p $p -F 299 --duration 1 --unwind=cfi --stack-size 1024 -v
grep -q "[1-9][0-9]* at the stack copy's end" small.pb.gz.log ||
    fail "a 1 KiB copy should end walks through the recursion: $(cat small.pb.gz.log)"
[ "$(share small.pb.gz '^\[truncated: nofp\];recurse;')" -ge 10 ] ||
    { sort -t' ' -k2 -nr small.pb.gz.folded | head; fail "the recursion's stacks cut at the copy's end should be marked"; }
[ "$(share small.pb.gz '^_start;.*;main;spin_phase;spin_leaf ')" -ge 15 ] || fail "shallow stacks stay whole"

# ---- stripped: no name says where the stack starts, the tables do ----
strip -o nofp-stripped nofp || fail "strip"
kill $p
start ./nofp-stripped 30
sleep 0.3
record stripped.pb.gz -p $p -F 299 --duration 1.5
n=$(total stripped.pb.gz)
[ "$(stacks stripped.pb.gz truncated)" -le $((n / 20)) ] ||
    { sort -t' ' -k2 -nr stripped.pb.gz.folded | head -3; fail "a stripped program's stacks are whole: $(stacks stripped.pb.gz truncated) of $n cut"; }
[ "$(share stripped.pb.gz '^\[nofp-stripped\];.*__libc_start_call_main;\[nofp-stripped\];')" -ge 95 ] ||
    { sort -t' ' -k2 -nr stripped.pb.gz.folded | head -3; fail "stripped: the whole chain, named after the binary"; }
kill $p
start ./nofp 30
sleep 0.3

# ---- errors ----
"$SCORCH" record -p $p --unwind=dwarf -o x.pb.gz 2>err.txt && fail "--unwind=dwarf was taken"
grep -q "'--unwind' must be one of auto, fp, cfi, not 'dwarf'" err.txt || fail "--unwind=dwarf: $(cat err.txt)"
"$SCORCH" record -p $p --stack-size 100 -o x.pb.gz 2>err.txt && fail "--stack-size 100 was taken"
grep -q "'--stack-size' must be a byte count from 1KiB to 60KiB, a multiple of 8 (like 32768), not '100'" err.txt || fail "--stack-size 100: $(cat err.txt)"

# ---- beside perf record --call-graph dwarf on the same process ----
if ! command -v perf >/dev/null 2>&1; then
    echo "perf is not installed: the comparison with perf --call-graph dwarf is skipped" >&2
elif ! perf record --call-graph dwarf -F 299 -p $p -o perf.data -- sleep 2 >perf.log 2>&1; then
    echo "perf record --call-graph dwarf failed here, comparison skipped: $(tail -3 perf.log)" >&2
else
    record again.pb.gz -p $p -F 299 --duration 2
    # perf script: a sample's frames leaf first, then a blank line; folded root first by name
    perf script -i perf.data -F ip,sym 2>/dev/null |
        awk 'NF==0 { if (n) { s=f[n]; for (i=n-1; i>=1; i--) s=s";"f[i]; print s" 1" }; n=0; next }
             { n++; f[n]=$2 }' >perf.pb.gz.folded
    pn=$(total perf.pb.gz)
    [ "$pn" -ge 100 ] || fail "perf recorded only $pn samples"
    p_start=$(share perf.pb.gz '^_start;')
    s_start=$(share again.pb.gz '^_start;')
    echo "outermost function _start: perf --call-graph dwarf $p_start% of $pn, scorch $s_start% of $(total again.pb.gz)"
    [ "$p_start" -ge 95 ] && [ "$s_start" -ge 95 ] ||
        fail "both should reach _start in 95% of samples: perf $p_start%, scorch $s_start%"
    # the hottest stacks from main down are the same functions in the same order
    for f in perf again; do
        sed 's/.*;main;/main;/' $f.pb.gz.folded |
            awk '{c[$1]+=$NF} END{for (k in c) print c[k], k}' | sort -nr | head -3 |
            awk '{print $2}' | sort >$f.top
    done
    cmp -s perf.top again.top ||
        fail "the hottest stacks differ: perf $(tr '\n' ' ' <perf.top), scorch $(tr '\n' ' ' <again.top)"
fi
kill $p
echo "ok: whole stacks without frame pointers (frameless leaf, recursion, shared library), as perf --call-graph dwarf has them"
