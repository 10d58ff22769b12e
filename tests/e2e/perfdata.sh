#!/bin/sh
# perf.data read directly: a small C program recorded by `perf record` with frame pointer
# call chains (-g), with user stacks to walk (--call-graph dwarf), without call chains, and
# attached to a running process (-g -p), gives the same `scorch top` (text and tsv), the
# same `convert --to folded` and the same heatmap as the `perf script` output of the same
# file does. Truncated and foreign files fail with a reason. Skipped when perf cannot
# record here.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
need_cmd perf "linux-perf"
e2e_tmp
cd "$tmp" || fail "no $tmp"
perf record -o probe.data true >probe.log 2>&1 || skip "perf cannot record here: $(tail -1 probe.log)"
# (a name longer than one character: stackcollapse-perf.pl misreads a one-letter comm)
cc_prog pd_spin "$SCORCH_SRC/tests/data/perfdata/spin.c" $FP -lm

# same A B WHAT: A and B are the same bytes
same() {
    cmp -s "$1" "$2" || { diff "$1" "$2" | head -20; fail "$3 differ ($1 against $2)"; }
}

# check NAME: the perf.data NAME.data against its perf script output
check() {
    perf script -i "$1.data" >"$1.txt" 2>"$1.script.log" || fail "perf script $1: $(tail -1 "$1.script.log")"
    "$SCORCH" top "$1.data" >"$1.top" 2>"$1.err" || fail "scorch top $1.data: $(cat "$1.err")"
    "$SCORCH" top - <"$1.txt" >"$1.top.ref" || fail "scorch top of perf script $1"
    same "$1.top" "$1.top.ref" "top of $1"
    "$SCORCH" top --format tsv --sample-index samples "$1.data" >"$1.tsv" || fail "top tsv $1"
    "$SCORCH" top --format tsv --sample-index samples - <"$1.txt" >"$1.tsv.ref" || fail "top tsv ref $1"
    same "$1.tsv" "$1.tsv.ref" "top --format tsv of $1"
    "$SCORCH" convert --to folded "$1.data" -o "$1.folded" || fail "convert $1.data"
    "$SCORCH" convert --to folded "$1.txt" -o "$1.folded.ref" || fail "convert $1.txt"
    sort "$1.folded" >"$1.f1"
    sort "$1.folded.ref" >"$1.f2"
    same "$1.f1" "$1.f2" "folded stacks of $1"
    "$SCORCH" heatmap "$1.data" >"$1.heat" || fail "heatmap $1.data"
    "$SCORCH" heatmap "$1.txt" >"$1.heat.ref" || fail "heatmap $1.txt"
    same "$1.heat" "$1.heat.ref" "heatmap of $1"
    # not a vacuous agreement: the program's own stacks are there, with times
    n=$(awk '{s+=$NF} END{print s+0}' "$1.folded")
    [ "$n" -gt 0 ] || fail "$1: no samples"
    grep -q spin_leaf "$1.tsv" || fail "$1: no spin_leaf in $(head -5 "$1.tsv")"
    grep -q '"cols":[1-9]' "$1.heat" || fail "$1: an empty heatmap: $(head -c 200 "$1.heat")"
}

perf record -g -F 999 -o fp.data ./pd_spin 150 >/dev/null 2>fp.log || fail "perf record -g: $(tail -1 fp.log)"
check fp
grep -Eq 'pd_spin;.*main;spin_mid[^;]*;spin_leaf ' fp.folded || fail "fp: no whole stacks: $(head -3 fp.folded)"

perf record --call-graph dwarf -F 499 -o dwarf.data ./pd_spin 150 >/dev/null 2>dwarf.log ||
    fail "perf record --call-graph dwarf: $(tail -1 dwarf.log)"
check dwarf
grep -Eq 'pd_spin;_start;.*main;spin_mid[^;]*;spin_leaf ' dwarf.folded ||
    fail "dwarf: no stacks walked to _start: $(head -3 dwarf.folded)"
# a stack copy too small for the whole stack (256 bytes): perf's walk ends in one more
# frame, "[unknown]", where the copy ends (its last word counted out), and so does scorch's
perf record --call-graph dwarf,256 -F 499 -o dwarfcut.data ./pd_spin 150 >/dev/null \
    2>dwarfcut.log || fail "perf record --call-graph dwarf,256: $(tail -1 dwarfcut.log)"
check dwarfcut
grep -q '^pd_spin;\[unknown\];' dwarfcut.folded ||
    fail "dwarfcut: no walk cut short by the copy: $(head -3 dwarfcut.folded)"

perf record -F 999 -o flat.data ./pd_spin 150 >/dev/null 2>flat.log || fail "perf record: $(tail -1 flat.log)"
check flat

start ./pd_spin 100000
sleep 0.2
perf record -g -F 999 -p "$p" -o attach.data -- sleep 1 >/dev/null 2>attach.log ||
    fail "perf record -p: $(tail -1 attach.log)"
kill "$p" 2>/dev/null
check attach

# a cut file and a file of another format say why, with a non-zero status
head -c 3000 fp.data >cut.data
if "$SCORCH" top cut.data >cut.out 2>cut.err; then fail "a truncated perf.data was read"; fi
grep -q "cannot read 'cut.data': perf.data: .*truncated" cut.err || fail "truncated: $(cat cut.err)"
printf 'PERFILE2\020\0\0\0\0\0\0\0' >pipe.data
if "$SCORCH" top pipe.data >pipe.out 2>pipe.err; then fail "a pipe-mode perf.data was read"; fi
grep -q "pipe" pipe.err || fail "pipe mode: $(cat pipe.err)"
echo "ok: perf.data equals its perf script output (-g, dwarf, dwarf cut short, no call chains, -p)"
