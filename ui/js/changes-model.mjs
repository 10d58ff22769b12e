// changes-model.mjs - the numbers of the Changes view (view=changes): which findings of
// /api/v1/changes are shown, their sparklines (scaled, broken at gaps, the change time and
// the levels before and after marked), what they say in words, and the state patches that
// open a finding's diff (the two sides of the change) or its function over time.

import { formatChange, formatInterval, formatQ } from "./diff-model.mjs";
import { formatMetric } from "./format.mjs";
import { hasValue, lineRuns } from "./timeline-model.mjs";
import { exactRegex, withMatcher } from "./selector.mjs";
import { addFunction, kindList } from "./state.mjs";
import { parseTime } from "./timespec.mjs";

// ---- which findings ----

// The findings of a /api/v1/changes answer whose kind the state's kind filter shows, in
// the server's order (the largest change first; a trend by its change over the range).
export function shownFindings(doc, kind) {
    const ks = kindList(kind);
    return ((doc && doc.changes) || []).filter((f) => ks.includes(f.kind));
}

// How many findings of each kind an answer has: {step: n, trend: n, new: n, gone: n}.
export function kindCounts(doc) {
    const out = { step: 0, trend: 0, new: 0, gone: 0 };
    for (const f of (doc && doc.changes) || []) if (f.kind in out) out[f.kind]++;
    return out;
}

// True when two label sets are the same (a marker's group and a finding's).
export function sameGroup(a, b) {
    const ka = Object.keys(a || {}), kb = Object.keys(b || {});
    return ka.length === kb.length && ka.every((k) => (b || {})[k] === a[k]);
}

// The markers of a finding's group.
export function groupMarkers(markers, labels) {
    return (markers || []).filter((m) => sameGroup(m.labels, labels));
}

// A group's labels for people: "service_name=api, env=prod"; "{}" for none.
export function groupText(labels) {
    const ks = Object.keys(labels || {}).sort();
    return ks.length ? ks.map((k) => `${k}=${labels[k]}`).join(", ") : "{}";
}

// ---- the sparkline ----

const finite = (v) => typeof v === "number" && Number.isFinite(v);

// The sparkline of values (null: no profile in that step) at timestamps (each step's start,
// unix s; step: their width) on a w x h box with pad px inside its edges. The value axis
// runs from the smallest to the largest value (and any of extra, the levels drawn with it)
// with a tenth of that span added above and below, so that a change of a few percent shows
// (the numbers beside it say how large); a flat line sits in the middle. A point is drawn
// at the middle of its step; the line breaks where lineRuns breaks the timeline's.
// {runs: [[[x, y], ...], ...], x(t), y(v), lo, hi, t0, t1}; runs is [] without values.
export function sparkline(values, timestamps, step, w, h, { pad = 2, extra = [] } = {}) {
    const vs = (values || []).filter(finite).concat(extra.filter(finite));
    let lo = vs.length ? Math.min(...vs) : 0, hi = vs.length ? Math.max(...vs) : 1;
    if (hi === lo) {
        const d = Math.abs(hi) * 0.5 || 1;
        lo -= d;
        hi += d;
    } else {
        const m = (hi - lo) * 0.1;
        lo -= m;
        hi += m;
    }
    const ts = timestamps || [];
    const st = step || (ts.length > 1 ? ts[1] - ts[0] : 1);
    const t0 = ts.length ? ts[0] : 0, t1 = ts.length ? ts[ts.length - 1] + st : 1;
    const x = (t) => pad + ((t - t0) / (t1 - t0 || 1)) * (w - 2 * pad);
    const y = (v) => h - pad - ((v - lo) / (hi - lo)) * (h - 2 * pad);
    const runs = lineRuns(values || []).map((run) => run.map((k) => [x(ts[k] + st / 2), y(values[k])]));
    return { runs, x, y, lo, hi, t0, t1 };
}

// What is drawn over a finding's sparkline sp: at (the x of the change time, null for a
// trend) and levels, dashed segments [x0, y0, x1, y1] of the means before and after the
// change (a step; new: after only, gone: before only) or the fitted line (a trend, from
// the middle of the first step to the middle of the last).
export function sparkGuides(f, sp) {
    const out = { at: null, levels: [] };
    const st = (sp.t1 - sp.t0) / Math.max(1, (f.timestamps || []).length);
    const first = sp.x(sp.t0 + st / 2), last = sp.x(sp.t1 - st / 2);
    if (f.kind === "trend") {
        if (finite(f.before) && finite(f.after)) out.levels.push([first, sp.y(f.before), last, sp.y(f.after)]);
        return out;
    }
    if (!finite(f.at)) return out;
    const at = Math.max(sp.x(sp.t0), Math.min(sp.x(sp.t1), sp.x(f.at)));
    out.at = at;
    if (f.kind !== "new" && finite(f.before)) out.levels.push([sp.x(sp.t0), sp.y(f.before), at, sp.y(f.before)]);
    if (f.kind !== "gone" && finite(f.after)) out.levels.push([at, sp.y(f.after), sp.x(sp.t1), sp.y(f.after)]);
    return out;
}

