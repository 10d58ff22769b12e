// watch_model.test.mjs - functions over time, markers and the Changes view without a
// browser: the URL state of fn/fnvalue/kind, the API parameters, where markers go and what
// they say, sparkline scaling, and the diff and explore patches a finding opens.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    addFunction, DEFAULTS, functionList, joinFunctions, kindList, kindText, MAX_FUNCTIONS, parseState,
    removeFunction, stateToSearch,
} from "../../ui/js/state.mjs";
import { changesParams, functionParams, markersParams, overTimePatch } from "../../ui/js/api.mjs";
import {
    labelsKey, linearScale, markerAt, markerGroups, markerText, placeMarkers,
} from "../../ui/js/timeline-model.mjs";
import {
    beforeAfter, changeText, findingDiffPatch, findingOverTimePatch, findingSides, groupMarkers, groupQuery,
    kindCounts, shownFindings, sparkGuides, sparkline,
} from "../../ui/js/changes-model.mjs";
import { functionContent, IN_FLIGHT, isFunctionAnswer, limiter } from "../../ui/js/fn-over-time.mjs";
import { diffOverTimePatch } from "../../ui/js/diff-model.mjs";
import { formatDateTime } from "../../ui/js/format.mjs";
import { exactName } from "../../ui/js/selector.mjs";

// ---- URL state ----

const AWKWARD = [
    "std::map<int, std::string>::operator[]", // commas, brackets
    "main.(*T).Get[go.shape.int,go.shape.string]",
    "operator&=", "a=b&c=d;e", "naïve café", "100% (50)", "x+y /z", "#hash?q",
];

test("fn round-trips names with commas, & = ; % + / # ? and non-ASCII, one fn= each", () => {
    const s = { ...DEFAULTS, fn: AWKWARD.join("\n"), fnvalue: "total", kind: "step,gone" };
    const q = stateToSearch(s);
    assert.deepEqual(parseState(q), s);
    assert.deepEqual(functionList(parseState(q).fn), AWKWARD);
    // the URL repeats fn=, in order; URLSearchParams reads it back name by name
    assert.deepEqual(new URLSearchParams(q).getAll("fn"), AWKWARD);
    assert.deepEqual(parseState(new URL("http://h/" + q).search), s);
});

test("fn in the URL: repeats and empties dropped, at most MAX_FUNCTIONS kept, newlines cannot split a name", () => {
    const q = "?fn=a&fn=&fn=b&fn=a&fn=" + encodeURIComponent("c\nd");
    assert.deepEqual(functionList(parseState(q).fn), ["a", "b", "c d"]);
    const many = Array.from({ length: MAX_FUNCTIONS + 3 }, (_, i) => "f" + i);
    const p = new URLSearchParams();
    for (const n of many) p.append("fn", n);
    assert.deepEqual(functionList(parseState("?" + p).fn), many.slice(0, MAX_FUNCTIONS));
    assert.equal(parseState("").fn, "");
    assert.equal(stateToSearch({ ...DEFAULTS, fn: "" }), "?from=now-1h&until=now", "no fn= when none is pinned");
});

test("pinning and removing functions", () => {
    let fn = addFunction("", "main.a");
    fn = addFunction(fn, "x, y");
    assert.deepEqual(functionList(fn), ["main.a", "x, y"]);
    assert.equal(addFunction(fn, "main.a"), fn, "pinned twice: once");
    assert.deepEqual(functionList(removeFunction(fn, "main.a")), ["x, y"]);
    assert.equal(removeFunction(removeFunction(fn, "main.a"), "x, y"), "");
    // past the limit the oldest goes, the new one is shown
    let full = joinFunctions(Array.from({ length: MAX_FUNCTIONS }, (_, i) => "f" + i));
    full = addFunction(full, "newest");
    assert.equal(functionList(full).length, MAX_FUNCTIONS);
    assert.equal(functionList(full)[MAX_FUNCTIONS - 1], "newest");
    assert.ok(!functionList(full).includes("f0"));
});

test("fnvalue and kind: bad values fall back, kinds in one order, all of them is the default", () => {
    assert.equal(parseState("?fnvalue=total").fnvalue, "total");
    assert.equal(parseState("?fnvalue=cum").fnvalue, "self");
    assert.equal(stateToSearch({ ...DEFAULTS, fnvalue: "self" }), "?from=now-1h&until=now");
    assert.equal(parseState("?kind=gone,step").kind, "step,gone");
    assert.equal(parseState("?kind=bogus").kind, "");
    assert.equal(parseState("?kind=step,bogus").kind, "step");
    assert.equal(parseState("?kind=gone,new,trend,step").kind, "", "every kind: no filter");
    assert.deepEqual(kindList(""), ["step", "trend", "new", "gone"]);
    assert.deepEqual(kindList("trend,step"), ["step", "trend"]);
    assert.equal(kindText([]), "");
    assert.equal(kindText(["new"]), "new");
    assert.equal(parseState("?view=changes").view, "changes");
    const s = { ...DEFAULTS, view: "changes", kind: "trend", q: "0.1", group_by: "env" };
    assert.deepEqual(parseState(stateToSearch(s)), s);
});

