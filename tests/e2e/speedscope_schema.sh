#!/bin/sh
# speedscope_schema.sh - scorch's speedscope output checked against speedscope's own JSON
# schema (npm package speedscope@1.25.0, validated with ajv) for every pprof file in the test
# data and a folded file, and its per-type totals against `go tool pprof -raw`.
set -u

src=${SCORCH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${SCORCH_BUILD:-$src/build}
scorch=${SCORCH:-$build/scorch}
td=${SCORCH_TESTDATA:-$src/../shared/testdata}
dir=$src/tests/speedscope

skip() {
    echo "skip: $*" >&2
    exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -d "$td/pprof" ] || skip "test data not found at $td"

schema=$dir/node_modules/speedscope/dist/release/file-format-schema.json
if [ ! -f "$schema" ] || [ ! -d "$dir/node_modules/ajv" ]; then
    echo "installing speedscope and ajv from npm into tests/speedscope/node_modules" >&2
    (cd "$dir" && npm install --no-audit --no-fund >npm-install.log 2>&1) ||
        { cat "$dir/npm-install.log" >&2; skip "npm install failed"; }
    rm -f "$dir/npm-install.log"
    [ -f "$schema" ] || skip "npm install did not bring $schema"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

[ -x "$scorch" ] || { echo "FAIL: no scorch binary at $scorch" >&2; exit 1; }
convert() { "$scorch" convert --to speedscope "$1" -o "$2"; }

fail=0
mkdir "$tmp/out"
for f in "$td"/pprof/*.pb.gz; do
    name=$(basename "$f" .pb.gz)
    convert "$f" "$tmp/out/$name.json" || { echo "FAIL: converting $f" >&2; fail=1; }
done
# a folded file with the awkward parts: quotes, backslashes, tabs, non-UTF-8 bytes, zeros
python3 -c 'import sys; open(sys.argv[1], "wb").write(
    b"main;work;inner 10\nmain;work 5\nmain;\"quoted\" \\back\\slash;tab\tx 3\n"
    b"main;caf\xc3\xa9;\xff\xfe 7\n# comment\nmain;zero 0\n")' "$tmp/folded.txt"
convert "$tmp/folded.txt" "$tmp/out/folded.json" || { echo "FAIL: converting folded" >&2; fail=1; }

node "$dir/validate.js" "$tmp"/out/*.json || fail=1

# totals per sample type against go tool pprof -raw
if command -v go >/dev/null 2>&1; then
    for f in "$td"/pprof/*.pb.gz; do
        name=$(basename "$f" .pb.gz)
        [ -f "$tmp/out/$name.json" ] || continue
        go tool pprof -raw "$f" >"$tmp/$name.raw" 2>"$tmp/$name.err" ||
            { cat "$tmp/$name.err" >&2; fail=1; continue; }
        python3 "$dir/totals.py" "$tmp/$name.raw" "$tmp/out/$name.json" || fail=1
    done
else
    echo "note: go is not installed; totals were not compared with go tool pprof -raw" >&2
fi
# the folded file's total: 10 + 5 + 3 + 7 (the zero line is dropped)
python3 - "$tmp/out/folded.json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
p = d["profiles"][0]
names = {f["name"] for f in d["shared"]["frames"]}
ok = (p["endValue"] == 25 and sorted(p["weights"]) == [3, 5, 7, 10] and
      "caf\u00e9" in names and "\ufffd\ufffd" in names and '"quoted" \\back\\slash' in names)
print("%s: %s" % (sys.argv[1], "folded totals and names ok" if ok else "WRONG: %r %r" % (p, names)))
sys.exit(0 if ok else 1)
EOF

[ "$fail" = 0 ] || { echo "speedscope_schema: FAILED" >&2; exit 1; }
echo "speedscope_schema: all files valid, totals match"