// The number of steps of a finding with a value (for the sparkline's title).
export function stepsWithValues(f) {
    const v = f.values || [];
    let n = 0;
    for (let k = 0; k < v.length; k++) if (hasValue(v, k)) n++;
    return n;
}

// ---- what a finding says ----

export const KIND_TEXT = {
    step: "a shift at one time: a deploy, a configuration or load change",
    trend: "steady growth or decline over the range: a leak, a growing input",
    new: "a function that was not there before",
    gone: "a function that is no longer there",
};

// "before → after" in the finding's unit: "0.12 cores → 0.25 cores"; a new function has
// nothing before it ("none → 0.25 cores"), a gone one nothing after; a trend's are its
// fitted values at the range's ends.
export function beforeAfter(f) {
    const v = (x) => (finite(x) ? formatMetric(x, f.unit) : "none");
    if (f.kind === "new") return `none → ${v(f.after)}`;
    if (f.kind === "gone") return `${v(f.before)} → none`;
    return `${v(f.before)} → ${v(f.after)}`;
}

// The change: {change: "+42.0%", interval: "+35.1% … +48.9%" | "", slope: "+0.0100 cores/h
// (… )" | ""}. A trend's change is its fitted change over the range and its interval is
// the slope's; a new function is "new", a gone one "gone".
export function changeText(f) {
    if (f.kind === "new") return { change: "new", interval: "", slope: "" };
    if (f.kind === "gone") return { change: "gone", interval: "", slope: "" };
    const iv = Array.isArray(f.interval) && f.interval.length === 2 ? f.interval : null;
    if (f.kind === "trend") {
        const pct = finite(f.change_pct) ? f.change_pct
            : finite(f.before) && f.before !== 0 && finite(f.after) ? 100 * (f.after / f.before - 1) : NaN;
        const per = (x) => (x > 0 ? "+" : x < 0 ? "-" : "") + formatMetric(Math.abs(x), f.unit) + "/h";
        const slope = finite(f.slope_per_hour) ? per(f.slope_per_hour) : "";
        return { change: formatChange(pct), interval: iv && slope ? `${per(iv[0])} … ${per(iv[1])}` : "", slope };
    }
    return { change: formatChange(f.change_pct), interval: iv ? formatInterval(iv[0], iv[1]) : "", slope: "" };
}

// The q-value as the diff view writes it.
export const findingQ = (f) => formatQ(f.q);

// ---- where a finding leads ----

// The selector of a finding's group: the state's query with each group label set
// ({service_name="api"}).
export function groupQuery(query, labels) {
    let q = query || "";
    for (const k of Object.keys(labels || {}).sort()) q = withMatcher(q, k, labels[k]);
    return q || "{}";
}

// unix seconds as the URL writes them: whole, or with milliseconds.
const secText = (s) => (Number.isInteger(s) ? String(s) : s.toFixed(3).replace(/\.?0+$/, ""));

// The range [from, until] in unix seconds a finding was found in: the state's range as of
// nowMs, else the finding's own steps. null when neither is known.
export function findingRange(f, state, nowMs = Date.now()) {
    const a = parseTime(state.from, nowMs), b = parseTime(state.until, nowMs);
    if (Number.isFinite(a) && Number.isFinite(b) && b > a) return [a / 1000, b / 1000];
    const ts = f.timestamps || [];
    if (ts.length) {
        const st = ts.length > 1 ? ts[1] - ts[0] : 0;
        return [ts[0], ts[ts.length - 1] + st];
    }
    return null;
}

// The two sides of a finding: {base: [from, until], new: [from, until]} unix s. A step, a
// new or a gone function: before and after its time (base [from, at), new [at, until)); a
// trend (or a time outside the range): the first and the last quarter of the range.
export function findingSides(f, state, nowMs = Date.now()) {
    const r = findingRange(f, state, nowMs);
    if (!r) return null;
    const [a, b] = r;
    if (f.kind !== "trend" && finite(f.at) && f.at > a && f.at < b) return { base: [a, f.at], new: [f.at, b] };
    const q = (b - a) / 4;
    return { base: [a, a + q], new: [b - q, b] };
}

// The state patch that opens the diff view of a finding: its group's selector on both
// sides, the two sides of the change as the ranges (absolute: the change happened at a
// time), the function searched (highlighted in the graph, selected in the table).
export function findingDiffPatch(f, state, nowMs = Date.now()) {
    const s = findingSides(f, state, nowMs);
    if (!s) return null;
    return { view: "diff", query: groupQuery(state.query, f.labels), base_query: "",
             base_from: secText(s.base[0]), base_until: secText(s.base[1]),
             from: secText(s.new[0]), until: secText(s.new[1]), search: exactRegex(f.function),
             sel_from: "", sel_until: "", zoom: "", sandwich: "", focus: "", ignore: "", hide: "" };
}

// The state patch that shows a finding's function over time: explore over the same range,
// on its group, the function pinned beside the others and searched in the flame graph.
export function findingOverTimePatch(f, state) {
    return { view: "explore", query: groupQuery(state.query, f.labels), fn: addFunction(state.fn, f.function),
             search: exactRegex(f.function), sel_from: "", sel_until: "", zoom: "", sandwich: "" };
}
