#!/bin/sh
# scorch list against go tool pprof -list on every real profile, with the Go standard
# library's sources (the profiles were built with -trimpath, so files are like
# "sort/sort.go") as the source root:
# - the text is byte-identical to pprof's (headers, per-line flat/cum, source lines and
#   pprof's window), except that where a file cannot be found scorch goes on to list the
#   sampled lines without text, which pprof does not: those extra lines are set aside;
# - the standard library's files are found (no error for sort.*, compress/flate.*, ...);
# - --format json carries the same routines with exact integers: a routine's flat and cum
#   equal `scorch top --format tsv`'s for the function, and without a readable source the
#   same per-line numbers come back without text.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
GOSRC=$(go env GOROOT 2>/dev/null)/src
[ -f "$GOSRC/sort/sort.go" ] || skip "the Go standard library's sources are not in $GOSRC"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
td="$SCORCH_TESTDATA/pprof"

# scorch's listing minus the sampled lines it adds after an " Error:" line
strip_extra() {
    awk '/^ Error: /{print; skip=1; next} /^ROUTINE|^No source/{skip=0} !skip{print}' "$1"
}

cases=0 routines=0 with_text=0
check() { # check FILE REGEX [SAMPLE_TYPE]
    f=$1 re=$2 t=${3:-}
    if ! go tool pprof ${t:+-sample_index="$t"} -source_path="$GOSRC" -list "$re" "$f" \
        >"$tmp/go.txt" 2>/dev/null; then
        # nothing matches: scorch must say so too
        ! "$SCORCH" list ${t:+--sample-index "$t"} "$re" "$f" >/dev/null 2>&1 ||
            fail "scorch list '$re' succeeded on $f where go tool pprof finds nothing"
        return 0
    fi
    "$SCORCH" list ${t:+--sample-index "$t"} --source-path "$GOSRC" "$re" "$f" >"$tmp/sc.txt" ||
        fail "scorch list '$re' failed on $f"
    strip_extra "$tmp/sc.txt" >"$tmp/sc.stripped"
    cmp -s "$tmp/go.txt" "$tmp/sc.stripped" || {
        diff "$tmp/go.txt" "$tmp/sc.stripped" | head -20
        fail "list '$re' differs from go tool pprof -list for $(basename "$f") ${t:+type $t}"
    }
    n=$(grep -c '^ROUTINE' "$tmp/go.txt")
    e=$(grep -c '^ Error: ' "$tmp/go.txt")
    routines=$((routines + n))
    with_text=$((with_text + n - e))
    cases=$((cases + 1))
}

for f in "$td"/cpu-*.pb.gz "$td"/mem-*.pb.gz; do
    for re in 'Benchmark' 'runtime\.(mallocgc|memmove)$' \
        '^(sort|strconv|regexp|compress|encoding)'; do
        check "$f" "$re"
    done
done
check "$td/mem-sort.pb.gz" '.'
check "$td/mem-sort.pb.gz" 'sort' alloc_objects
check "$td/cpu-sort.pb.gz" 'sort' samples
[ "$cases" -ge 25 ] || fail "expected at least 25 matching cases, ran $cases"
[ "$with_text" -ge 100 ] || fail "only $with_text routines had their source found"

# the standard library's own files must all be found
"$SCORCH" list --source-path "$GOSRC" '^(sort|compress/flate)\.' "$td/cpu-sort.pb.gz" \
    "$td/cpu-compress_flate.pb.gz" >"$tmp/std.txt" || fail "scorch list on two inputs failed"
grep -q '^ROUTINE' "$tmp/std.txt" || fail "no routines listed"
! grep -q '^ Error: ' "$tmp/std.txt" ||
    fail "standard library sources not found: $(grep -m1 Error "$tmp/std.txt")"

# JSON: exact integers agreeing with top, and the numbers without the source
f="$td/cpu-sort.pb.gz"
"$SCORCH" top --format tsv "$f" >"$tmp/top.tsv"
"$SCORCH" list --format json --source-path "$GOSRC" '^sort\.' "$f" >"$tmp/with.json"
"$SCORCH" list --format json --source-path "$tmp/nowhere" '^sort\.' "$f" >"$tmp/without.json"
python3 - "$tmp/top.tsv" "$tmp/with.json" "$tmp/without.json" <<'PY' || exit 1
import json, sys
top = {}
for ln in open(sys.argv[1]).read().splitlines()[1:]:
    flat, cum, name = ln.split("\t", 2)
    top[name] = (int(flat), int(cum))
w, wo = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
assert w["functions"], "no routines"
files = {}
for r in w["functions"]:
    files.setdefault(r["name"], []).append(r)
for name, rs in files.items():
    flat = sum(r["flat"] for r in rs)
    if len(rs) == 1 and (rs[0]["flat"], rs[0]["cum"]) != top[name]:
        sys.exit("%s: json flat/cum %s, top says %s"
                 % (name, (rs[0]["flat"], rs[0]["cum"]), top[name]))
    if flat != top[name][0]:
        sys.exit("%s: json flat %d, top says %d" % (name, flat, top[name][0]))
for a, b in zip(w["functions"], wo["functions"]):
    assert a["source"] and not b["source"] and "error" in b, (a["name"], b.get("error"))
    assert all("text" in l for l in a["lines"]) and not any("text" in l for l in b["lines"])
    hot = [(l["line"], l["flat"], l["cum"]) for l in a["lines"] if l["flat"] or l["cum"]]
    got = [(l["line"], l["flat"], l["cum"]) for l in b["lines"]]
    assert hot == got, (a["name"], hot[:3], got[:3])
    assert a["lines_cum"] == sum(l["cum"] for l in b["lines"]), a["name"]
assert len(w["functions"]) == len(wo["functions"])
PY
echo "ok: $cases listings identical to go tool pprof -list ($routines routines, $with_text with" \
    "source text); JSON agrees with top and without sources"
