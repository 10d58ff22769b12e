// timeline-model.mjs - the timeline's numbers: scales, ticks on the value and time axes,
// the bucket under the pointer, brushing, which lines to draw and where they break, and
// where the markers of label value changes (a new version) go and what they say.

import { formatDateTime, unitScale } from "./format.mjs";

// A linear map of [d0, d1] onto [r0, r1] with its inverse.
export function linearScale(d0, d1, r0, r1) {
    const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
    return {
        to: (v) => r0 + (v - d0) * k,
        from: (p) => (k === 0 ? d0 : d0 + (p - r0) / k),
    };
}

// A round step near span/count: 1, 2 or 5 times a power of ten (of the display unit).
export function niceStep(span, count) {
    if (!(span > 0) || !(count > 0)) return 1;
    const raw = span / count;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

// Ticks of a value axis from 0 to at least max, in round numbers of the unit shown
// (1, 2, 5 MiB rather than 1048576 bytes): {ticks: [values], top, scale}.
export function valueTicks(max, unit, count = 4) {
    if (!(max > 0)) max = 1;
    const first = unitScale(unit, max);
    const step = niceStep(max / first.factor, count) * first.factor;
    const top = Math.ceil(max / step - 1e-9) * step;
    const ticks = [];
    for (let k = 0; k * step <= top + step / 2; k++) ticks.push(k * step);
    // the labels' unit from the top tick: 0.5 s, 1 s rather than 500 ms, 1000 ms
    return { ticks, top, scale: unitScale(unit, top) };
}

const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
    21600, 43200, 86400, 172800, 604800];

// Time-axis ticks for [t0, t1] unix seconds on width px: at least minGap px apart, on
// round local times (tzOffsetSec: seconds east of UTC, e.g. -new Date().getTimezoneOffset()*60).
// {interval, ticks: [unix s]}.
export function timeTicks(t0, t1, width, tzOffsetSec = 0, minGap = 80) {
    const span = Math.max(t1 - t0, 1);
    const want = Math.max(1, Math.floor(width / minGap));
    let interval = TIME_STEPS[TIME_STEPS.length - 1];
    for (const s of TIME_STEPS) {
        if (span / s <= want) {
            interval = s;
            break;
        }
    }
    const ticks = [];
    let t = Math.ceil((t0 + tzOffsetSec) / interval) * interval - tzOffsetSec;
    for (; t <= t1; t += interval) ticks.push(t);
    return { interval, ticks };
}

// The index of the bucket holding time t (buckets start at timestamps[i] and last step
// seconds), clamped to the data; -1 with no data.
export function bucketAt(timestamps, step, t) {
    if (!timestamps.length) return -1;
    const i = Math.floor((t - timestamps[0]) / step);
    return Math.max(0, Math.min(timestamps.length - 1, i));
}

// A brushed range from two pixel positions: [from, until] unix seconds in order, clamped to
// the axis [t0, t1], whole seconds; null for a click (less than minPx apart).
export function brushRange(px0, px1, scale, t0, t1, minPx = 4) {
    if (Math.abs(px1 - px0) < minPx) return null;
    let a = scale.from(Math.min(px0, px1)), b = scale.from(Math.max(px0, px1));
    a = Math.max(t0, Math.floor(a));
    b = Math.min(t1, Math.ceil(b));
    return b > a ? [a, b] : null;
}

// At most max lines: the heaviest max-1 series as they are, the rest summed into one line
// labelled {"": "other (N series)"}; each kept line gets its total.
// A step without profiles is null (no value, not zero): it adds nothing, and the other line
// is null where none of its series has a value.
export function limitSeries(series, max = 10) {
    const withSum = series.map((s) => ({
        ...s, sum: s.values.reduce((a, v) => a + (v ?? 0), 0),
    }));
    withSum.sort((a, b) => b.sum - a.sum);
    if (withSum.length <= max) return withSum;
    const keep = withSum.slice(0, max - 1), rest = withSum.slice(max - 1);
    const values = rest[0].values.map((_, k) => rest.reduce((a, s) =>
        (s.values[k] === null || s.values[k] === undefined ? a : (a ?? 0) + s.values[k]), null));
    keep.push({ labels: { "": `other (${rest.length} series)` }, values,
                sum: values.reduce((a, v) => a + (v ?? 0), 0), other: true });
    return keep;
}

// Whether bucket k of a line has a value (null: the step has no profile).
export const hasValue = (values, k) => values[k] !== null && values[k] !== undefined;

// A line's identity across answers (the timeline's and a function's): its labels as text.
export function labelsKey(labels) {
    return Object.keys(labels || {}).sort().map((k) => `${k}=${labels[k]}`).join("\n");
}

