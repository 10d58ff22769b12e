#!/bin/sh
# A recorded file is an ordinary pprof: go tool pprof opens it and its -top report is byte
# for byte `scorch top`'s, for both sample types (samples, cpu), on recordings of a Go
# program, a C program and the whole machine (-a: kernel frames, whatever else runs,
# demangled C++ names); and `scorch top --format tsv` equals flat/cum computed from go
# tool pprof -raw (tests/compat/pprof_raw.py).
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd gcc "gcc"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
e2e_tmp
need_perf
cp "$SCORCH_SRC"/tests/data/goprog/* "$tmp/"
cd "$tmp" || fail "no $tmp"
go build -o goburn . || fail "go build failed"
cc_prog hot "$SCORCH_SRC/tests/data/record/hot.c" $FP
# (both killed after the recordings: long enough for a loaded machine)
./goburn burn 60 &
g=$!
./hot 60 &
h=$!
pids="$pids $g $h"
sleep 0.3
record go.pb.gz -p $g -F 199 --duration 1.5
record c.pb.gz -p $h -F 199 --duration 1.5
record all.pb.gz -a -F 199 --duration 1.5
kill $g $h
cases=0
for f in go.pb.gz c.pb.gz all.pb.gz; do
    for t in samples cpu; do
        go tool pprof -sample_index=$t -top $f >go.txt 2>go.err || fail "go tool pprof cannot read $f: $(cat go.err)"
        "$SCORCH" top --sample-index $t $f >ours.txt || fail "scorch top $f"
        cmp -s go.txt ours.txt || { diff go.txt ours.txt | head -20; fail "$f ($t): scorch top differs from go tool pprof -top"; }
        go tool pprof -raw $f 2>/dev/null | python3 "$SCORCH_SRC/tests/compat/pprof_raw.py" $t | sort >want.tsv
        "$SCORCH" top --format tsv --sample-index $t $f | sed 1d | sort >got.tsv
        cmp -s want.tsv got.tsv || { diff want.tsv got.tsv | head; fail "$f ($t): tsv differs from go tool pprof -raw"; }
        cases=$((cases + 1))
    done
    # the top functions of the programs are what they should be, in both tools
    case $f in
    go.pb.gz) want=main.burn ;;
    c.pb.gz) want=hot_leaf ;;
    *) continue ;;
    esac
    got=$(go tool pprof -top $f 2>/dev/null | awk '/flat%/{getline; print $NF; exit}')
    [ "$got" = "$want" ] || fail "$f: go tool pprof's top function is '$got', not $want"
done
echo "ok: $cases recordings x sample types identical in go tool pprof -top and scorch top"
