#!/bin/sh
# Flame graph JSON (src/query/flame.h, docs/api-flamegraph.md) of every test-data profile:
# - it is valid JSON (strict UTF-8) of format version 1;
# - every node lies inside its parent, children are contiguous from the parent's x and sorted
#   by name, sum(children totals) + self == total on each side, maxNodes is respected;
# - with every node kept, the stacks it describes (path -> self) are exactly what
#   `scorch convert --to folded` prints, and for a diff exactly what `scorch diff-folded`
#   prints; the per-stack diff (sc_diff_stacks) prints the same bytes as diff-folded.
# The JSON comes from the test_flame / test_diff unit-test binaries' helper modes.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata pprof
need_cmd python3 "python3"
flame="$SCORCH_BUILD/test_flame"
diffbin="$SCORCH_BUILD/test_diff"
[ -x "$flame" ] && [ -x "$diffbin" ] || fail "test_flame / test_diff are not built in $SCORCH_BUILD"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/check.py" <<'EOF'
import json, sys

def load(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))  # strict UTF-8

def check(path, maxnodes, diff, folded=None):
    d = load(path)
    k = 6 if diff else 4
    assert d["version"] == 1, "version"
    assert bool(d.get("diff")) == diff, "diff flag"
    names, levels = d["names"], d["levels"]
    assert names[0] == "total", "names[0]"
    assert len(levels[0]) == k and levels[0][0] == 0 and levels[0][k - 1] == 0, "root"
    assert levels[0][1] == d["total"], "root total"
    if diff:
        assert levels[0][3] == d["base_total"], "root base total"
    count = 0
    maxself = None
    prev = None  # nodes of the level above: (x, width, tot, self, btot, bself, name, path)
    paths = {}
    for li, lv in enumerate(levels):
        assert len(lv) > 0 and len(lv) % k == 0, "level %d length" % li
        nodes = []
        for i in range(0, len(lv), k):
            x, tot, slf = lv[i], lv[i + 1], lv[i + 2]
            btot, bslf = (lv[i + 3], lv[i + 4]) if diff else (0, 0)
            name = lv[i + k - 1]
            assert 0 <= name < len(names), "name index"
            assert tot >= 0 and slf >= 0 and btot >= 0 and bslf >= 0, "negative value"
            nodes.append([x, tot + btot, tot, slf, btot, bslf, name, None])
        count += len(nodes)
        if prev is None:
            assert len(nodes) == 1, "one root"
            nodes[0][7] = ()
        else:
            # assign parents left to right; children start at the parent's x, contiguous
            pi, cursor, sums = 0, prev[0][0], {}
            lastname = None
            for n in nodes:
                while not (prev[pi][0] <= n[0] < prev[pi][0] + prev[pi][1]):
                    pi += 1
                    cursor = prev[pi][0]
                    lastname = None
                p = prev[pi]
                assert n[0] == cursor, "children are contiguous from the parent's x"
                assert n[0] + n[1] <= p[0] + p[1], "child inside parent"
                nm = names[n[6]].encode("utf-8")
                assert lastname is None or lastname < nm, "children sorted by name"
                lastname = nm
                cursor += n[1]
                s = sums.setdefault(pi, [0, 0])
                s[0] += n[2]
                s[1] += n[4]
                n[7] = p[7] + (names[n[6]],)
            for pi, p in enumerate(prev):
                s = sums.get(pi, [0, 0])
                assert s[0] + p[3] == p[2], "children + self == total"
                assert s[1] + p[5] == p[4], "base children + base self == base total"
        for n in nodes:
            ms = n[3] + n[5] if diff else n[3]
            maxself = ms if maxself is None else max(maxself, ms)
            if n[3] or n[5]:  # the root's self: samples without frames, stack ""
                key = ";".join(n[7])
                assert key not in paths, "duplicate stack"
                paths[key] = (n[5], n[3]) if diff else n[3]
        prev = nodes
    assert maxself == d["max_self"], "max_self"
    if maxnodes:
        assert count <= maxnodes, "maxNodes: %d > %d" % (count, maxnodes)
    if folded:
        want = {}
        for line in open(folded, encoding="utf-8"):
            parts = line.rstrip("\n").rsplit(" ", 2 if diff else 1)
            if diff:
                want[parts[0]] = (int(parts[1]), int(parts[2]))
            else:
                want[parts[0]] = int(parts[1])
        if diff:
            want = {s: v for s, v in want.items() if v != (0, 0)}
        assert paths == want, "stacks differ from the folded output (%d vs %d stacks)" % (
            len(paths), len(want))
    return count

path, maxnodes, diff = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "diff"
folded = sys.argv[4] if len(sys.argv) > 4 else None
try:
    n = check(path, maxnodes, diff, folded)
except AssertionError as e:
    print("%s (maxNodes %d): %s" % (path, maxnodes, e), file=sys.stderr)
    sys.exit(1)
print(n)
EOF

files=$(ls "$SCORCH_TESTDATA"/pprof/*.pb.gz "$SCORCH_TESTDATA"/perf/*.txt \
    "$SCORCH_TESTDATA"/flamegraph-compat/perf-*.txt 2>/dev/null)
checked=0
for f in $files; do
    "$SCORCH" convert --to folded "$f" -o "$tmp/folded" || fail "convert --to folded $f"
    for m in 0 8192 100 1; do
        "$flame" --json "$f" "$m" >"$tmp/out.json" || fail "flame JSON of $f failed"
        n=$(python3 "$tmp/check.py" "$tmp/out.json" "$m" single \
            $([ "$m" = 0 ] && echo "$tmp/folded")) || fail "bad flame JSON for $f, maxNodes $m"
        [ "$m" = 1 ] && [ "$n" != 1 ] && fail "maxNodes 1 gave $n nodes"
        checked=$((checked + 1))
    done
done

# Diffs: two pairs of different programs and a profile against itself.
pd="$SCORCH_TESTDATA/pprof"
for pair in "cpu-sort cpu-strconv" "mem-regexp mem-encoding_json" "cpu-regexp cpu-regexp"; do
    a="$pd/${pair% *}.pb.gz" b="$pd/${pair#* }.pb.gz"
    "$SCORCH" diff-folded "$a" "$b" >"$tmp/diff-folded" || fail "diff-folded $pair"
    "$diffbin" --stacks "$a" "$b" >"$tmp/stacks" || fail "test_diff --stacks $pair"
    cmp -s "$tmp/diff-folded" "$tmp/stacks" || {
        diff "$tmp/diff-folded" "$tmp/stacks" | head
        fail "per-stack diff differs from scorch diff-folded for $pair"
    }
    for m in 0 8192 50; do
        "$flame" --diff "$a" "$b" "$m" >"$tmp/out.json" || fail "diff JSON of $pair failed"
        python3 "$tmp/check.py" "$tmp/out.json" "$m" diff \
            $([ "$m" = 0 ] && echo "$tmp/diff-folded") >/dev/null ||
            fail "bad diff flame JSON for $pair, maxNodes $m"
        "$flame" --diff "$a" "$b" "$m" -n >"$tmp/out.json" || fail "normalized diff of $pair"
        python3 "$tmp/check.py" "$tmp/out.json" "$m" diff >/dev/null ||
            fail "bad normalized diff flame JSON for $pair, maxNodes $m"
        checked=$((checked + 2))
    done
done
[ "$checked" -ge 60 ] || fail "expected at least 60 checks, ran $checked"
echo "ok: $checked flame graph JSON documents valid, exact and within maxNodes"
