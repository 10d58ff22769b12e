// heatmap-model.mjs - the numbers of FlameScope's heatmap (GET /api/v1/heatmap,
// docs/api-heatmap.md): columns of seconds (several per drawn column over long ranges),
// rows of slices of the second, which cell is under the pointer in either orientation,
// the time span of a selection of cells, the time axis, zooming in on a selection, the
// compare link, the colours and their scale.
//
// Times are integer milliseconds here (the URL's precision): a row r of R starts at
// ceil(r * 1000 / R) ms into its second, so for the default 50 rows (20 ms) the spans are
// exactly the server's cells.

import { formatTick } from "./format.mjs";
import { DEFAULTS, stateToSearch } from "./state.mjs";
import { timeTicks } from "./timeline-model.mjs";

// Where row r of R starts, in ms after the second (rowStartMs(R, R) = 1000).
export function rowStartMs(r, rows) {
    return Math.ceil((r * 1000) / rows);
}

// The grid of a heatmap document as drawn on width px: {base (the second of column 0),
// rows, secs (seconds per drawn column), cols (drawn columns), values (cols x rows counts,
// summed over each column's seconds), max}. A column gets at least minPx; over longer
// ranges columns aggregate whole seconds.
export function gridOf(doc, width, minPx = 3) {
    const rows = doc.rows || 50, n = doc.cols || 0;
    const fit = Math.max(1, Math.floor(width / minPx));
    const secs = Math.max(1, Math.ceil(n / fit));
    const cols = Math.ceil(n / secs);
    const values = new Float64Array(cols * rows);
    let max = 0;
    for (let s = 0; s < n; s++) {
        const c = Math.floor(s / secs), col = doc.values[s] || [];
        for (let r = 0; r < rows; r++) {
            const v = (values[c * rows + r] += col[r] || 0);
            if (v > max) max = v;
        }
    }
    return { base: Math.floor(doc.start || 0), rows, secs, cols, values, max };
}

// The cell at (px, py) inside a grid box of w x h css px: {c, r}, clamped to the grid.
// row0 "bottom" (FlameScope's) draws row 0 at the bottom, "top" at the top.
export function cellAt(grid, w, h, px, py, row0 = "bottom") {
    const c = Math.max(0, Math.min(grid.cols - 1, Math.floor((px / w) * grid.cols)));
    const fromTop = Math.max(0, Math.min(grid.rows - 1, Math.floor((py / h) * grid.rows)));
    return { c, r: row0 === "top" ? fromTop : grid.rows - 1 - fromTop };
}

// The box of cell (c, r): {x, y, w, h} in css px, the inverse of cellAt.
export function cellRect(grid, w, h, c, r, row0 = "bottom") {
    const cw = w / grid.cols, ch = h / grid.rows;
    const fromTop = row0 === "top" ? r : grid.rows - 1 - r;
    return { x: c * cw, y: fromTop * ch, w: cw, h: ch };
}

// The span of one cell: [from, until) in unix ms (a column of several seconds: from its
// first second's slice to its last one's).
export function cellSpanMs(grid, c, r) {
    const s0 = grid.base + c * grid.secs;
    return [s0 * 1000 + rowStartMs(r, grid.rows),
        (s0 + grid.secs - 1) * 1000 + rowStartMs(r + 1, grid.rows)];
}

// FlameScope's selection from cell a to cell b (either order): everything from the
// earlier cell's start to the later cell's end, [from, until) in unix ms.
export function selectionMs(grid, a, b) {
    const first = a.c < b.c || (a.c === b.c && a.r <= b.r) ? a : b;
    const last = first === a ? b : a;
    return [cellSpanMs(grid, first.c, first.r)[0], cellSpanMs(grid, last.c, last.r)[1]];
}

// Unix ms as the URL's seconds with millisecond precision: 1700000000250 -> "1700000000.250".
export function msToSeconds(ms) {
    const neg = ms < 0, a = Math.abs(Math.round(ms));
    return (neg ? "-" : "") + Math.floor(a / 1000) + "." + String(a % 1000).padStart(3, "0");
}

