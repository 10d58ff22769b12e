#!/bin/sh
# `scorch top` against `go tool pprof -top` on profiles the test writes (cli_pprof.py), for
# what the real profiles do not show: a function without a name, a sample type without a
# name, and the edge cut behind the "(inline)" marks, with and without the node cuts.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

n=0
for case in nameless nameless-bin untyped light-inline edge-cut; do
    python3 "$SCORCH_SRC/tests/e2e/cli_pprof.py" "$case" "$tmp/$case.pb" ||
        fail "cannot write the $case profile"
    for opts in "" "nodefraction 0" "nodecount 3" "nodefraction 0.001"; do
        set -- $opts
        go tool pprof ${1:+-$1=$2} -top "$tmp/$case.pb" >"$tmp/go.txt" 2>/dev/null ||
            fail "go tool pprof -top $case $opts failed"
        "$SCORCH" top ${1:+--$1 $2} "$tmp/$case.pb" >"$tmp/ours.txt" 2>"$tmp/err" ||
            fail "scorch top $case $opts: $(cat "$tmp/err")"
        cmp -s "$tmp/go.txt" "$tmp/ours.txt" || {
            diff "$tmp/go.txt" "$tmp/ours.txt" | head -20
            fail "top differs from go tool pprof -top for $case ${opts:-(defaults)}"
        }
        n=$((n + 1))
    done
done
# the rows and marks the cases are about
"$SCORCH" top "$tmp/nameless.pb" | grep -q '  <unknown>$' || fail "no <unknown> row"
"$SCORCH" top "$tmp/nameless-bin.pb" | grep -q '  \[prog\]$' || fail "no [prog] row"
"$SCORCH" top "$tmp/untyped.pb" | grep -q '^Type:' && fail "a Type: line for an unnamed type"
"$SCORCH" top --nodefraction 0 "$tmp/light-inline.pb" | grep -q 'inline' &&
    fail "an (inline) mark on an edge under the edge cut"
echo "ok: $n cases identical to go tool pprof -top"
