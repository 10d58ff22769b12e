// diff-model.mjs - the numbers of the diff view (view=diff): the diff flame graph laid out
// by one side's values, its colours by change and significance, the default-normalise
// rule, the diff table's rows and order, and the state patches that open the view (compare
// with the previous period, two brushed ranges, two values of a label) or swap its sides.

import { functionColor, hslHex } from "./colors.mjs";
import { modelFromLevels } from "./flame-model.mjs";
import { formatDateTime, formatDuration } from "./format.mjs";
import { parseMatchers, withMatcher } from "./selector.mjs";
import { addFunction, baseOf } from "./state.mjs";
import { isRelative, parseTime } from "./timespec.mjs";

// ---- normalisation ----

// The two totals differ by more than this share of the base: normalise by default.
export const AUTO_NORMALIZE_ABOVE = 0.1;

// The base side's total before normalisation: a normalised document scaled it to the new
// total (base_scale = new total / base total).
export function rawBaseTotal(doc) {
    if (!doc) return 0;
    return doc.normalized && doc.base_scale > 0 ? doc.total / doc.base_scale : doc.base_total;
}

// The default of normalize: on when the two totals differ by more than 10% of the base
// (|new / base - 1| > 0.1), so that two ranges of different lengths or loads compare
// shares, and off when they are about equal (amounts compare as they are). Off when a side
// is empty: there is nothing to scale.
export function autoNormalize(baseTotal, total) {
    if (!(baseTotal > 0) || !(total > 0)) return false;
    return Math.abs(total - baseTotal) > AUTO_NORMALIZE_ABOVE * baseTotal;
}

// Whether a state's diff is normalised: its normalize parameter, or the rule on the totals
// (auto: true/false from autoNormalize; null while unknown).
export function normalizeOf(state, auto) {
    if (state.normalize === "1") return true;
    if (state.normalize === "0") return false;
    return auto;
}

// ---- the API ----

// The base side a state compares with: {query, from, until, before}. base_query defaults
// to the new side's selector and the base range to the new side's, except that the same
// selector over the same range says nothing: without a base range and another selector,
// the base is the period just before the new side's (before: true), as the API's default.
export function diffBase(state, nowMs = Date.now()) {
    const b = baseOf(state);
    if (state.base_from || state.base_until || (state.base_query && state.base_query !== state.query))
        return { ...b, before: false };
    const r = earlierRange(state.from, state.until, nowMs);
    return r ? { query: b.query, from: r.from, until: r.until, before: true } : { ...b, before: false };
}

// Whether a state asks for the plain diff: red and blue by the change, no test.
export const isPlain = (state) => state.diffmode === "plain";

// Parameters of /api/v1/diff for a state: format "flame" or "json". The base range is
// always sent (diffBase), so the links and exports say what was compared; the plain diff
// asks for no statistics.
export function diffParams(state, format, normalize, nowMs = Date.now()) {
    const b = diffBase(state, nowMs);
    const p = {
        type: state.type, query: state.query, from: state.from, until: state.until,
        base_query: state.base_query, base_from: b.from, base_until: b.until,
        focus: state.focus, ignore: state.ignore, hide: state.hide, q: state.q,
        normalize: normalize ? 1 : 0, format,
    };
    if (isPlain(state) && format !== "folded") p.stats = 0;
    if (format === "flame") p.maxNodes = state.maxNodes;
    return p;
}

// ---- the diff flame graph ----