// The label text of each line: only the labels whose values differ between lines
// ("env=prod, pod=a"); a single line shows all of its labels.
export function seriesNames(series) {
    const real = series.filter((s) => !s.other);
    const keys = new Set();
    for (const s of real) for (const k of Object.keys(s.labels)) keys.add(k);
    const differ = [...keys].filter((k) =>
        real.some((s) => (s.labels[k] ?? null) !== (real[0].labels[k] ?? null)));
    const show = real.length > 1 ? differ : [...keys];
    return series.map((s) => {
        if (s.other) return s.labels[""];
        const parts = show.filter((k) => k in s.labels).sort().map((k) => `${k}=${s.labels[k]}`);
        return parts.length ? parts.join(", ") : "{}";
    });
}

// The largest value of the lines (0 without data).
export function maxValue(series) {
    let m = 0;
    for (const s of series) for (const v of s.values) if (v > m) m = v;
    return m;
}

// How a line is drawn honestly: a bucket without profiles (null) is no point (a zero is
// one: profiles that hold nothing of it); consecutive points are joined when the gap between them is no longer than
// the series' usual spacing (a scrape every 30 s on 10 s steps leaves two empty buckets
// between its points: the line goes straight over them, it does not fall to zero), and a
// longer gap breaks the line. Returns the runs of point indexes to join: [[k, ...], ...]
// (a run of one is drawn as a dot), with .usual, the usual spacing in buckets (more than
// 1: a sparse series, whose points are marked).
export function lineRuns(values) {
    const pts = [];
    for (let k = 0; k < values.length; k++) if (hasValue(values, k)) pts.push(k);
    if (!pts.length) return Object.assign([], { usual: 1 });
    const gaps = [];
    for (let i = 1; i < pts.length; i++) gaps.push(pts[i] - pts[i - 1]);
    gaps.sort((a, b) => a - b);
    const usual = gaps.length ? gaps[(gaps.length - 1) >> 1] : 1;
    const join = Math.max(1, Math.ceil(usual * 1.5));
    const runs = [[pts[0]]];
    for (let i = 1; i < pts.length; i++) {
        if (pts[i] - pts[i - 1] <= join) runs[runs.length - 1].push(pts[i]);
        else runs.push([pts[i]]);
    }
    runs.usual = usual;
    return runs;
}

// The point of lines nearest to (px, py) within maxPx: {line, k} or null. pointXY(line,
// k) gives a point's position; only buckets with a value are points.
export function nearestPoint(lines, n, pointXY, px, py, maxPx = 8) {
    let best = null, bestD = maxPx * maxPx;
    for (let li = 0; li < lines.length; li++) {
        for (let k = 0; k < n; k++) {
            if (!hasValue(lines[li].values, k)) continue;
            const [x, y] = pointXY(lines[li], k);
            const d = (x - px) * (x - px) + (y - py) * (y - py);
            if (d <= bestD) {
                bestD = d;
                best = { line: lines[li], k };
            }
        }
    }
    return best;
}

// ---- markers: a label's value changing (version v1 -> v2), from /api/v1/markers ----

// The markers ({labels, label, value, at: unix s}) inside [t0, t1] on the x scale, in time
// order: [{x, at, items: [marker, ...]}]. Markers less than minGap px after the previous
// place share its place (several services deployed in the same minute), so that their
// lines and flags do not pile up; the place keeps its first marker's time.
export function placeMarkers(markers, scale, t0, t1, minGap = 6) {
    const inside = (markers || []).filter((m) => m && Number.isFinite(m.at) && m.at >= t0 && m.at <= t1)
        .sort((a, b) => a.at - b.at);
    const out = [];
    for (const m of inside) {
        const x = scale.to(m.at);
        const last = out[out.length - 1];
        if (last && x - last.x < minGap) last.items.push(m);
        else out.push({ x, at: m.at, items: [m] });
    }
    return out;
}

// The place nearest to px within maxPx, or null.
export function markerAt(places, px, maxPx = 5) {
    let best = null;
    for (const p of places) {
        const d = Math.abs(p.x - px);
        if (d <= maxPx && (!best || d < Math.abs(best.x - px))) best = p;
    }
    return best;
}

// Whether markers come from more than one group (then each says its group).
export function markerGroups(markers) {
    const keys = new Set((markers || []).map((m) => groupKey(m.labels)));
    return keys.size;
}

const groupKey = (labels) => Object.keys(labels || {}).sort().map((k) => `${k}=${labels[k]}`).join(", ");

// What a marker says: "version=v2 from 14:05", its group first when withGroup
// ("service_name=api: version=v2 from 14:05"), the date too when withDate ("from
// 2026-11-30 14:05", for ranges longer than a day).
export function markerText(m, { withGroup = false, withDate = false } = {}) {
    const when = formatDateTime(m.at, false);
    const g = withGroup ? groupKey(m.labels) : "";
    return (g ? g + ": " : "") + `${m.label}=${m.value} from ${withDate ? when : when.slice(11)}`;
}
