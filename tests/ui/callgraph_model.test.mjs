// callgraph_model.test.mjs - the call graph view's interaction state: fit, zoom around the
// pointer, pan, the function of a node and its values, what a click does to the URL, the
// node counts, what the server drew of what was asked.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    clickPatch, cssTransform, drawnInfo, drawnSummary, fitTransform, legendCounts, MAX_SCALE,
    MIN_SCALE, NODECOUNTS, nodeName, nodeValues, nodecountChoices, panBy, shareText, toGraph,
    zoomAt,
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

test("a node's values from its box's lines, as pprof writes them", () => {
    // flat and cum
    assert.deepEqual(nodeValues(["main", "f55", "121.09kB (2.26%)", "of 1083.62kB (20.27%)"]),
                     { flat: "121.09kB", flatShare: "2.26%", cum: "1083.62kB", cumShare: "20.27%" });
    // no flat: one line
    assert.deepEqual(nodeValues(["main", "main", "0 of 5345.15kB (100%)"]),
                     { flat: "0", flatShare: "0%", cum: "5345.15kB", cumShare: "100%" });
    // cum the same as flat: the flat line only; counts have no unit; tiny shares in %g
    assert.deepEqual(nodeValues(["runtime", "mallocgc", "590ms (40.00%)"]),
                     { flat: "590ms", flatShare: "40.00%", cum: "590ms", cumShare: "40.00%" });
    assert.deepEqual(nodeValues(["sort", "Sort", " 12 (0.0094%) ", "of 4510 (3.10%)"]),
                     { flat: "12", flatShare: "0.0094%", cum: "4510", cumShare: "3.10%" });
    assert.equal(nodeValues(["a", "3 (1e-05%)"]).flatShare, "1e-05%");
    // a tag box, a name alone, nothing
    assert.equal(nodeValues(["64B..80B"]), null);
    assert.equal(nodeValues(["main", "f55"]), null);
    assert.equal(nodeValues([]), null);
    assert.equal(nodeValues(["of 3 (1%)"]), null);
});

const attrs = (o) => (n) => (n in o ? String(o[n]) : null);

test("what the server drew: all of it, fewer nodes than asked, fewer calls", () => {
    assert.equal(drawnInfo(attrs({})), null);
    assert.equal(shareText(0.18724), "18.7%");
    assert.equal(shareText(0.0567), "5.67%");
    assert.equal(shareText(0.0012), "0.12%");
    assert.equal(shareText(0.99996), "100%");
    assert.equal(shareText(NaN), "");
    // the profile has fewer functions than asked: all of them, nothing to ask for
    const all = drawnInfo(attrs({ "data-nodes-asked": 80, "data-nodes": 66, "data-nodes-total": 66,
                                  "data-nodes-cut": 0, "data-edges": 4097, "data-edges-thinned": 0,
                                  "data-share": "1.0000", "data-layout": "large",
                                  "data-full-seconds": "4.67", "data-budget-seconds": "5.00" }));
    assert.equal(all.nodes, 66);
    assert.equal(all.layout, "large");
    let s = drawnSummary(all);
    assert.equal(s.text, "all 66 functions (80 asked) · 100% of the total");
    assert.equal(s.more, null);
    assert.match(s.title, /straight arrows without labels/);
    // what was asked, of a larger graph
    s = drawnSummary(drawnInfo(attrs({ "data-nodes-asked": 500, "data-nodes": 500, "data-nodes-total": 1357,
                                       "data-nodes-cut": 0, "data-share": "0.6493", "data-layout": "pprof" })));
    assert.deepEqual(s, { text: "500 of 1,357 functions · 64.9% of the total", title: "", more: null,
                          moreTitle: "" });
    // the budget drew fewer nodes: how much they cover, and the whole graph asked on demand
    s = drawnSummary(drawnInfo(attrs({ "data-nodes-asked": 500, "data-nodes": 154, "data-nodes-total": 1357,
                                       "data-nodes-cut": 1, "data-share": "0.3112", "data-layout": "large",
                                       "data-full-seconds": "12.4", "data-budget-seconds": "5.00" })));
    assert.equal(s.text, "154 of 1,357 functions · 31.1% of the total · 500 asked: more take too long " +
                 "to lay out");
    assert.equal(s.more, "Draw all 500");
    assert.equal(s.moreTitle, "lay out every node and call asked, past the layout budget: about 12 s");
    // ...past the server's deadline (four budgets): said before it is tried
    s = drawnSummary(drawnInfo(attrs({ "data-nodes-asked": 500, "data-nodes": 154, "data-nodes-total": 1357,
                                       "data-nodes-cut": 1, "data-share": "0.3112",
                                       "data-full-seconds": "95", "data-budget-seconds": "5.00" })));
    assert.match(s.moreTitle, /about 95 s, past the server's 20 s limit \(server.layout_timeout\)$/);
    // every node, the lightest calls left out
    s = drawnSummary(drawnInfo(attrs({ "data-nodes-asked": 80, "data-nodes": 66, "data-nodes-total": 66,
                                       "data-nodes-cut": 0, "data-edges-thinned": 3100, "data-share": "1",
                                       "data-full-seconds": "7.25", "data-budget-seconds": "2.5" })));
    assert.equal(s.text, "all 66 functions (80 asked) · 100% of the total · 3,100 lightest calls " +
                 "left out to lay out in time");
    assert.equal(s.more, "Draw every call");
    assert.match(s.moreTitle, /about 7\.3 s$/);
});
