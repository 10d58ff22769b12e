// callgraph-model.mjs - the call graph view's interaction state, without a browser: pan
// and zoom as a transform (scale, then translate) of the server's SVG, fitting it into
// the box, the function a node stands for, what a click on one does to the URL state,
// and the node count choices.

import { addAlternative, exactRegex } from "./selector.mjs";

export const NODECOUNTS = [20, 40, 80, 160, 300, 500];
export const MIN_SCALE = 0.05, MAX_SCALE = 8;

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// The transform that shows a w x h graph whole and centred in a bw x bh box (never
// enlarged past 1: a small graph stays at its own size).
export function fitTransform(w, h, bw, bh, pad = 12) {
    if (!(w > 0) || !(h > 0)) return { k: 1, x: 0, y: 0 };
    const k = clamp(Math.min((bw - 2 * pad) / w, (bh - 2 * pad) / h, 1), MIN_SCALE, MAX_SCALE);
    return { k, x: (bw - w * k) / 2, y: (bh - h * k) / 2 };
}

// Zooms by factor around the box point (px, py): the graph point under it stays there.
export function zoomAt(t, factor, px, py) {
    const k = clamp(t.k * factor, MIN_SCALE, MAX_SCALE);
    const f = k / t.k;
    return { k, x: px - (px - t.x) * f, y: py - (py - t.y) * f };
}

// Moves by (dx, dy) box pixels.
export function panBy(t, dx, dy) {
    return { k: t.k, x: t.x + dx, y: t.y + dy };
}

// The graph point under box point (px, py).
export function toGraph(t, px, py) {
    return { x: (px - t.x) / t.k, y: (py - t.y) / t.k };
}

// The CSS transform of t.
export function cssTransform(t) {
    return `translate(${t.x}px, ${t.y}px) scale(${t.k})`;
}

// The function a node stands for, from its tooltip ("name (12.5ms)", pprof's): the text
// before the last " (". "" when there is none.
export function nodeName(tooltip) {
    const s = String(tooltip || "");
    const i = s.lastIndexOf(" (");
    return i > 0 && s.endsWith(")") ? s.slice(0, i) : "";
}

// The URL state patch of a click on a node: focus on its function (added to a focus
// already set, as pprof's focus takes alternatives); shift-click ignores it instead.
export function clickPatch(state, name, how = "focus") {
    const kind = how === "ignore" ? "ignore" : how === "hide" ? "hide" : "focus";
    return { [kind]: addAlternative(state[kind], exactRegex(name)) };
}

// "Showing top 80 nodes out of 1357" from the legend: {shown, total}, or null.
export function legendCounts(text) {
    const m = /Showing top (\d+) nodes out of (\d+)/.exec(String(text || ""));
    return m ? { shown: +m[1], total: +m[2] } : null;
}

// The node count choices for a state's value ("" = the server's 80): the list with the
// current value in it.
export function nodecountChoices(current) {
    const cur = +current || 80;
    return NODECOUNTS.includes(cur) ? NODECOUNTS : [...NODECOUNTS, cur].sort((a, b) => a - b);
}
