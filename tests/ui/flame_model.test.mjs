// flame_model.test.mjs - the flame graph model: layout from the server's JSON, parents and
// children, hit-testing, zoom math, paths, search share, sandwich.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    ancestry, findPath, firstVisible, matchNodes, modelFromJSON, modelFromTree, nodeAt,
    nodeRect, outermost, pathOf, sandwich, searchRegex, searchShare, valueAt, zoomView, detailFocus,
    truncated,
} from "../../ui/js/flame-model.mjs";
import { frameText } from "../../ui/js/flamegraph.mjs";
import { flameDoc, randomFolded } from "./helpers.mjs";

// docs/api-flamegraph.md's example, verbatim
const DOC = {
    version: 1, sample_type: "samples", unit: "count", total: 20, max_self: 10,
    names: ["total", "main", "other", "a", "c", "b"],
    levels: [[0, 20, 0, 0],
        [0, 18, 0, 1, 18, 2, 2, 2],
        [0, 15, 5, 3, 15, 3, 3, 4],
        [0, 10, 10, 5]],
};
const byName = (m, s) => {
    const out = [];
    for (let i = 0; i < m.n; i++) if (m.names[m.name[i]] === s) out.push(i);
    return out;
};

test("the documented example: arrays, parents, children", () => {
    const m = modelFromJSON(DOC);
    assert.equal(m.n, 6);
    assert.equal(m.nlevels, 4);
    assert.deepEqual([...m.levelStart], [0, 1, 3, 5, 6]);
    assert.equal(m.rootTotal, 20);
    assert.equal(m.unit, "count");
    assert.deepEqual([...m.parent], [-1, 0, 0, 1, 1, 3]);
    assert.deepEqual([...m.firstChild], [1, 3, -1, 5, -1, -1]);
    assert.deepEqual([...m.childCount], [2, 2, 0, 1, 0, 0]);
    assert.deepEqual([...m.depth], [0, 1, 1, 2, 2, 3]);
    assert.throws(() => modelFromJSON({ ...DOC, version: 2 }), /version/);
});

test("the test helper lays stacks out as the server does", () => {
    const doc = flameDoc("main;a;b 10\nmain;a 5\nmain;c 3\nother 2");
    assert.deepEqual(doc.levels, DOC.levels);
    assert.deepEqual(doc.names, DOC.names);
    // and modelFromTree (the sandwich's builder) gives the same arrays
    const t = (name, total, self, kids = []) => ({ name, total, self,
        children: new Map(kids.map((k) => [k.name, k])) });
    const m = modelFromTree(t("total", 20, 0, [
        t("main", 18, 0, [t("a", 15, 5, [t("b", 10, 10)]), t("c", 3, 3)]), t("other", 2, 2)]));
    const d = modelFromJSON(DOC);
    for (const k of ["x", "total", "self", "parent", "depth"]) assert.deepEqual([...m[k]], [...d[k]], k);
    assert.deepEqual([...m.name].map((i) => m.names[i]), [...d.name].map((i) => d.names[i]));
});

test("hit-testing: level and binary search on x", () => {
    const m = modelFromJSON(DOC);
    assert.equal(nodeAt(m, 0, 0), 0);
    assert.equal(nodeAt(m, 0, 19.99), 0);
    assert.equal(nodeAt(m, 0, 20), -1);
    assert.equal(nodeAt(m, 1, 17.5), 1); // main
    assert.equal(nodeAt(m, 1, 18), 2); // other
    assert.equal(nodeAt(m, 2, 14.9), 3); // a
    assert.equal(nodeAt(m, 2, 15), 4); // c
    assert.equal(nodeAt(m, 2, 18.5), -1); // other has no children
    assert.equal(nodeAt(m, 3, 10), -1); // a's self
    assert.equal(nodeAt(m, 3, 9), 5);
    assert.equal(nodeAt(m, 4, 1), -1);
    assert.equal(nodeAt(m, -1, 1), -1);
    assert.equal(nodeAt(m, 1, -0.5), -1);
});

