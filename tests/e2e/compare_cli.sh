#!/bin/sh
# scorch compare on real CPU profiles of a Go program built here: six runs of the program,
# six with a deliberate slowdown of main.parse (three times its work), six more of the
# original (enough samples that the verdicts hold on a loaded machine too).
# The slowdown is significant, named, and fails --fail-above (exit 3); the A/A comparison
# of two sets of the same build finds nothing (exit 0); the report formats agree.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
e2e_tmp
cp "$SCORCH_SRC"/tests/data/compareprog/* "$tmp/"
(cd "$tmp" && go build -o prog .) || fail "go build failed"
base="" slow="" again=""
for i in 1 2 3 4 5 6; do
    "$tmp/prog" -cpu "$tmp/base$i.pb.gz" || fail "run failed"
    "$tmp/prog" -cpu "$tmp/slow$i.pb.gz" -slow 3 || fail "run failed"
    "$tmp/prog" -cpu "$tmp/again$i.pb.gz" || fail "run failed"
    base="$base $tmp/base$i.pb.gz" slow="$slow $tmp/slow$i.pb.gz" again="$again $tmp/again$i.pb.gz"
done

# the regression: exit 3, main.parse named in the verdict and in the table as grown
# shellcheck disable=SC2086
"$SCORCH" compare --normalize --fail-above 20 $base -- $slow >"$tmp/slow.txt"
rc=$?
cat "$tmp/slow.txt"
[ $rc = 3 ] || fail "slowdown: exit $rc, expected 3"
grep -q '^verdict: FAIL: main.parse grew by +' "$tmp/slow.txt" || fail "verdict should name main.parse"
grep -q '6 base profiles vs 6 new profiles' "$tmp/slow.txt" || fail "header should count replicates"
grep -q '^method: replicates ' "$tmp/slow.txt" || fail "method should be replicates"

# json: main.parse significant with a positive change whose interval excludes 0
# shellcheck disable=SC2086
"$SCORCH" compare --normalize --format json $base -- $slow >"$tmp/slow.json" || fail "json"
python3 - "$tmp/slow.json" <<'PY' || fail "json rows"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["base_profiles"] == 6 and d["profiles"] == 6 and d["method"] == "replicates", d
rows = {r["function"]: r for r in d["rows"]}
p = rows["main.parse"]
assert p["significant"] is True and p["direction"] == 1, p
assert p["cum_q"] < 0.05 and p["cum_delta_pct"] > 20 and p["cum_delta_pct_lo"] > 0, p
# exact values are the merged profiles' (as scorch top on all six files)
assert p["cum"] > p["base_cum"] > 0, p
# main.main's total share is 1 on both sides: no change to find
assert rows["main.main"]["significant"] is False, rows["main.main"]
PY

# markdown for a pull request, and the differential flame graph
# shellcheck disable=SC2086
"$SCORCH" compare --normalize --format markdown --fail-above 20 --svg "$tmp/diff.svg" $base -- $slow \
    >"$tmp/slow.md"
[ $? = 3 ] || fail "markdown: exit status should be 3 too"
grep -q '^| `main.parse` | total | ' "$tmp/slow.md" || fail "markdown row for main.parse"
grep -q '^\*\*Verdict:\*\* FAIL' "$tmp/slow.md" || fail "markdown verdict"
grep -q 'main.parse' "$tmp/diff.svg" && grep -q '<svg' "$tmp/diff.svg" || fail "svg"

# tsv: the first five columns are diff's, the statistics follow
# shellcheck disable=SC2086
"$SCORCH" compare --normalize --format tsv $base -- $slow >"$tmp/slow.tsv" || fail "tsv"
head -1 "$tmp/slow.tsv" | grep -q '^base_flat	flat	base_cum	cum	function	significant	flat_q	cum_q	delta_pct	' ||
    fail "tsv header"
awk -F'\t' '$5=="main.parse" && $6==1 {f=1} END {exit !f}' "$tmp/slow.tsv" || fail "tsv main.parse"

# A/A: two sets of the same build: nothing grew beyond the threshold, exit 0
# shellcheck disable=SC2086
"$SCORCH" compare --normalize --fail-above 20 $base -- $again >"$tmp/aa.txt"
rc=$?
cat "$tmp/aa.txt"
[ $rc = 0 ] || fail "A/A: exit $rc, expected 0"
grep -q '^verdict: OK' "$tmp/aa.txt" || fail "A/A verdict"

# one file a side: the sampling-noise fallback, and the report says so
"$SCORCH" compare "$tmp/base1.pb.gz" -- "$tmp/slow1.pb.gz" >"$tmp/one.txt" || fail "one a side"
grep -q '^method: sampling (one profile a side' "$tmp/one.txt" || fail "fallback should be said"

# usage errors exit 2; unreadable input exits 1 with scorch's error line
"$SCORCH" compare "$tmp/base1.pb.gz" 2>/dev/null
[ $? = 2 ] || fail "missing -- should be a usage error"
"$SCORCH" compare "$tmp/base1.pb.gz" -- "$tmp/nope.pb.gz" 2>"$tmp/err"
[ $? = 1 ] && grep -q "^scorch: cannot read '.*nope.pb.gz'" "$tmp/err" || fail "missing file error"
echo "ok"
