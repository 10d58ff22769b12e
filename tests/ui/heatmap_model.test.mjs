// heatmap_model.test.mjs - the heatmap's selection maths: cells under the pointer in both
// orientations, the time span of a cell and of a selection (FlameScope's rule, the server's
// cell edges), aggregated columns, the time axis, zooming in, the compare URL, colours and
// their scale.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    axisTicks, cellAt, cellColor, cellRect, cellSpanMs, compareSearch, gridOf, msToSeconds, rowStartMs,
    scaleGradient, secondsToMs, selectionMs, spanCells, zoomPatch,
} from "../../ui/js/heatmap-model.mjs";
import { DEFAULTS, parseState } from "../../ui/js/state.mjs";

// A document of `cols` seconds from 1700000000.37, counts c*100 + r.
function doc(cols, rows = 50) {
    return { start: 1700000000.37, rows, cols,
             values: Array.from({ length: cols }, (_, c) => Array.from({ length: rows }, (_, r) => c * 100 + r)) };
}

test("rows start where the server's cells do", () => {
    assert.equal(rowStartMs(0, 50), 0);
    assert.equal(rowStartMs(1, 50), 20);
    assert.equal(rowStartMs(50, 50), 1000);
    // 7 rows: row 1 starts at the first ms at or after 1000/7 = 142.86 ms
    assert.equal(rowStartMs(1, 7), 143);
    assert.equal(rowStartMs(7, 7), 1000);
    for (let r = 0; r < 1000; r++) assert.equal(rowStartMs(r, 1000), r);
});

test("cell under the pointer, row 0 at the bottom (FlameScope's) and at the top", () => {
    const g = gridOf(doc(10), 1000); // 10 columns of 100 px, 50 rows
    assert.equal(g.cols, 10);
    assert.equal(g.secs, 1);
    const W = 1000, H = 400; // rows 8 px high
    assert.deepEqual(cellAt(g, W, H, 0, 399, "bottom"), { c: 0, r: 0 });
    assert.deepEqual(cellAt(g, W, H, 0, 0, "bottom"), { c: 0, r: 49 });
    assert.deepEqual(cellAt(g, W, H, 0, 0, "top"), { c: 0, r: 0 });
    assert.deepEqual(cellAt(g, W, H, 999, 399, "top"), { c: 9, r: 49 });
    assert.deepEqual(cellAt(g, W, H, 350, 8 * 10 + 3, "bottom"), { c: 3, r: 39 });
    assert.deepEqual(cellAt(g, W, H, 350, 8 * 10 + 3, "top"), { c: 3, r: 10 });
    // outside the box: clamped to the grid
    assert.deepEqual(cellAt(g, W, H, -5, 1000, "bottom"), { c: 0, r: 0 });
    assert.deepEqual(cellAt(g, W, H, 5000, -3, "top"), { c: 9, r: 0 });
    // cellRect is its inverse in both orientations, for every cell
    for (const row0 of ["bottom", "top"]) {
        for (let c = 0; c < 10; c++) for (let r = 0; r < 50; r++) {
            const b = cellRect(g, W, H, c, r, row0);
            assert.deepEqual(cellAt(g, W, H, b.x + b.w / 2, b.y + b.h / 2, row0), { c, r });
            assert.deepEqual(cellAt(g, W, H, b.x + 0.01, b.y + 0.01, row0), { c, r });
        }
    }
});

test("a cell's span and a selection's: from the earlier cell's start to the later one's end", () => {
    const g = gridOf(doc(10), 1000);
    assert.equal(g.base, 1700000000);
    assert.deepEqual(cellSpanMs(g, 0, 0), [1700000000000, 1700000000020]);
    assert.deepEqual(cellSpanMs(g, 3, 49), [1700000003980, 1700000004000]);
    // one column, rows 2..7: 40 ms to 160 ms of that second, in either drag direction
    const a = { c: 3, r: 2 }, b = { c: 3, r: 7 };
    assert.deepEqual(selectionMs(g, a, b), [1700000003040, 1700000003160]);
    assert.deepEqual(selectionMs(g, b, a), [1700000003040, 1700000003160]);
    // across columns: the rest of the first second, the whole ones between, the start of the last
    assert.deepEqual(selectionMs(g, { c: 5, r: 10 }, { c: 2, r: 40 }), [1700000002800, 1700000005220]);
    // one cell
    assert.deepEqual(selectionMs(g, { c: 1, r: 1 }, { c: 1, r: 1 }), [1700000001020, 1700000001040]);
    // a selection covers exactly the cells whose samples it holds
    const cells = spanCells(g, 1700000003040, 1700000003160);
    assert.deepEqual(cells, [{ c: 3, r0: 2, r1: 7 }]);
    assert.deepEqual(spanCells(g, 1700000002800, 1700000004020).map((x) => [x.c, x.r0, x.r1]),
                     [[2, 40, 49], [3, 0, 49], [4, 0, 0]]);
});

test("the URL's seconds with millisecond precision", () => {
    assert.equal(msToSeconds(1700000003040), "1700000003.040");
    assert.equal(msToSeconds(1700000003000), "1700000003.000");
    assert.equal(msToSeconds(999), "0.999");
    assert.equal(secondsToMs("1700000003.040"), 1700000003040);
    assert.equal(secondsToMs("1700000003.16"), 1700000003160);
    assert.ok(Number.isNaN(secondsToMs("")));
    for (const ms of [0, 1, 20, 1700000000999, 1796020297337])
        assert.equal(secondsToMs(msToSeconds(ms)), ms);
});

