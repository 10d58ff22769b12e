#!/bin/sh
# scorch top against go tool pprof on every real profile and every sample type:
# - `top --format tsv` equals flat/cum computed independently from `go tool pprof -raw`;
# - `top` (text) is byte-identical to `go tool pprof -top`, -nodecount included.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cases=0
for f in "$SCORCH_TESTDATA"/pprof/*.pb.gz; do
    go tool pprof -raw "$f" >"$tmp/raw" 2>/dev/null || fail "go tool pprof -raw $f failed"
    types=$(sed -n '/^Samples:/{n;p;q}' "$tmp/raw" | sed 's/\[dflt\]//g; s#/[^ ]*##g')
    for t in "" $types; do
        python3 "$SCORCH_SRC/tests/compat/pprof_raw.py" "$t" <"$tmp/raw" | sort >"$tmp/want"
        "$SCORCH" top --format tsv ${t:+--sample-index "$t"} "$f" >"$tmp/got" ||
            fail "scorch top failed on $f $t"
        [ "$(head -n 1 "$tmp/got")" = "$(printf 'flat\tcum\tfunction')" ] || fail "bad tsv header"
        sed 1d "$tmp/got" | sort >"$tmp/got.sorted"
        cmp -s "$tmp/want" "$tmp/got.sorted" || {
            diff "$tmp/want" "$tmp/got.sorted" | head -20
            fail "top --format tsv differs from go tool pprof -raw for $(basename "$f") type '${t:-default}'"
        }
        go tool pprof ${t:+-sample_index="$t"} -top "$f" >"$tmp/go.txt" 2>/dev/null
        "$SCORCH" top ${t:+--sample-index "$t"} "$f" >"$tmp/ours.txt"
        cmp -s "$tmp/go.txt" "$tmp/ours.txt" || {
            diff "$tmp/go.txt" "$tmp/ours.txt" | head -20
            fail "top text differs from go tool pprof -top for $(basename "$f") type '${t:-default}'"
        }
        cases=$((cases + 1))
    done
    go tool pprof -nodecount=5 -top "$f" >"$tmp/go.txt" 2>/dev/null
    "$SCORCH" top --nodecount 5 "$f" >"$tmp/ours.txt"
    cmp -s "$tmp/go.txt" "$tmp/ours.txt" || fail "top --nodecount 5 differs for $f"
done
[ "$cases" -ge 40 ] || fail "expected at least 40 file/type cases, ran $cases"
echo "ok: $cases file/sample-type cases identical to go tool pprof (-raw values and -top text)"