// ---- API parameters ----

test("a function's timeline asks the timeline's parameters with function and value", () => {
    const st = { ...DEFAULTS, query: '{service_name="api"}', type: "cpu:cpu", from: "now-6h", until: "now",
                 group_by: "pod", fnvalue: "total", sel_from: "1", sel_until: "2", focus: "x" };
    assert.deepEqual(functionParams(st, "a, b"), { query: '{service_name="api"}', type: "cpu:cpu", from: "now-6h",
                                                  until: "now", group_by: "pod", function: "a, b", value: "total" });
    assert.deepEqual(markersParams(st), { query: '{service_name="api"}', type: "cpu:cpu", from: "now-6h",
                                          until: "now" }, "per service, whatever the lines are");
    assert.equal(changesParams({ ...st, group_by: "" }).group_by, "service_name", "one group per service by default");
    assert.equal(changesParams({ ...st, q: "0.01" }).q, "0.01");
});

test("Show over time: pinned beside the others; from another view, explore without its span", () => {
    const ex = { ...DEFAULTS, fn: "a", sel_from: "10", sel_until: "20" };
    assert.deepEqual(overTimePatch(ex, "b"), { view: "explore", fn: "a\nb", series: "", time: "", function: "" });
    const hm = { ...DEFAULTS, view: "heatmap", sel_from: "10.040", sel_until: "10.5" };
    assert.deepEqual(overTimePatch(hm, "b"), { view: "explore", fn: "b", series: "", time: "", function: "",
                                               sel_from: "", sel_until: "" });
    // from the diff view: both sides' ranges, the new side's selector
    const d = { ...DEFAULTS, view: "diff", from: "2000", until: "3000", base_from: "1000", base_until: "1500" };
    const p = diffOverTimePatch(d, "main.x", 5e6);
    assert.equal(p.view, "explore");
    assert.equal(p.from, "1000");
    assert.equal(p.until, "3000");
    assert.equal(p.fn, "main.x");
    assert.equal(p.base_from, "");
});

test("a function's answer is told from a server's plain timeline; zeros from no profile", () => {
    assert.ok(isFunctionAnswer({ function: "a", series: [] }, "a"));
    assert.ok(!isFunctionAnswer({ series: [] }, "a"), "a server without function= answers the plain timeline");
    assert.equal(functionContent({ series: [{ values: [null, 0, 2] }] }), "values");
    assert.equal(functionContent({ series: [{ values: [null, 0, 0] }] }), "zeros");
    assert.equal(functionContent({ series: [{ values: [null, null] }] }), "none");
    assert.equal(functionContent({ series: [] }), "none");
});

// ---- markers ----

const M = (at, value, labels = { service_name: "api" }, label = "version") => ({ labels, label, value, at });

test("markers are placed at their time, outside the range left out, close ones share a place", () => {
    const x = linearScale(1000, 2000, 64, 1064); // 1 px a second
    const ps = placeMarkers([M(1500.5, "v2"), M(900, "v0"), M(2100, "v9"), M(1200, "v1"),
        M(1503, "v2", { service_name: "db" })], x, 1000, 2000);
    assert.deepEqual(ps.map((p) => p.x), [264, 564.5]);
    assert.deepEqual(ps.map((p) => p.items.map((m) => m.value)), [["v1"], ["v2", "v2"]]);
    assert.equal(ps[1].at, 1500.5);
    assert.equal(placeMarkers(null, x, 1000, 2000).length, 0);
    assert.equal(placeMarkers([{ label: "v", value: "x", at: NaN }], x, 1000, 2000).length, 0);
    // at both ends of the range: drawn
    assert.equal(placeMarkers([M(1000, "a"), M(2000, "b")], x, 1000, 2000).length, 2);
    // the pointer finds the nearest place within 5 px
    assert.equal(markerAt(ps, 267).items[0].value, "v1");
    assert.equal(markerAt(ps, 270), null);
    assert.equal(markerGroups([M(1, "a"), M(2, "b"), M(3, "c", { service_name: "db" })]), 2);
});

test("a marker says which value from when, with its group when there are several", () => {
    const at = 1764510300.4; // some minute
    const hm = formatDateTime(at, false).slice(11);
    assert.match(hm, /^\d\d:\d\d$/);
    assert.equal(markerText(M(at, "v2")), `version=v2 from ${hm}`);
    assert.equal(markerText(M(at, "v2", { service_name: "api", env: "prod" }), { withGroup: true }),
        `env=prod, service_name=api: version=v2 from ${hm}`);
    assert.equal(markerText(M(at, "v2"), { withDate: true }), `version=v2 from ${formatDateTime(at, false)}`);
});