test("long ranges: columns of several seconds, summed", () => {
    // an hour of seconds on 1200 px at 3 px a column at least: 9 seconds a column
    const d = doc(3600);
    const g = gridOf(d, 1200);
    assert.equal(g.secs, 9);
    assert.equal(g.cols, 400);
    // column 1 holds seconds 9..17: the sum of their counts per row
    let want = 0;
    for (let s = 9; s < 18; s++) want += s * 100 + 7;
    assert.equal(g.values[1 * 50 + 7], want);
    assert.equal(g.max, Math.max(...Array.from(g.values)));
    // a cell is its row in each of its seconds: from the first one's slice to the last one's
    assert.deepEqual(cellSpanMs(g, 1, 0), [1700000009000, 1700000017020]);
    // a short range keeps one second per column
    assert.equal(gridOf(doc(5), 1200).secs, 1);
    assert.equal(gridOf({ start: 0, rows: 50, cols: 0, values: [] }, 800).cols, 0);
});

test("compare: the diff view of the two spans, the first as the base", () => {
    const st = { ...DEFAULTS, view: "heatmap", type: "cpu:cpu-clock", query: '{service_name="bursts"}',
                 sel_from: "1700000003.040", sel_until: "1700000003.160", rows: "100" };
    const q = compareSearch(st, [1700000003040, 1700000003160], [1700000004400, 1700000004820]);
    assert.equal(q.slice(0, 10), "?view=diff");
    const p = new URLSearchParams(q);
    assert.equal(p.get("view"), "diff");
    assert.equal(p.get("type"), "cpu:cpu-clock");
    assert.equal(p.get("query"), '{service_name="bursts"}');
    assert.equal(p.get("base_query"), '{service_name="bursts"}');
    assert.equal(p.get("base_from"), "1700000003.040");
    assert.equal(p.get("base_until"), "1700000003.160");
    assert.equal(p.get("from"), "1700000004.400");
    assert.equal(p.get("until"), "1700000004.820");
    // nothing of the heatmap's own state goes along
    assert.equal(p.get("sel_from"), null);
    assert.equal(p.get("rows"), null);
    // and the UI reads it back as that state
    const s = parseState(q);
    assert.equal(s.view, "diff");
    assert.equal(s.base_from, "1700000003.040");
});

test("colours: white for none, darker with more", () => {
    assert.equal(cellColor(0, 10), "#ffffff");
    assert.equal(cellColor(5, 0), "#ffffff");
    const lum = (hex) => {
        const n = parseInt(hex.slice(1), 16);
        return 0.3 * (n >> 16) + 0.59 * ((n >> 8) & 255) + 0.11 * (n & 255);
    };
    let prev = 256;
    for (let v = 1; v <= 10; v++) {
        const l = lum(cellColor(v, 10));
        assert.ok(l < prev, `${v}: ${l} < ${prev}`);
        prev = l;
    }
    assert.equal(cellColor(20, 10), cellColor(10, 10));
});

test("the time axis: round times, evenly spaced, inside the grid, where they are drawn", () => {
    // 600 s from an odd second: two seconds a column on 1300 px
    const g = gridOf({ start: 1700000007.37, rows: 50, cols: 600, values: [] }, 1300);
    assert.equal(g.secs, 2);
    const ticks = axisTicks(g, 1300);
    assert.ok(ticks.length >= 5 && ticks.length <= 1300 / 90, ticks.length);
    const step = ticks[1].t - ticks[0].t;
    assert.equal(step, 60);
    for (const k of ticks) {
        assert.equal(k.t % step, 0, "on a round time: " + k.t);
        assert.ok(k.t >= g.base && k.t < g.base + 600);
        assert.ok(Math.abs(k.x - ((k.t - g.base) / 600) * 1300) < 1e-9);
        assert.match(k.label, /^\d\d:\d\d$/);
    }
    for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i].t - ticks[i - 1].t, step);
    // local time: a zone 5:30 east puts the ticks on its round minutes
    const ist = axisTicks(g, 1300, 19800);
    for (const k of ist) assert.equal((k.t + 19800) % 60, 0);
    // a few seconds on a wide grid: a tick a second, with the seconds in the label
    const short = axisTicks(gridOf({ start: 1700000007.37, rows: 50, cols: 5, values: [] }, 1300), 1300);
    assert.deepEqual(short.map((k) => k.t), [1700000007, 1700000008, 1700000009, 1700000010, 1700000011]);
    assert.match(short[0].label, /^\d\d:\d\d:27$/);
    assert.deepEqual(axisTicks(gridOf({ start: 0, rows: 50, cols: 0, values: [] }, 1300), 1300), []);
});

test("zoom in: the whole seconds around the selection, which stays", () => {
    const s = { ...DEFAULTS, from: "now-1h", until: "now", sel_from: "1700000003.040", sel_until: "1700000004.160" };
    assert.deepEqual(zoomPatch(s), { from: "1700000003", until: "1700000005",
                                     sel_from: "1700000003.040", sel_until: "1700000004.160" });
    assert.deepEqual(zoomPatch({ ...s, sel_from: "1700000003.000", sel_until: "1700000004.000" }),
                     { from: "1700000003", until: "1700000004", sel_from: "1700000003.000", sel_until: "1700000004.000" });
    assert.equal(zoomPatch({ ...s, sel_from: "", sel_until: "" }), null);
});

test("the colour scale runs through the cells' colours from one sample to the most", () => {
    const g = scaleGradient(40, 4);
    assert.ok(g.startsWith("linear-gradient(to right, " + cellColor(1, 40) + " 0.0%"), g);
    assert.ok(g.endsWith(cellColor(40, 40) + " 100.0%)"), g);
    assert.equal(g.split("%").length - 1, 5);
    assert.equal(scaleGradient(0), "linear-gradient(to right, #ffffff, #ffffff)");
});
