#!/bin/sh
# scorch callgraph against go tool pprof -dot on every real profile:
# - the same kept nodes with the same flat/cum values, font sizes and colours, the same tag
#   boxes, the same edges (weights, inline and residual marks, styling) and the same legend,
#   compared order-free by tests/compat/callgraph_dot.py, for several sample types,
#   nodecounts and node fractions; and how many outputs are byte-identical;
# - --format svg is well-formed XML naming every kept node.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "python3"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
digest="$SCORCH_SRC/tests/compat/callgraph_dot.py"

cases=0 same=0
check() { # check FILE GO-ARGS -- SCORCH-ARGS
    f=$1
    shift
    goargs=""
    while [ "$1" != "--" ]; do
        goargs="$goargs $1"
        shift
    done
    shift
    # shellcheck disable=SC2086
    go tool pprof -dot $goargs "$f" >"$tmp/go.dot" 2>/dev/null ||
        fail "go tool pprof -dot failed on $f"
    "$SCORCH" callgraph "$@" "$f" >"$tmp/sc.dot" || fail "scorch callgraph failed on $f $*"
    python3 "$digest" "$tmp/go.dot" >"$tmp/go.txt"
    python3 "$digest" "$tmp/sc.dot" >"$tmp/sc.txt"
    grep -q '^node' "$tmp/go.txt" || fail "no nodes parsed from go tool pprof's DOT for $f"
    cmp -s "$tmp/go.txt" "$tmp/sc.txt" || {
        diff "$tmp/go.txt" "$tmp/sc.txt" | head -20
        fail "call graph differs from go tool pprof -dot for $(basename "$f") ($*)"
    }
    cases=$((cases + 1))
    cmp -s "$tmp/go.dot" "$tmp/sc.dot" && same=$((same + 1))
    return 0
}

inputs=$(ls "$SCORCH_TESTDATA"/pprof/*.pb.gz)
# perf script converted to pprof: string labels (comm) as tag boxes, frames named after
# their binary
"$SCORCH" convert --to pprof "$SCORCH_TESTDATA/perf/system-wide-go-xz.perf.txt" \
    -o "$tmp/perf.pb.gz" 2>/dev/null && inputs="$inputs $tmp/perf.pb.gz"
for f in $inputs; do
    check "$f" -- # pprof's defaults: nodecount 80, fractions 0.005 / 0.001
    check "$f" -nodecount=12 -- --nodecount 12
    check "$f" -nodecount=0 -nodefraction=0.02 -- --nodecount 0 --nodefraction 0.02
    types=$(go tool pprof -raw "$f" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' |
        sed 's/\[dflt\]//g; s#/[^ ]*##g')
    case $f in *synthetic*) types="inuse_space" ;; esac # pprof takes seconds on this one
    for t in $types; do
        check "$f" -sample_index="$t" -nodecount=30 -- --sample-index "$t" --nodecount 30
    done
done
[ "$cases" -ge 40 ] || fail "expected at least 40 cases, ran $cases"

# SVG: well-formed, and every node of the DOT appears by name (graphviz titles its links)
for f in "$SCORCH_TESTDATA"/pprof/cpu-sort.pb.gz "$SCORCH_TESTDATA"/pprof/mem-encoding_json.pb.gz
do
    "$SCORCH" callgraph "$f" >"$tmp/g.dot"
    "$SCORCH" callgraph --format svg "$f" >"$tmp/g.svg" ||
        fail "scorch callgraph --format svg failed"
    python3 - "$tmp/g.dot" "$tmp/g.svg" <<'PY' || exit 1
import re, sys, xml.etree.ElementTree as ET
dot, svg = open(sys.argv[1]).read(), sys.argv[2]
root = ET.parse(svg).getroot()
titles = set()
for el in root.iter():
    for k, v in el.attrib.items():
        if k.endswith("title"):
            titles.add(v)
names = re.findall(r'^N\d+ \[label=".*" id="node\d+" .* tooltip="(.*?)" color=', dot, re.M)
unescape = lambda s: s.replace('\\"', '"').replace("\\\\", "\\")
missing = [n for n in names if unescape(n) not in titles]
if not names or missing:
    sys.exit("svg lacks nodes: %s" % missing[:5])
PY
done
echo "ok: $cases call graphs draw the same nodes, values, tags and edges as go tool pprof -dot" \
    "($same byte-identical); SVG well-formed with every node"