// ---- the sparkline ----

test("a sparkline spans its steps, scales to its values with a margin, and breaks at gaps", () => {
    const ts = [0, 60, 120, 180, 240, 300, 360, 420, 480, 540];
    const vs = [10, 10, 10, null, null, null, 20, 20, 20, 20];
    const sp = sparkline(vs, ts, 60, 204, 44, { pad: 2 });
    assert.equal(sp.lo, 9);
    assert.equal(sp.hi, 21);
    assert.equal(sp.x(0), 2);
    assert.equal(sp.x(600), 202);
    assert.equal(sp.y(9), 42);
    assert.equal(sp.y(21), 2);
    // two runs: the gap of three steps is longer than the usual spacing
    assert.equal(sp.runs.length, 2);
    assert.deepEqual(sp.runs[0].map((p) => p[0]), [12, 32, 52], "points at the middle of their steps");
    assert.ok(sp.runs[0].every((p) => p[1] === sp.y(10)));
    assert.ok(sp.runs[1][0][1] < sp.runs[0][0][1], "higher values are higher up");
    // a flat line is in the middle; no values: no runs
    const flat = sparkline([5, 5, 5], [0, 1, 2], 1, 100, 40, { pad: 0 });
    assert.equal(flat.runs[0][0][1], 20);
    assert.deepEqual(sparkline([null, null], [0, 1], 1, 100, 40).runs, []);
    // levels drawn with it are inside the box
    const ex = sparkline([10, 11], [0, 1], 1, 100, 40, { extra: [30] });
    assert.ok(ex.y(30) >= 0 && ex.y(10) <= 40);
});

test("a finding's guides: the change time and the levels before and after; a trend's fitted line", () => {
    const ts = [0, 60, 120, 180];
    const sp = sparkline([1, 1, 3, 3], ts, 60, 244, 40, { pad: 2 });
    const step = sparkGuides({ kind: "step", at: 120, before: 1, after: 3, timestamps: ts }, sp);
    assert.equal(step.at, sp.x(120));
    assert.deepEqual(step.levels, [[2, sp.y(1), sp.x(120), sp.y(1)], [sp.x(120), sp.y(3), 242, sp.y(3)]]);
    assert.equal(sparkGuides({ kind: "new", at: 120, after: 3, timestamps: ts }, sp).levels.length, 1);
    assert.equal(sparkGuides({ kind: "gone", at: 120, before: 1, timestamps: ts }, sp).levels[0][2], sp.x(120));
    const tr = sparkGuides({ kind: "trend", before: 1, after: 3, timestamps: ts }, sp);
    assert.equal(tr.at, null);
    assert.deepEqual(tr.levels, [[sp.x(30), sp.y(1), sp.x(210), sp.y(3)]]);
});

// ---- what a finding says, where it leads ----

const STEP = { labels: { service_name: "api" }, function: "main.hot", kind: "step", at: 1700001800, before: 5e8,
               after: 1e9, change_pct: 100, interval: [90, 110], q: 0.00001, unit: "nanoseconds/s",
               values: [5e8, 1e9], timestamps: [1700000000, 1700001800] };
const TREND = { labels: { service_name: "db" }, function: "leak", kind: "trend", before: 1000, after: 2000,
                slope_per_hour: 500, interval: [400, 600], q: 0.002, unit: "bytes" };

test("before -> after in the unit, the change with its interval, a trend's slope", () => {
    assert.equal(beforeAfter(STEP), "0.5 cores → 1 cores");
    assert.deepEqual(changeText(STEP), { change: "+100.0%", interval: "+90.0% … +110.0%", slope: "" });
    assert.equal(beforeAfter({ ...STEP, kind: "new", before: undefined }), "none → 1 cores");
    assert.equal(beforeAfter({ ...STEP, kind: "gone", after: undefined }), "0.5 cores → none");
    assert.equal(changeText({ kind: "new" }).change, "new");
    const t = changeText(TREND);
    assert.equal(t.change, "+100.0%", "the fitted change over the range");
    assert.equal(t.slope, "+500 B/h");
    assert.equal(t.interval, "+400 B/h … +600 B/h");
    assert.equal(changeText({ ...TREND, slope_per_hour: -500, interval: [-600, -400] }).slope, "-500 B/h");
});

