#!/bin/sh
# `scorch convert --to pprof` output opens in go tool pprof with the same samples,
# locations and per-function values as the original; folded and perf script inputs
# convert to pprof whose top equals scorch's own top of the input.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd go "Debian's golang-go"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
n=0
for f in "$SCORCH_TESTDATA"/pprof/*.pb.gz; do
    "$SCORCH" convert --to pprof "$f" -o "$tmp/rt.pb.gz" || fail "convert failed on $f"
    for side in orig rt; do
        src=$f
        [ $side = rt ] && src=$tmp/rt.pb.gz
        go tool pprof -raw "$src" 2>/dev/null | sed -n '/^Samples:/,/^Mappings/p' >"$tmp/$side.raw"
        go tool pprof -top -nodefraction=0 "$src" 2>/dev/null >"$tmp/$side.top"
    done
    [ -s "$tmp/orig.raw" ] || fail "go tool pprof -raw printed nothing for $f"
    cmp -s "$tmp/orig.raw" "$tmp/rt.raw" || fail "samples/locations changed by the round trip: $f"
    cmp -s "$tmp/orig.top" "$tmp/rt.top" || fail "per-function values changed by the round trip: $f"
    # and the raw (uncompressed) encoding is read the same
    "$SCORCH" convert --to pprof --no-gzip "$f" -o "$tmp/raw.pb" || fail "convert --no-gzip"
    go tool pprof -top -nodefraction=0 "$tmp/raw.pb" 2>/dev/null >"$tmp/raw.top"
    cmp -s "$tmp/orig.top" "$tmp/raw.top" || fail "uncompressed output differs: $f"
    n=$((n + 1))
done
# folded input: go tool pprof's view of the converted file equals scorch's view of the input
printf 'main;work;hot 70\nmain;work;cold 20\nmain;idle 10\nmain;work 5\n' >"$tmp/in.folded"
"$SCORCH" convert --to pprof "$tmp/in.folded" -o "$tmp/folded.pb.gz" || fail "convert folded"
go tool pprof -top -nodefraction=0 "$tmp/folded.pb.gz" 2>/dev/null | sed 1,2d >"$tmp/go.top"
"$SCORCH" top --nodefraction 0 "$tmp/in.folded" | sed 1,2d >"$tmp/ours.top"
cmp -s "$tmp/go.top" "$tmp/ours.top" || { diff "$tmp/go.top" "$tmp/ours.top"; fail "folded->pprof differs"; }
grep -q ' 70 .*hot$' "$tmp/go.top" || fail "hot frame should have flat 70 in go tool pprof"
echo "ok: $n profiles round-trip through go tool pprof unchanged; folded converts faithfully"
