// callgraph_model.test.mjs - the call graph view's interaction state: fit, zoom around the
// pointer, pan, the function of a node, what a click does to the URL, the node counts.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    clickPatch, cssTransform, fitTransform, legendCounts, MAX_SCALE, MIN_SCALE, NODECOUNTS,
    nodeName, nodecountChoices, panBy, toGraph, zoomAt,
} from "../../ui/js/callgraph-model.mjs";
import { DEFAULTS, parseState, stateToSearch } from "../../ui/js/state.mjs";

const near = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test("fit: the whole graph centred, never enlarged", () => {
    const t = fitTransform(2000, 1000, 1012, 612, 6);
    near(t.k, 0.5);
    near(t.x, (1012 - 1000) / 2);
    near(t.y, (612 - 500) / 2);
    const small = fitTransform(100, 50, 800, 600);
    assert.equal(small.k, 1);
    near(small.x, 350);
    near(small.y, 275);
    assert.deepEqual(fitTransform(0, 0, 800, 600), { k: 1, x: 0, y: 0 });
    // a huge graph stops at the smallest scale
    assert.equal(fitTransform(1e7, 1e7, 800, 600).k, MIN_SCALE);
});

test("zoom keeps the graph point under the pointer where it is; pan moves by the drag", () => {
    let t = { k: 0.5, x: 10, y: 20 };
    const before = toGraph(t, 300, 200);
    t = zoomAt(t, 2, 300, 200);
    near(t.k, 1);
    const after = toGraph(t, 300, 200);
    near(after.x, before.x);
    near(after.y, before.y);
    // zooming in and out again is where it started
    const back = zoomAt(t, 0.5, 300, 200);
    near(back.k, 0.5);
    near(back.x, 10);
    near(back.y, 20);
    // clamped at both ends, the pointer's point still fixed
    const max = zoomAt({ k: 4, x: 0, y: 0 }, 10, 100, 100);
    assert.equal(max.k, MAX_SCALE);
    near(toGraph(max, 100, 100).x, 25);
    assert.equal(zoomAt({ k: 0.1, x: 0, y: 0 }, 0.01, 0, 0).k, MIN_SCALE);
    assert.deepEqual(panBy({ k: 2, x: 5, y: 6 }, 100, -50), { k: 2, x: 105, y: -44 });
    assert.equal(cssTransform({ k: 2, x: 5, y: -6 }), "translate(5px, -6px) scale(2)");
});

test("a node's function from pprof's tooltip", () => {
    assert.equal(nodeName("main.burn (590ms)"), "main.burn");
    assert.equal(nodeName("regexp.(*machine).match (15.12s)"), "regexp.(*machine).match");
    assert.equal(nodeName("std::map<int, int>::find (1.5MB)"), "std::map<int, int>::find");
    assert.equal(nodeName("a (b) (10)"), "a (b)");
    assert.equal(nodeName("[libc.so.6] (40ms)"), "[libc.so.6]");
    assert.equal(nodeName(""), "");
    assert.equal(nodeName("no value"), "");
    assert.equal(nodeName(null), "");
});

test("a click focuses on the function; shift-click ignores it; alternatives add up", () => {
    const st = { ...DEFAULTS, type: "cpu:cpu" };
    assert.deepEqual(clickPatch(st, "main.burn"), { focus: "^main\\.burn$" });
    assert.deepEqual(clickPatch(st, "main.burn", "ignore"), { ignore: "^main\\.burn$" });
    assert.deepEqual(clickPatch(st, "main.burn", "hide"), { hide: "^main\\.burn$" });
    const focused = { ...st, ...clickPatch(st, "main.burn") };
    assert.deepEqual(clickPatch(focused, "regexp.(*machine).add"),
                     { focus: "^main\\.burn$|^regexp\\.\\(\\*machine\\)\\.add$" });
    // clicking the focused function again changes nothing
    assert.deepEqual(clickPatch(focused, "main.burn"), { focus: "^main\\.burn$" });
    // the state round-trips through the URL with the call graph's parameters
    const s = { ...focused, view: "callgraph", nodecount: "160" };
    assert.deepEqual(parseState(stateToSearch(s)), s);
    assert.equal(parseState("?view=callgraph&nodecount=lots").nodecount, "");
});

test("node counts and the legend's counts", () => {
    assert.deepEqual(nodecountChoices(""), NODECOUNTS);
    assert.ok(nodecountChoices("").includes(80));
    assert.deepEqual(nodecountChoices("120"), [20, 40, 80, 120, 160, 300, 500]);
    assert.deepEqual(legendCounts("File: prog Showing top 154 nodes out of 1357 See"), { shown: 154, total: 1357 });
    assert.equal(legendCounts("Showing nodes accounting for 840ms, 100% of 840ms total"), null);
});