test("findings shown by kind in the server's order, counted by kind", () => {
    const doc = { changes: [STEP, TREND, { ...STEP, function: "b", kind: "gone" }] };
    assert.deepEqual(shownFindings(doc, "").map((f) => f.function), ["main.hot", "leak", "b"]);
    assert.deepEqual(shownFindings(doc, "gone,trend").map((f) => f.function), ["leak", "b"]);
    assert.deepEqual(shownFindings(null, ""), []);
    assert.deepEqual(kindCounts(doc), { step: 1, trend: 1, new: 0, gone: 1 });
    assert.deepEqual(groupMarkers([M(1, "v2"), M(2, "v3", { service_name: "db" })], { service_name: "db" })
        .map((m) => m.value), ["v3"]);
});

test("a step's diff: its group's selector, base [from, at), new [at, until), the function searched", () => {
    const st = { ...DEFAULTS, view: "changes", type: "cpu:cpu", query: '{env="prod"}', from: "1700000000",
                 until: "1700003600", group_by: "", fn: "", focus: "x" };
    const p = findingDiffPatch(STEP, st);
    assert.equal(p.view, "diff");
    assert.equal(p.query, '{env="prod", service_name="api"}');
    assert.equal(p.base_query, "");
    assert.deepEqual([p.base_from, p.base_until, p.from, p.until],
        ["1700000000", "1700001800", "1700001800", "1700003600"]);
    assert.equal(exactName(p.search), "main.hot");
    assert.equal(p.focus, "", "the function is searched, not filtered");
    // the URL it makes opens that diff
    const back = parseState(stateToSearch({ ...st, ...p }));
    assert.equal(back.view, "diff");
    assert.equal(back.base_until, "1700001800");
    assert.equal(exactName(back.search), "main.hot");
    // a relative range is taken as of now; a time with a fraction keeps its milliseconds
    const now = 1700003600000;
    const rel = findingDiffPatch({ ...STEP, at: 1700001800.25 }, { ...st, from: "now-1h", until: "now" }, now);
    assert.deepEqual([rel.base_from, rel.base_until, rel.from, rel.until],
        ["1700000000", "1700001800.25", "1700001800.25", "1700003600"]);
});

test("a trend's diff: the first quarter of the range against the last", () => {
    const st = { ...DEFAULTS, query: "", from: "1700000000", until: "1700004000" };
    const p = findingDiffPatch(TREND, st);
    assert.equal(p.query, '{service_name="db"}');
    assert.deepEqual([p.base_from, p.base_until, p.from, p.until],
        ["1700000000", "1700001000", "1700003000", "1700004000"]);
    // a step whose time is at the range's edge cannot split it: quarters too
    assert.deepEqual(findingSides({ ...STEP, at: 1700000000 }, st), { base: [1700000000, 1700001000],
                                                                       new: [1700003000, 1700004000] });
    // a range that does not parse: the finding's own steps
    assert.deepEqual(findingSides(STEP, { from: "bogus", until: "now" }),
        { base: [1700000000, 1700001800], new: [1700001800, 1700003600] });
});

test("a finding over time: explore on its group with the function pinned and searched", () => {
    const st = { ...DEFAULTS, view: "changes", query: "", fn: "other", sel_from: "5", sel_until: "6" };
    const p = findingOverTimePatch(STEP, st);
    assert.equal(p.view, "explore");
    assert.equal(p.query, '{service_name="api"}');
    assert.deepEqual(functionList(p.fn), ["other", "main.hot"]);
    assert.equal(exactName(p.search), "main.hot");
    assert.equal(p.sel_from, "");
    assert.equal(groupQuery("", {}), "{}");
    assert.equal(groupQuery('{service_name="x"}', { service_name: "api" }), '{service_name="api"}');
});

test("the functions' charts ask at most IN_FLIGHT at once, in order, and a failure frees its turn", async () => {
    const run = limiter(2);
    let active = 0, most = 0;
    const order = [];
    const task = (i, fail = false) => () => new Promise((res, rej) => {
        active++;
        most = Math.max(most, active);
        order.push(i);
        setTimeout(() => {
            active--;
            if (fail) rej(new Error("x" + i));
            else res(i);
        }, 5);
    });
    const all = [run(task(0)), run(task(1, true)), run(task(2)), run(task(3)), run(task(4))];
    const got = await Promise.allSettled(all);
    assert.equal(most, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.deepEqual(got.map((g) => g.status), ["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    assert.equal(IN_FLIGHT, 2);
});

test("a line is the same line in the timeline and a function's chart whatever its labels' order", () => {
    assert.equal(labelsKey({ b: "2", a: "1" }), labelsKey({ a: "1", b: "2" }));
    assert.notEqual(labelsKey({ a: "1" }), labelsKey({ a: "1", b: "" }));
    assert.notEqual(labelsKey({ a: "1,b=2" }), labelsKey({ a: "1", b: "2" }));
    assert.equal(labelsKey(null), "");
});