// A flame model of a diff model (flame-model.mjs modelFromJSON of a diff document) whose
// frames are as wide as one side's values: widths "new" (the default: the new side's
// totals, as a differential flame graph draws the profile after the change), "base" (the
// base side's: frames that vanished keep their old size) or "both" (the document's own
// layout: new + base, every frame of either side visible). Frames without a value on the
// chosen side are left out (zero wide); their count and value are returned as `hidden`
// and `hiddenValue` (the other side's value of the outermost ones). The model keeps per
// node the values of both sides (value, newSelf, baseTotal, baseSelf), the change, newRoot
// and baseRoot, and `src` (the node's id in d). span: the value the full width stands for
// (see zoomView): the larger root when the sides are drawn to one scale (not normalised),
// so the smaller side is narrower; else the root.
export function layoutDiff(d, widths = "new", { oneScale = false } = {}) {
    const width = widths === "base" ? (i) => d.baseTotal[i]
        : widths === "both" ? (i) => d.value[i] + d.baseTotal[i] : (i) => d.value[i];
    const other = widths === "base" ? (i) => d.value[i] : (i) => d.baseTotal[i];
    const levels = [], src = [];
    let hidden = 0, hiddenValue = 0;
    // the kept nodes of a level: ids in d and their x, parallel
    let ids = d.n && width(0) > 0 ? [0] : [], xs = [0];
    while (ids.length) {
        const l = new Array(ids.length * 4), nids = [], nxs = [];
        for (let k = 0; k < ids.length; k++) {
            const i = ids[k], x = xs[k], w = width(i);
            let cx = x;
            const c0 = d.firstChild[i];
            for (let c = c0; c >= 0 && c < c0 + d.childCount[i]; c++) {
                const cw = width(c);
                if (cw > 0) {
                    nids.push(c);
                    nxs.push(cx);
                    cx += cw;
                } else if (other(c) > 0) {
                    hidden++;
                    hiddenValue += other(c);
                }
            }
            l[4 * k] = x;
            l[4 * k + 1] = w;
            l[4 * k + 2] = w - (cx - x);
            l[4 * k + 3] = d.name[i];
            src.push(i);
        }
        levels.push(l);
        ids = nids;
        xs = nxs;
    }
    const m = modelFromLevels(d.names, levels, 4);
    const n = m.n, pick = (a) => {
        const out = new Float64Array(n);
        for (let k = 0; k < n; k++) out[k] = a[src[k]];
        return out;
    };
    m.src = Int32Array.from(src);
    m.value = pick(d.value);
    m.newSelf = pick(d.newSelf);
    m.baseTotal = pick(d.baseTotal);
    m.baseSelf = pick(d.baseSelf);
    m.change = Int8Array.from(src, (i) => (d.change ? d.change[i] : 0));
    m.newRoot = d.n ? d.value[0] : 0;
    m.baseRoot = d.n ? d.baseTotal[0] : 0;
    m.unit = d.unit;
    m.sampleType = d.sampleType;
    m.widths = widths;
    m.span = oneScale && widths !== "both" ? Math.max(m.newRoot, m.baseRoot) : m.rootTotal;
    m.hidden = hidden;
    m.hiddenValue = hiddenValue;
    return m;
}

// ---- colours ----

export const NEUTRAL_COLOR = "#d2d2d2"; // a change within noise, not tested, or none
export const DIFF_DIM_COLOR = "#f1f1f1"; // frames a search does not match (lighter than neutral)
// A call path only one side has (the server's change 2 and -2): news whatever the spread,
// in colours of their own, neither the growth's red nor the shrinkage's blue.
export const NEW_COLOR = "#b36ae2"; // only on the new side
export const GONE_COLOR = "#4fb6a8"; // only on the base side

// How far a value moved, 0..1 for the colour's intensity: |ln(new / base)| against a
// fourfold change (x4 or /4 and beyond are the strongest colour); a frame that appeared
// or vanished is 1.
export function changeIntensity(base, now) {
    if (!(base > 0) || !(now > 0)) return base > 0 || now > 0 ? 1 : 0;
    return Math.min(1, Math.abs(Math.log(now / base)) / Math.log(4));
}

