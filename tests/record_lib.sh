# record_lib.sh - helpers for the `scorch record` tests (sourced after tests/lib.sh).

# need_perf: skip visibly when perf events cannot be opened here (CI runs as root).
need_perf() {
    "$SCORCH" record -a --duration 0.1 -o /dev/null >/dev/null 2>"$tmp/need_perf.log" ||
        skip "perf events are not available here: $(cat "$tmp/need_perf.log")"
}

# cc OUT SRC FLAGS...: builds a test program (-g for file:line, -O2 as real code is).
# (shell functions share their variables with the caller: these are prefixed)
cc_prog() {
    _cc_out=$1 _cc_src=$2
    shift 2
    gcc -O2 -g -o "$_cc_out" "$_cc_src" "$@" || fail "gcc $_cc_src failed"
}

# start CMD...: runs CMD in the background, its pid in $p (and in $pids, for e2e_cleanup).
start() {
    "$@" &
    p=$!
    pids="$pids $p"
}

# The frame-pointer flags distributions that keep them use (Fedora, Ubuntu 24.04).
FP="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"

# record OUT ARGS...: scorch record ... -o OUT, its stderr in OUT.log; fails on an error.
# Then OUT.folded holds its root-first stacks with their sample counts and OUT.tsv its
# `scorch top --format tsv` (samples).
record() {
    _rec_out=$1
    shift
    "$SCORCH" record "$@" -o "$_rec_out" 2>"$_rec_out.log" ||
        fail "scorch record $* failed: $(cat "$_rec_out.log")"
    reports "$_rec_out"
}

# reports FILE: FILE.folded and FILE.tsv (see record).
reports() {
    "$SCORCH" convert --to folded --sample-index samples "$1" -o "$1.folded" ||
        fail "convert $1 failed"
    "$SCORCH" top --format tsv --sample-index samples "$1" >"$1.tsv" || fail "top $1 failed"
}

# top_flat FILE: the function with the most flat samples.
top_flat() {
    sed -n 2p "$1.tsv" | cut -f3
}

# total FILE: the samples.
total() {
    awk '{s+=$NF} END{print s+0}' "$1.folded"
}

# stacks FILE ERE: the samples of the stacks matching ERE.
stacks() {
    awk -v re="$2" '$0 ~ re {s+=$NF} END{print s+0}' "$1.folded"
}

# wait_log FILE TEXT: until FILE has TEXT (10 s at most).
wait_log() {
    _wl_i=0
    until grep -q "$2" "$1" 2>/dev/null; do
        _wl_i=$((_wl_i + 1))
        [ $_wl_i -lt 100 ] || fail "'$2' never appeared in $1: $(cat "$1")"
        sleep 0.1
    done
}
