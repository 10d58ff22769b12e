#!/bin/sh
# flamegraph_svg.sh - `scorch flamegraph` on real folded stacks (FlameGraph's test suite,
# collapsed): the SVG must be well-formed XML, and the frames named in its <title>s, with
# their counts, must be exactly the merged stack tree computed here independently, minus
# the frames narrower than the minimum width. Also differential inputs, --reverse,
# --inverted, --minwidth, gzip and stdin.
set -eu

: "${SCORCH:?set SCORCH to the scorch binary}"
dir="${SCORCH_TESTDATA:-}/flamegraph-compat/results"
if [ -z "${SCORCH_TESTDATA:-}" ] || [ ! -d "$dir" ]; then
    echo "skip: no flamegraph-compat test data in SCORCH_TESTDATA" >&2
    exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 missing" >&2; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# Differential inputs: two collapsed variants of one recording, as difffolded.pl pairs them.
python3 - "$dir" "$tmp" <<'EOF'
import collections, sys
src, out = sys.argv[1], sys.argv[2]
def load(p):
    d = collections.OrderedDict()
    for line in open(p, encoding="utf-8"):
        line = line.rstrip("\n")
        if line:
            stack, n = line.rsplit(" ", 1)
            d[stack] = d.get(stack, 0) + int(n)
    return d
for i, (a, b) in enumerate([("perf-vertx-stacks-01-collapsed-pid", "perf-vertx-stacks-01-collapsed-all"),
                            ("perf-java-stacks-01-collapsed-all", "perf-java-stacks-01-collapsed-jit"),
                            ("perf-iperf-stacks-pidtid-01-collapsed-all", "perf-iperf-stacks-pidtid-01-collapsed-kernel")]):
    x, y = load("%s/%s.txt" % (src, a)), load("%s/%s.txt" % (src, b))
    with open("%s/diff%d.folded" % (out, i), "w", encoding="utf-8") as f:
        for k in sorted(set(x) | set(y)):
            # skew the second column so that frames grow and shrink
            f.write("%s %d %d\n" % (k, x.get(k, 0), y.get(k, 0) * (1 + len(k) % 3)))
EOF