// The colour of a diff node: neutral grey unless the server marked its change significant
// (change 1: grew, -1: shrank; the server marks a node when its function's change is
// significant and the node's share moved the same way); then red for growth, blue for
// shrinkage, from pale (a small relative change) to strong (four times or a quarter, or
// more). base and now are the node's two values, or its two shares: only their ratio counts.
export function diffColor(change, base, now) {
    if (change === 2) return NEW_COLOR;
    if (change === -2) return GONE_COLOR;
    if (change !== 1 && change !== -1) return NEUTRAL_COLOR;
    return shadeColor(change, shadeOf(base, now));
}

// A node's change in the plain diff (no test): 2 / -2 for a path one side lacks, else the
// direction its value moved (its share when normalised: the base is scaled already), 0
// when equal. base and now: the node's two values as drawn.
export function plainChange(base, now) {
    if (!(base > 0) && now > 0) return 2;
    if (base > 0 && !(now > 0)) return -2;
    return now > base ? 1 : now < base ? -1 : 0;
}

// 64 shades a direction: the intensity rounded to 0..63.
const shadeOf = (base, now) => Math.round(63 * changeIntensity(base, now));

// Red (dir 1) or blue (-1) in shade 0..63: lightness 80% .. 56% (the darkest still carries
// the dark label text); the palest is still clearly not grey.
function shadeColor(dir, shade) {
    const t = 0.2 + (0.8 * shade) / 63;
    return dir > 0 ? hslHex(4, 78, 84 - 28 * t) : hslHex(214, 72, 84 - 28 * t);
}

// The colour of node id of a model from layoutDiff, by the ratio of its two values as the
// graph draws them: normalised, the base is scaled to the new total and the ratio is the
// share's; not normalised, the amount's.
// Computed once per model (a draw asks for every visible node's colour), from 64 shades a
// direction.
// m.plain: the plain diff's colours (plainChange), no test; m.oneSided (a side without
// profiles): the function's own colour, as a plain flame graph of the other side.
export function nodeDiffColor(m, id) {
    if (m.oneSided) return functionColor(m.names[m.name[id]]);
    if (!m.diffColors) {
        const shades = new Map();
        m.diffColors = new Array(m.n);
        for (let i = 0; i < m.n; i++) {
            const c = m.plain ? plainChange(m.baseTotal[i], m.value[i]) : m.change[i];
            if (c !== 1 && c !== -1) {
                m.diffColors[i] = c === 2 ? NEW_COLOR : c === -2 ? GONE_COLOR : NEUTRAL_COLOR;
                continue;
            }
            const k = c * (1 + shadeOf(m.baseTotal[i], m.value[i]));
            let col = shades.get(k);
            if (!col) shades.set(k, (col = shadeColor(c, Math.abs(k) - 1)));
            m.diffColors[i] = col;
        }
    }
    return m.diffColors[id];
}

// The node's share on each side, the relative change of its share and of its value
// (percent; Infinity: new on the new side).
export function nodeShares(m, id) {
    const base = m.baseRoot > 0 ? m.baseTotal[id] / m.baseRoot : 0;
    const now = m.newRoot > 0 ? m.value[id] / m.newRoot : 0;
    const rel = (a, b) => (a > 0 ? (b / a - 1) * 100 : b > 0 ? Infinity : 0);
    return { base, new: now, rel: rel(base, now), valueRel: rel(m.baseTotal[id], m.value[id]) };
}

// What the frames the model leaves out are: {count, share} of the other side's total,
// for the note above the graph; null when nothing is hidden.
export function hiddenFrames(m) {
    if (!m || !m.hidden) return null;
    const of = m.widths === "base" ? m.newRoot : m.baseRoot;
    return { count: m.hidden, share: of > 0 ? m.hiddenValue / of : 0 };
}

// ---- the table ----