// The URL's seconds back to ms (NaN when not a number).
export function secondsToMs(s) {
    return s === "" || s === undefined || s === null ? NaN : Math.round(Number(s) * 1000);
}

// The time axis under a grid drawn width px wide: ticks on round local times (the
// timeline's rule: 1, 2, 5, 10, 15, 30 s, 1 min, ... at least minGap px apart), each {t
// (unix s), x (px from the grid's left edge), label}. tzOffsetSec: seconds east of UTC.
export function axisTicks(grid, width, tzOffsetSec = 0, minGap = 90) {
    const span = grid.cols * grid.secs, t0 = grid.base, t1 = t0 + span;
    if (!(span > 0) || !(width > 0)) return [];
    const { interval, ticks } = timeTicks(t0, t1, width, tzOffsetSec, minGap);
    return ticks.filter((t) => t < t1).map((t) => ({ t, x: ((t - t0) / span) * width,
                                                     label: formatTick(t, interval) }));
}

// The state patch of "Zoom in": the whole seconds around the selection become the range
// (a column a second, the cells as wide as they get), and the selection stays, with its
// flame graph. null without a selection.
export function zoomPatch(state) {
    const a = secondsToMs(state.sel_from), b = secondsToMs(state.sel_until);
    if (!(Number.isFinite(a) && Number.isFinite(b) && b > a)) return null;
    return { from: String(Math.floor(a / 1000)), until: String(Math.ceil(b / 1000)),
             sel_from: state.sel_from, sel_until: state.sel_until };
}

// The cells a span [fromMs, untilMs) covers in the grid, as drawn: per column the rows
// from..to (inclusive), for outlining a selection. Columns outside the grid are left out.
export function spanCells(grid, fromMs, untilMs) {
    const out = [];
    for (let c = 0; c < grid.cols; c++) {
        let lo = -1, hi = -1;
        for (let r = 0; r < grid.rows; r++) {
            const [a, b] = cellSpanMs(grid, c, r);
            // a cell is in when its first slice starts inside the span or its last one ends
            // inside it: with several seconds a column, partly covered ones count
            if (a < untilMs && b > fromMs) {
                if (lo < 0) lo = r;
                hi = r;
            }
        }
        if (lo >= 0) out.push({ c, r0: lo, r1: hi });
    }
    return out;
}

// The diff view of two spans (the first selection is the base): the whole state, as a
// patch of the store (nothing of the heatmap's own state goes along).
export function comparePatch(state, baseMs, newMs) {
    return {
        ...DEFAULTS, view: "diff", type: state.type, query: state.query,
        base_query: state.query, base_from: msToSeconds(baseMs[0]), base_until: msToSeconds(baseMs[1]),
        from: msToSeconds(newMs[0]), until: msToSeconds(newMs[1]),
        focus: state.focus, ignore: state.ignore, hide: state.hide,
    };
}

// The same as a query string (the Compare link's href).
export function compareSearch(state, baseMs, newMs) {
    return stateToSearch(comparePatch(state, baseMs, newMs));
}

// The colour scale of counts up to max as a CSS gradient (left: one sample, right: max),
// steps colours of cellColor's ramp.
export function scaleGradient(max, steps = 12) {
    if (!(max > 0)) return "linear-gradient(to right, #ffffff, #ffffff)";
    const stops = [];
    for (let i = 0; i <= steps; i++) {
        const v = 1 + ((max - 1) * i) / steps;
        stops.push(`${cellColor(v, max)} ${((i / steps) * 100).toFixed(1)}%`);
    }
    return `linear-gradient(to right, ${stops.join(", ")})`;
}

// The colour of a count: white for none, then from a pale yellow to a dark red with the
// share of the largest count (FlameScope's ramp), a little lifted (power 0.75) so that
// single samples stay visible without drowning a band of ten times as many.
export function cellColor(v, max) {
    if (!(v > 0) || !(max > 0)) return "#ffffff";
    const f = Math.pow(Math.min(1, v / max), 0.75);
    const lerp = (a, b) => Math.round(a + (b - a) * f);
    const r = lerp(255, 165), g = lerp(236, 0), b = lerp(160, 38);
    return "#" + [r, g, b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