test("hit-testing finds every node of a random profile at its middle", () => {
    const m = modelFromJSON(flameDoc(randomFolded(7, 400)));
    assert.ok(m.n > 500);
    for (let i = 0; i < m.n; i++) {
        if (m.total[i] <= 0) continue;
        assert.equal(nodeAt(m, m.depth[i], m.x[i] + m.total[i] / 2), i);
        assert.equal(nodeAt(m, m.depth[i], m.x[i]), i);
    }
});

test("invariants hold on a random profile: children inside parents, totals add up", () => {
    const m = modelFromJSON(flameDoc(randomFolded(11, 300)));
    for (let i = 0; i < m.n; i++) {
        let sum = 0;
        const c0 = m.firstChild[i];
        for (let c = c0; c >= 0 && c < c0 + m.childCount[i]; c++) {
            assert.equal(m.parent[c], i);
            assert.ok(m.x[c] >= m.x[i] && m.x[c] + m.total[c] <= m.x[i] + m.total[i]);
            sum += m.total[c];
        }
        assert.equal(sum + m.self[i], m.total[i]);
    }
});

test("zoom: the node fills the width, ancestors span it, pixels map back", () => {
    const m = modelFromJSON(DOC);
    const a = byName(m, "a")[0];
    const v = zoomView(m, a);
    assert.deepEqual(v, { x0: 0, w: 15, depth: 2, id: a });
    assert.deepEqual(nodeRect(m, a, v, 300), { x: 0, w: 300 });
    const b = byName(m, "b")[0];
    assert.deepEqual(nodeRect(m, b, v, 300), { x: 0, w: 200 });
    // main (an ancestor) covers the whole view and more
    const main = byName(m, "main")[0];
    const r = nodeRect(m, main, v, 300);
    assert.ok(r.x <= 0 && r.x + r.w >= 300);
    // c and other lie outside
    assert.ok(nodeRect(m, byName(m, "c")[0], v, 300).x >= 300);
    assert.equal(valueAt(v, 300, 150), 7.5);
    // zoom into c: a pixel in its middle is c
    const c = byName(m, "c")[0];
    const vc = zoomView(m, c);
    assert.equal(nodeAt(m, 2, valueAt(vc, 300, 150)), c);
    // the root, a bad id and a zero-width node give the whole graph
    assert.deepEqual(zoomView(m, -1), { x0: 0, w: 20, depth: 0, id: -1 });
    assert.deepEqual(zoomView(m, 99), { x0: 0, w: 20, depth: 0, id: -1 });
});

test("firstVisible starts a level's drawing at the view's left edge", () => {
    const m = modelFromJSON(DOC);
    assert.equal(firstVisible(m, 1, 0), 1);
    assert.equal(firstVisible(m, 1, 17.9), 1);
    assert.equal(firstVisible(m, 1, 18), 2);
    assert.equal(firstVisible(m, 1, 20), 3); // past the level
    assert.equal(firstVisible(m, 2, 16), 4);
});

test("paths: breadcrumb and the URL's zoom survive a reload", () => {
    const m = modelFromJSON(DOC);
    const b = byName(m, "b")[0];
    assert.deepEqual(ancestry(m, b).map((i) => m.names[m.name[i]]), ["main", "a", "b"]);
    assert.deepEqual(pathOf(m, b), ["main", "a", "b"]);
    assert.deepEqual(pathOf(m, 0), []);
    assert.equal(findPath(m, ["main", "a", "b"]), b);
    assert.equal(findPath(m, []), 0);
    assert.equal(findPath(m, ["main", "x"]), -1);
    const m2 = modelFromJSON(flameDoc("main;a;b 1\nmain;a 100\nother;x 5"));
    assert.equal(m2.names[m2.name[findPath(m2, ["main", "a", "b"])]], "b");
});

test("search: regex, case-insensitive, literal when not a regex", () => {
    assert.equal(searchRegex(""), null);
    assert.ok(searchRegex("^MAIN").test("main.go"));
    assert.ok(searchRegex("(*conn)").test("net/http.(*conn).serve"));
    assert.ok(!searchRegex("(*conn)").test("net/http.conn"));
    const m = modelFromJSON(DOC);
    const hit = matchNodes(m, /^(a|b)$/);
    assert.deepEqual([...hit], [0, 0, 0, 1, 0, 1]);
});

