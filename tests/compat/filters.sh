#!/bin/sh
# pprof's focus / ignore / hide / show against go tool pprof on real profiles:
# - `scorch top --format tsv --focus=RE ...` equals flat/cum computed independently from
#   `go tool pprof -raw -focus=RE ...` (tests/compat/pprof_raw.py);
# - `scorch top --focus=RE ...` (text) is byte-identical to `go tool pprof -top -focus=RE`,
#   "Active filters:" legend and unfiltered total included.
# The regexes match function names, file names only (search.go, _test.go$) and the
# mapping's file only (bin/), alone and combined, and some match nothing.
set -u
set -f # regexes are not globs
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

# One filter set per line: name=regex pairs separated by spaces (regexes have no spaces).
cat >"$tmp/cases" <<'EOF'
focus=sort
focus=runtime\.
ignore=runtime\.
hide=runtime\.
show=runtime\.
focus=testing
focus=_test\.go$
ignore=benchmark\.go
hide=(?i)MALLOC|memmove
show=^sort\.|^json|^strconv|^regexp|^flate|^main\.
focus=bin/
hide=bin/
show=bin/
focus=nothing-matches-this
show=nothing-matches-this
hide=nothing-matches-this
focus=sort ignore=Stable hide=runtime
focus=Benchmark hide=testing show=^[a-z]
ignore=^runtime\.(mcall|park_m|schedule)$ show=\.
focus=Encode|Decode ignore=Marshal
hide=\.func[0-9]+$ show=encoding|compress|sort|regexp|strconv|main
EOF

cat >"$tmp/bigcases" <<'EOF'
focus=f1[0-3] hide=f2
ignore=f2 show=f[0-9]$
EOF

cases=0 empty=0
# check_case NAME "k=v k=v": one file, one filter set, both comparisons.
check_case() {
    f="$SCORCH_TESTDATA/pprof/$1.pb.gz"
    [ -f "$f" ] || fail "missing $f"
    goargs="" ourargs=""
    for kv in $2; do
        goargs="$goargs -${kv%%=*}=${kv#*=}"
        ourargs="$ourargs --${kv%%=*}=${kv#*=}"
    done
    # shellcheck disable=SC2086
    go tool pprof -raw $goargs "$f" >"$tmp/raw" 2>/dev/null ||
        fail "go tool pprof -raw $goargs $f failed"
    python3 "$SCORCH_SRC/tests/compat/pprof_raw.py" "" <"$tmp/raw" | sort >"$tmp/want"
    # shellcheck disable=SC2086
    "$SCORCH" top --format tsv $ourargs "$f" >"$tmp/got" 2>"$tmp/err" ||
        fail "scorch top $ourargs failed on $1: $(cat "$tmp/err")"
    [ "$(head -n 1 "$tmp/got")" = "$(printf 'flat\tcum\tfunction')" ] || fail "bad tsv header"
    sed 1d "$tmp/got" | sort >"$tmp/got.sorted"
    cmp -s "$tmp/want" "$tmp/got.sorted" || {
        diff "$tmp/want" "$tmp/got.sorted" | head -20
        fail "top --format tsv$ourargs differs from go tool pprof -raw$goargs for $1"
    }
    cases=$((cases + 1))
    # text too, also when nothing is left (pprof then scales each value on its own)
    [ -s "$tmp/want" ] || empty=$((empty + 1))
    # shellcheck disable=SC2086
    go tool pprof -top $goargs "$f" >"$tmp/go.txt" 2>/dev/null
    # shellcheck disable=SC2086
    "$SCORCH" top $ourargs "$f" >"$tmp/ours.txt" 2>/dev/null
    cmp -s "$tmp/go.txt" "$tmp/ours.txt" || {
        diff "$tmp/go.txt" "$tmp/ours.txt" | head -20
        fail "top text$ourargs differs from go tool pprof -top$goargs for $1"
    }
}

for name in cpu-sort cpu-encoding_json cpu-compress_flate cpu-regexp cpu-strconv mem-sort \
    mem-encoding_json mem-regexp; do
    while read -r line; do
        check_case "$name" "$line"
    done <"$tmp/cases"
done
# the large one (100,000 samples, deep stacks): a few cases
while read -r line; do
    check_case synthetic-allocs-100k "$line"
done <"$tmp/bigcases"

# pprof warns about a regex that matched nothing; so does scorch.
"$SCORCH" top --focus=nothing-matches-this "$SCORCH_TESTDATA/pprof/cpu-sort.pb.gz" \
    >/dev/null 2>"$tmp/err" || fail "top with a focus that matches nothing failed"
grep -q "focus expression matched no samples" "$tmp/err" || fail "no warning for an unmatched focus"
# a bad regex is a usage error naming the option
if "$SCORCH" top --hide='a(' "$SCORCH_TESTDATA/pprof/cpu-sort.pb.gz" >/dev/null 2>"$tmp/err"; then
    fail "a bad regex was accepted"
fi
grep -q "bad hide regex 'a('" "$tmp/err" || fail "unclear error for a bad regex: $(cat "$tmp/err")"

[ "$cases" -ge 170 ] || fail "expected at least 170 file/filter cases, ran $cases"
[ "$empty" -lt "$cases" ] || fail "every case was empty"
echo "ok: $cases file/filter cases identical to go tool pprof ($empty of them keep no samples)"
