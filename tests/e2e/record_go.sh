#!/bin/sh
# scorch record on a Go program built here (tests/data/goprog): main.burn and
# main.spin named from the binary's symbol table, the inlined main.step from its DWARF
# under main.spin, file:line; the same binary stripped (-ldflags=-s -w: no .symtab, no
# DWARF) named through Go's own pclntab.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
e2e_tmp
need_perf
cp "$SCORCH_SRC"/tests/data/goprog/* "$tmp/"
cd "$tmp" || fail "no $tmp"
go build -o goburn . || fail "go build failed"
go build -ldflags='-s -w' -o goburn-stripped . || fail "go build -s -w failed"
for b in goburn goburn-stripped; do
    start ./$b burn 60 # (killed after the recording: long enough for a loaded machine)
    sleep 0.3
    record $b.pb.gz -p $p -F 299 --duration 2
    kill $p
    top=$(top_flat $b.pb.gz)
    [ "$top" = main.burn ] || { head $b.pb.gz.tsv; fail "$b: main.burn should top, got '$top'"; }
    burn=$(awk -F'\t' '$3=="main.burn"{print $2}' $b.pb.gz.tsv)
    spin=$(awk -F'\t' '$3=="main.spin"{print $2}' $b.pb.gz.tsv)
    [ -n "$spin" ] && [ "$spin" -gt 0 ] && [ "$burn" -gt "$spin" ] || fail "$b: burn $burn, spin ${spin:-none}"
    [ "$(stacks $b.pb.gz '^runtime.goexit[.a-z0-9]*;runtime.main;main.main;main.burn ')" -gt 0 ] ||
        { cat $b.pb.gz.folded; fail "$b: runtime.goexit;runtime.main;main.main;main.burn"; }
    [ "$(stacks $b.pb.gz truncated)" -le $(($(total $b.pb.gz) / 20)) ] ||
        fail "$b: Go keeps frame pointers: few truncated stacks expected"
done
# DWARF: the inlined step is a frame under spin, with its file and line
[ "$(stacks goburn.pb.gz ';main.main;main.spin;main.step ')" -gt 0 ] ||
    { cat goburn.pb.gz.folded; fail "the inlined main.step should be a frame under main.spin"; }
go tool pprof -raw goburn.pb.gz >goburn.raw 2>/dev/null
grep -q "main.step $tmp/main.go:[0-9]" goburn.raw || fail "main.step should have file:line: $(grep main.step goburn.raw)"
grep -q "main.burn $tmp/main.go:[0-9]" goburn.raw || fail "main.burn should have file:line"
echo "ok: Go symbols from .symtab and DWARF (inlined frames, lines), and from pclntab when stripped"