test("search share counts nested matches once", () => {
    const m = modelFromJSON(flameDoc("main;f;g;f 10\nmain;f 5\nmain;h;f 3\nother 2"));
    const s = searchShare(m, matchNodes(m, /^f$/));
    assert.equal(s.nodes, 3); // main;f  main;f;g;f  main;h;f
    assert.equal(s.value, 18); // 15 + 3, not 28
    assert.equal(s.functions, 1);
    // a match below another match of a different name is covered too
    const t = searchShare(m, matchNodes(m, /^(f|g)$/));
    assert.equal(t.value, 18);
    assert.equal(t.functions, 2);
    // within a subtree
    const h = findPath(m, ["main", "h"]);
    assert.equal(searchShare(m, matchNodes(m, /^f$/), h).value, 3);
    assert.deepEqual(searchShare(m, matchNodes(m, /nothing/)), { nodes: 0, value: 0, functions: 0 });
    // the root matching covers everything
    assert.equal(searchShare(m, matchNodes(m, /total|f/)).value, 20);
});

test("sandwich: callers above, callees below, recursion once", () => {
    const m = modelFromJSON(flameDoc([
        "main;f;g 10",
        "main;f 5",
        "main;h;f;k 3",
        "main;h;f;f;g 4", // recursion: the inner f is inside the outer one
        "f 2",
        "other 1",
    ].join("\n")));
    assert.equal(outermost(m, m.names.indexOf("f")).length, 3);
    const sw = sandwich(m, "f");
    assert.equal(sw.total, 10 + 5 + 3 + 4 + 2);
    const { callers, callees } = sw;
    assert.equal(callees.names[callees.name[0]], "f");
    assert.equal(callees.rootTotal, 24);
    const at = (mm, path) => {
        const id = findPath(mm, path);
        assert.ok(id >= 0, "no " + path.join(";"));
        return { total: mm.total[id], self: mm.self[id] };
    };
    assert.deepEqual(at(callees, []), { total: 24, self: 7 }); // 5 + 2 end in f
    assert.deepEqual(at(callees, ["g"]), { total: 10, self: 10 });
    assert.deepEqual(at(callees, ["k"]), { total: 3, self: 3 });
    assert.deepEqual(at(callees, ["f"]), { total: 4, self: 0 });
    assert.deepEqual(at(callees, ["f", "g"]), { total: 4, self: 4 });
    // callers: f <- main (15), f <- h <- main (7), f called from the root (2)
    assert.deepEqual(at(callers, []), { total: 24, self: 2 });
    assert.deepEqual(at(callers, ["main"]), { total: 15, self: 15 });
    assert.deepEqual(at(callers, ["h"]), { total: 7, self: 0 });
    assert.deepEqual(at(callers, ["h", "main"]), { total: 7, self: 7 });
    assert.equal(sandwich(m, "nope"), null);
    // invariants of both trees
    for (const mm of [callers, callees]) {
        for (let i = 0; i < mm.n; i++) {
            let sum = 0;
            for (let c = mm.firstChild[i]; c >= 0 && c < mm.firstChild[i] + mm.childCount[i]; c++)
                sum += mm.total[c];
            assert.equal(sum + mm.self[i], mm.total[i]);
        }
    }
});

test("a diff document: combined widths, both sides kept", () => {
    const m = modelFromJSON({
        version: 1, diff: true, sample_type: "samples", unit: "count", total: 40, base_total: 20,
        normalized: false, base_scale: 1, max_self: 40, names: ["total", "main", "a", "b", "c"],
        levels: [[0, 40, 0, 20, 0, 0], [0, 40, 0, 20, 0, 1],
            [0, 30, 30, 10, 10, 2, 40, 0, 0, 10, 10, 3, 50, 10, 10, 0, 0, 4]],
    });
    assert.equal(m.diff, true);
    assert.equal(m.rootTotal, 60);
    assert.deepEqual([...m.total], [60, 60, 40, 10, 10]);
    assert.deepEqual([...m.value], [40, 40, 30, 0, 10]);
    assert.deepEqual([...m.baseTotal], [20, 20, 10, 10, 0]);
    assert.deepEqual([...m.parent], [-1, 0, 1, 1, 1]);
    assert.equal(nodeAt(m, 2, 45), 3);
});