// The measure a row shows: the one with the smaller q-value, as scorch compare picks it
// among significant ones (src/query/compare_report.c sc_compare_pick: total when its q is
// the smaller, so self on a tie); a significant measure always has the smaller q. Untested
// rows show self when the function has any, else total. "flat" (self) or "cum" (total).
export function pickMeasure(row) {
    const f = row.flat_q ?? Infinity, c = row.cum_q ?? Infinity;
    if (f !== c) return c < f ? "cum" : "flat";
    if (f !== Infinity) return "flat";
    return row.flat || row.base_flat ? "flat" : "cum";
}

// The rows of a format=json diff answer for the table: per function the measure shown,
// base and new values and shares, the change with its interval, the q-value, whether it
// is significant and which way. Ordered as scorch compare lists them: significant first,
// then the other tested ones, then those not tested; within each by the size of the
// change of the measure's mean (|new mean - base mean|, in the metric: shares or rates),
// untested ones by the change of their share; ties by name.
//
// Each row's baseMean and newMean are the tested quantity (the means over the replicates,
// in doc.metric_unit: cores, bytes per second, shares...) when the answer has statistics:
// what the table shows, so a verdict never sits beside numbers it did not test; base and
// new are the plain sums. status: the API's (new, gone, grew, shrank, noise, untested).
export function diffRows(doc, level = doc && doc.q > 0 ? doc.q : 0.05) {
    if (!doc || !Array.isArray(doc.rows)) return [];
    const bt = doc.base_total, nt = doc.total;
    const num = (v) => (v === null || v === undefined ? null : v);
    const rows = doc.rows.map((r) => {
        const m = pickMeasure(r);
        const cum = m === "cum";
        const base = cum ? r.base_cum : r.base_flat, now = cum ? r.cum : r.flat;
        const q = cum ? r.cum_q : r.flat_q;
        const bm = cum ? r.base_cum_mean : r.base_mean, nm = cum ? r.cum_mean : r.mean;
        const tested = q !== null && q !== undefined;
        const baseShare = bt ? base / bt : 0, newShare = nt ? now / nt : 0;
        const sig = !!r.significant && tested && q < level;
        const status = r.status || (sig ? (r.direction > 0 ? "grew" : "shrank") : tested ? "noise" : "untested");
        const news = status === "new" || status === "gone";
        const means = !!doc.metric_unit && num(bm) !== null && num(nm) !== null;
        return {
            name: r.function, measure: cum ? "total" : "self", base, new: now, baseShare, newShare,
            baseMean: means ? bm : null, newMean: means ? nm : null, unit: means ? doc.metric_unit : null, status,
            pct: pctOf(cum ? r.cum_delta_pct : r.delta_pct, base, now),
            lo: cum ? r.cum_delta_pct_lo : r.delta_pct_lo,
            hi: cum ? r.cum_delta_pct_hi : r.delta_pct_hi,
            q: tested ? q : null, tested, significant: sig,
            direction: sig ? (r.direction || Math.sign(now - base)) : 0,
            group: sig || news ? 0 : tested ? 1 : 2,
            size: tested && Number.isFinite(nm - bm) ? Math.abs(nm - bm) : Math.abs(newShare - baseShare),
        };
    });
    rows.sort((a, b) => a.group - b.group || b.size - a.size ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return rows;
}

// The API's relative change (null for a function new on one side: +Infinity, or gone).
function pctOf(pct, base, now) {
    if (pct !== null && pct !== undefined) return pct;
    if (!base && now) return Infinity;
    return null;
}

// The rows by function name (for the flame graph's tooltip: the function's test).
export function rowsByName(doc) {
    const out = new Map();
    for (const r of (doc && doc.rows) || []) out.set(r.function, r);
    return out;
}

// A relative change for people: "+12.3%", "-4.0%", "new", "gone", "–".
export function formatChange(pct) {
    if (pct === Infinity) return "new";
    if (pct === null || pct === undefined || Number.isNaN(pct)) return "–";
    if (pct <= -100) return "gone";
    const a = Math.abs(pct);
    return (pct < 0 ? "-" : "+") + (a >= 1000 ? a.toFixed(0) : a.toFixed(1)) + "%";
}

// A 95% interval: "+28.8% … +106.4%", "–" when there is none.
export function formatInterval(lo, hi) {
    if (lo === null || lo === undefined || hi === null || hi === undefined) return "–";
    return formatChange(lo) + " … " + formatChange(hi);
}

// A q-value as scorch compare writes it: "<0.0001", "0.0147", "–" when not tested.
export function formatQ(q) {
    if (q === null || q === undefined) return "–";
    return q < 0.0001 ? "<0.0001" : q.toFixed(4);
}

// What the metric of the statistics is, in words (as scorch compare says it).
export const METRIC_TEXT = {
    share: "share of each replicate's total",
    per_second: "value per second of the time the profiles cover",
    per_profile: "value per profile (their durations are unknown)",
    average: "average value (a gauge)",
};

// ---- the view's sides ----

// A side's range for people: "2026-11-30 12:00:03 – 12:10:03 (10m)", with milliseconds
// when the URL has them, "now-1h – now (1h)" for relative ones.
export function rangeText(from, until, nowMs = Date.now()) {
    const a = parseTime(from, nowMs), b = parseTime(until, nowMs);
    const len = b - a;
    const dur = len > 0 ? (len < 10000 && len % 1000 ? Math.round(len) + " ms" : formatDuration(len / 1000)) : "";
    if (isRelative(from) && isRelative(until)) return `${from} – ${until}` + (dur ? ` (${dur})` : "");
    const t = (ms, s) => {
        const text = formatDateTime(Math.floor(ms / 1000));
        return /\.\d/.test(s) ? text + "." + String(Math.round(ms) % 1000).padStart(3, "0") : text;
    };
    if (Number.isNaN(a) || Number.isNaN(b)) return `${from} – ${until}`;
    const ta = t(a, from), tb = t(b, until);
    const sameDay = ta.slice(0, 10) === tb.slice(0, 10);
    return `${ta} – ${sameDay ? tb.slice(11) : tb}` + (dur ? ` (${dur})` : "");
}

// A duration in ms as the shortest "now-" text: 3600000 -> "1h", 5400000 -> "1h30m".
function durationText(ms) {
    let s = Math.round(ms / 1000);
    if (s <= 0) return "0s";
    const parts = [];
    for (const [u, k] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
        if (s >= k) {
            parts.push(Math.floor(s / k) + u);
            s %= k;
        }
    }
    return parts.join("");
}

// A range moved back by shiftMs (default: its own length, the period before it):
// relative ranges stay relative ("now-1h".."now" -> "now-2h".."now-1h"), others become
// unix seconds. null when a time does not parse.
export function earlierRange(from, until, nowMs, shiftMs) {
    const a = parseTime(from, nowMs), b = parseTime(until, nowMs);
    if (Number.isNaN(a) || Number.isNaN(b) || b <= a) return null;
    const sh = shiftMs ?? b - a;
    if (isRelative(from) && isRelative(until)) {
        const rel = (t) => (nowMs - t <= 0 ? "now" : "now-" + durationText(nowMs - t));
        return { from: rel(a - sh), until: rel(b - sh) };
    }
    const sec = (t) => {
        const v = (t - sh) / 1000;
        return Number.isInteger(v) ? String(v) : v.toFixed(3);
    };
    return { from: sec(a), until: sec(b) };
}

// The patch that opens the diff view from explore's "Compare with...": what explore
// shows (its query, the timeline's selection or the range) is the new side; the base is
// the same query over the period just before, for the user to change.
export function compareWithPatch(state, nowMs = Date.now()) {
    const sel = state.sel_from && state.sel_until;
    const from = sel ? state.sel_from : state.from, until = sel ? state.sel_until : state.until;
    const before = earlierRange(from, until, nowMs) || { from: "", until: "" };
    return { view: "diff", from, until, base_query: "", base_from: before.from,
             base_until: before.until, sel_from: "", sel_until: "", zoom: "", sandwich: "",
             search: "" };
}

// The patch of the diff view of two ranges brushed on explore's timeline: [from, until]
// unix seconds each, the first brushed is the base (as on the heatmap).
export function rangesPatch(baseRange, newRange) {
    return { view: "diff", base_query: "", base_from: String(baseRange[0]),
             base_until: String(baseRange[1]), from: String(newRange[0]),
             until: String(newRange[1]), sel_from: "", sel_until: "", zoom: "", sandwich: "",
             search: "" };
}

// The patch that compares two values of a label over the same range (load levels:
// {service_name="api", load="low"} against load="high"): the selector with the label's
// matcher set to each value. range: the base's {from, until} ("" = the new side's).
export function labelSidesPatch(query, label, baseValue, newValue, range = null) {
    return { view: "diff", base_query: withMatcher(query, label, baseValue),
             query: withMatcher(query, label, newValue),
             base_from: range ? range.from : "", base_until: range ? range.until : "",
             zoom: "", sandwich: "", search: "" };
}

// The label two selectors differ in, when they differ in exactly one label's `=` value
// and are equal otherwise: {label, base, new}; else null.
export function labelOfSides(baseQuery, query) {
    const a = parseMatchers(baseQuery), b = parseMatchers(query);
    if (!a || !b || a.length !== b.length) return null;
    let found = null;
    for (const m of b) {
        const o = a.find((x) => x.name === m.name);
        if (!o) return null;
        if (o.op === m.op && o.value === m.value) continue;
        if (found || o.op !== "=" || m.op !== "=") return null;
        found = { label: m.name, base: o.value, new: m.value };
    }
    return found;
}

// The distinct values of a label among series ({labels} as /api/v1/series lists them),
// sorted; series without it are left out.
export function labelValues(series, label) {
    const vs = new Set();
    for (const s of series || []) {
        const v = s.labels && s.labels[label];
        if (v !== undefined && v !== "") vs.add(v);
    }
    return [...vs].sort();
}

// The two values a one-click compare of a grouped timeline takes: of the two heaviest
// lines, the lighter one is the base and the heavier the new side (low load against high
// load; a smaller deployment against a larger one). lines: {labels, sum} as the timeline
// draws them. null with fewer than two values.
export function defaultLabelPair(lines, label) {
    const real = (lines || []).filter((l) => !l.other && l.labels && l.labels[label] !== undefined &&
        l.labels[label] !== "");
    const sorted = real.slice().sort((a, b) => b.sum - a.sum);
    if (sorted.length < 2) return null;
    return { base: sorted[1].labels[label], new: sorted[0].labels[label] };
}

// The patch that shows a function over time from the diff view: explore with the new
// side's selector over both sides' ranges (from the earlier start to the later end), the
// function pinned.
export function diffOverTimePatch(state, name, nowMs = Date.now()) {
    const b = diffBase(state, nowMs);
    const t = (s) => parseTime(s, nowMs);
    const from = t(b.from) < t(state.from) ? b.from : state.from;
    const until = t(b.until) > t(state.until) ? b.until : state.until;
    return { view: "explore", from, until, fn: addFunction(state.fn, name), base_query: "", base_from: "",
             base_until: "", sel_from: "", sel_until: "", zoom: "", sandwich: "" };
}

// The patch that swaps the two sides (new becomes base); base parameters equal to the new
// side's are left empty, as the URL's defaults say.
export function swapPatch(state) {
    const b = diffBase(state);
    const keep = (v, dflt) => (v === dflt ? "" : v);
    return {
        query: b.query, from: b.from, until: b.until,
        base_query: keep(state.query, b.query), base_from: keep(state.from, b.from),
        base_until: keep(state.until, b.until), zoom: "", sandwich: "",
    };
}