# One run per (input, options); the checker reads the list.
: >"$tmp/cases"
n=0
add() { # file, options...
    n=$((n + 1))
    f=$1
    shift
    "$SCORCH" flamegraph "$@" "$f" >"$tmp/$n.svg"
    printf '%s\t%s\t%s\n' "$tmp/$n.svg" "$f" "$*" >>"$tmp/cases"
}
for f in "$dir"/*-collapsed-*.txt; do
    add "$f"
done
for f in "$dir"/perf-vertx-stacks-01-collapsed-tid.txt "$dir"/perf-numa-stacks-01-collapsed-addrs.txt \
         "$dir"/perf-java-stacks-01-collapsed-jit.txt; do
    add "$f" --minwidth 3
    add "$f" --minwidth=1.5%
    add "$f" --minwidth 0
    add "$f" --reverse
    add "$f" --inverted --colors=java --width 640
done
for f in "$tmp"/diff*.folded; do
    add "$f"
    add "$f" --negate --minwidth 0.5
done

# gzip and stdin give the same document as the plain file
f="$dir/perf-java-stacks-01-collapsed-all.txt"
gzip -c "$f" >"$tmp/in.gz"
"$SCORCH" flamegraph "$f" >"$tmp/plain.svg"
"$SCORCH" flamegraph "$tmp/in.gz" >"$tmp/gz.svg"
"$SCORCH" flamegraph <"$f" >"$tmp/stdin.svg"
"$SCORCH" flamegraph -o "$tmp/out.svg" - <"$f"
cmp "$tmp/plain.svg" "$tmp/gz.svg"
cmp "$tmp/plain.svg" "$tmp/stdin.svg"
cmp "$tmp/plain.svg" "$tmp/out.svg"

# An empty input: still a valid SVG, saying so, a warning and flamegraph.pl's status 2.
status=0
printf '# nothing\n' | "$SCORCH" flamegraph >"$tmp/empty.svg" 2>"$tmp/empty.err" || status=$?
[ "$status" = 2 ] || { echo "FAIL: empty input: status $status, want 2" >&2; exit 1; }
grep -q 'No data' "$tmp/empty.svg" || { echo "FAIL: empty SVG does not say No data" >&2; exit 1; }
grep -q 'warning' "$tmp/empty.err" || { echo "FAIL: no warning for empty input" >&2; exit 1; }
printf '%s\t%s\t%s\n' "$tmp/empty.svg" "-" "empty" >>"$tmp/cases"

python3 - "$tmp/cases" <<'EOF'
import collections, re, sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(.*) \(([\d,]+) samples, (\d+(?:\.\d\d)?)%(?:; ([+-]?\d+\.\d\d)%)?\)$", re.S)
ANNOT = re.compile(r"_\[[kwij]\]$")
failures = 0

def fail(case, msg):
    global failures
    failures += 1
    print("FAIL %s: %s" % (case, msg), file=sys.stderr)

def expected(path, opts):
    """Frames of the merged tree: (name, count) and full titles, as flamegraph.pl shows them."""
    width = 1200
    m = re.search(r"--width[= ](\d+)", opts)
    if m:
        width = int(m.group(1))
    minwidth, pct = 0.1, False
    m = re.search(r"--minwidth[= ]([\d.]+)(%?)", opts)
    if m:
        minwidth, pct = float(m.group(1)), m.group(2) == "%"
    reverse, negate = "--reverse" in opts, "--negate" in opts
    root = {"kids": {}, "total": 0, "delta": 0}
    diff = False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        parts = line.rsplit(" ", 2)
        if len(parts) == 3 and parts[1].isdigit():
            stack, a, b = parts[0], int(parts[1]), int(parts[2])
            diff = True
        else:
            stack, b = line.rsplit(" ", 1)
            a, b = 0, int(b)
        if b == 0 and (not diff or a == 0):
            continue
        frames = stack.split(";")
        if reverse:
            frames.reverse()
        node = root
        node["total"] += b
        for f in frames:
            node = node["kids"].setdefault(f, {"kids": {}, "total": 0, "delta": 0})
            node["total"] += b
        node["delta"] += b - a
    total = root["total"]
    if total == 0:
        return collections.Counter(), collections.Counter()
    min_value = total * minwidth / 100 if pct else minwidth / ((width - 20) / total)
    pairs, titles = collections.Counter(), collections.Counter()
    pairs[("all", total)] += 1
    titles["all (%s samples, 100%%)" % format(total, ",")] += 1
    todo = [root]
    while todo:
        node = todo.pop()
        for name, kid in node["kids"].items():
            v = kid["total"]
            if v <= 0 or v < min_value:
                continue  # narrower than the minimum: not drawn, nor anything under it
            shown = ANNOT.sub("", name)
            pairs[(shown, v)] += 1
            t = "%s (%s samples, %.2f%%" % (shown, format(v, ","), 100.0 * v / total)
            if diff:
                d = -kid["delta"] if negate else kid["delta"]
                t += "; %s%.2f%%" % ("+" if d > 0 else "", 100.0 * d / total)
            titles[t + ")"] += 1
            todo.append(kid)
    return pairs, titles

cases = 0
for line in open(sys.argv[1], encoding="utf-8"):
    svg, src, opts = line.rstrip("\n").split("\t")
    case = "%s [%s]" % (src.rsplit("/", 1)[-1], opts)
    cases += 1
    try:
        doc = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail(case, "not well-formed XML: %s" % e)
        continue
    if opts == "empty":
        continue
    frames = doc.find(".//%sg[@id='frames']" % NS)
    if frames is None:
        fail(case, "no frames group")
        continue
    for need in ("details", "search", "unzoom", "matched"):
        if doc.find(".//*[@id='%s']" % need) is None:
            fail(case, "no #%s control" % need)
    if doc.find("%sscript" % NS) is None:
        fail(case, "no script")
    got_pairs, got_titles = collections.Counter(), collections.Counter()
    width = float(doc.get("width"))
    total = None
    for g in frames.findall(NS + "g"):
        title = g.find(NS + "title").text
        m = TITLE.match(title)
        if not m:
            fail(case, "title %r is not 'name (N samples, P%%)'" % title)
            continue
        n = int(m.group(2).replace(",", ""))
        got_pairs[(m.group(1), n)] += 1
        got_titles[title] += 1
        if total is None:
            total = n  # the root comes first
        rect = g.find(NS + "rect")
        w, x = float(rect.get("width")), float(rect.get("x"))
        if abs(w - n * (width - 20) / total) > 0.11 or x < 9.9 or x + w > width - 9.9:
            fail(case, "%r drawn at x=%s width=%s, not in proportion" % (title, x, w))
    want_pairs, want_titles = expected(src, opts)
    if got_pairs != want_pairs:
        fail(case, "frames differ: extra %s, missing %s" % (
            list((got_pairs - want_pairs).items())[:4], list((want_pairs - got_pairs).items())[:4]))
    elif got_titles != want_titles:
        fail(case, "titles differ: extra %s, missing %s" % (
            list((got_titles - want_titles).items())[:3], list((want_titles - got_titles).items())[:3]))
print("%d SVGs checked, %d failures" % (cases, failures))
sys.exit(1 if failures else 0)
EOF