test("100,000 nodes: the model builds in linear time", () => {
    // a wide, deep synthetic document: 1000 leaves under each of 100 chains
    const levels = [[0, 100000, 0, 0]];
    const names = ["total"];
    for (let i = 0; i < 100; i++) names.push("fn" + i);
    const l1 = [], l2 = [];
    for (let i = 0; i < 100; i++) {
        l1.push(i * 1000, 1000, 0, 1 + i);
        for (let j = 0; j < 999; j++) l2.push(i * 1000 + j, 1, 1, 1 + ((i + j) % 100));
    }
    levels.push(l1, l2);
    const t0 = performance.now();
    const m = modelFromJSON({ version: 1, unit: "bytes", total: 100000, names, levels });
    const ms = performance.now() - t0;
    assert.equal(m.n, 1 + 100 + 99900);
    assert.equal(m.parent[m.n - 1], 100);
    assert.ok(ms < 500, `model of 100k nodes took ${ms} ms`);
});

test("colours: stable, by package, varied a little per function", async () => {
    const { colorFor, packageOf, PALETTE, hslHex } = await import("../../ui/js/colors.mjs");
    assert.equal(packageOf("net/http.(*conn).serve"), "net/http");
    assert.equal(packageOf("github.com/a/b.(*T).M"), "github.com/a/b");
    assert.equal(packageOf("runtime.mallocgc"), "runtime");
    assert.equal(packageOf("std::vector<int>::push_back"), "std");
    assert.equal(packageOf("[liblzma.so.5.4.1]"), "liblzma");
    assert.equal(packageOf("[kernel.kallsyms]"), "kernel");
    assert.equal(packageOf("memcpy"), "memcpy");
    assert.equal(packageOf("0x4f2a10"), "?");
    assert.equal(colorFor("main.burn"), colorFor("main.burn"));
    assert.match(colorFor("main.burn"), /^#[0-9a-f]{6}$/);
    assert.equal(hslHex(0, 100, 50), "#ff0000");
    assert.equal(PALETTE.length, 24);
    // two functions of one package: close hues
    const hue = (hex) => {
        const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
        const mx = Math.max(r, g, b), mn = Math.min(r, g, b), d = mx - mn;
        const h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
        return (h * 60 + 360) % 360;
    };
    const d = Math.abs(hue(colorFor("runtime.mallocgc")) - hue(colorFor("runtime.futex")));
    assert.ok(Math.min(d, 360 - d) <= 10, "hues " + d + " apart");
});

test("truncation: a graph of maxNodes nodes lost some; a zoom refetches with a focus", () => {
    const m = modelFromJSON(flameDoc("a;b 1\na;c 2\nd 3"));
    assert.equal(m.n, 5);
    assert.equal(truncated(m, "5"), true);
    assert.equal(truncated(m, "6"), false);
    assert.equal(truncated(m, ""), false); // the default, 8192
    assert.equal(truncated(null, "5"), false);
    assert.equal(detailFocus(""), "");
    assert.equal(detailFocus("runtime.main;main.main;main.(*T).burn"), "^main\\.\\(\\*T\\)\\.burn$");
});

test("the root frame's text says the total; other frames and a diff's root their names", () => {
    const m = modelFromJSON({ ...flameDoc("main;burn 1500000000\nmain;spin 500000000"), unit: "nanoseconds" });
    assert.equal(frameText(m, 0, true), "total (2.00 s)");
    assert.equal(frameText(m, 0), "total");
    assert.equal(frameText(m, 1, true), "main");
    const c = modelFromJSON({ ...flameDoc("a;b 1234"), unit: "count" });
    assert.equal(frameText(c, 0, true), "total (1.23k)");
    const d = { ...m, diff: true };
    assert.equal(frameText(d, 0, true), "total");
});
