// callgraph-model.mjs - the call graph view's interaction state, without a browser: pan
// and zoom as a transform (scale, then translate) of the server's SVG, fitting it into
// the box, the function a node stands for and its values, what a click on one does to the
// URL state, the node count choices, and what the server drew of what was asked.

import { addAlternative, exactRegex } from "./selector.mjs";

export const NODECOUNTS = [20, 40, 80, 160, 300, 500];
export const MIN_SCALE = 0.01, MAX_SCALE = 8;

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

// A node's values from its box's text lines, as the server writes them (pprof's label:
// the name's parts, then "flat (share)" and "of cum (share)", or "0 of cum (share)" for a
// function without flat, or only "flat (share)" when cum is the same): {flat, flatShare,
// cum, cumShare}, each a string with its unit ("1.50MB", "20.27%"); null when the lines
// end in no values (a tag box).
export function nodeValues(lines) {
    const L = (lines || []).map((s) => String(s).trim()).filter(Boolean);
    const v = "(-?[0-9][0-9.,]*(?:e[-+]?[0-9]+)?[a-zA-Zµ]*)", p = "\\((-?[0-9.]+(?:e[-+]?[0-9]+)?%)\\)";
    const flatRe = new RegExp(`^${v} ${p}$`), ofRe = new RegExp(`^of ${v} ${p}$`);
    const zeroRe = new RegExp(`^0 of ${v} ${p}$`);
    const last = L[L.length - 1] || "";
    let m;
    if ((m = zeroRe.exec(last))) return { flat: "0", flatShare: "0%", cum: m[1], cumShare: m[2] };
    if ((m = ofRe.exec(last))) {
        const f = flatRe.exec(L[L.length - 2] || "");
        return f ? { flat: f[1], flatShare: f[2], cum: m[1], cumShare: m[2] } : null;
    }
    if (L.length > 1 && (m = flatRe.exec(last))) return { flat: m[1], flatShare: m[2], cum: m[1], cumShare: m[2] };
    return null;
}

// What the server drew of what was asked, from the data attributes of its SVG's root
// element (attr: name -> value or null): null when it has none.
export function drawnInfo(attr) {
    const num = (n) => {
        const v = attr("data-" + n);
        return v == null || v === "" ? NaN : Number(v);
    };
    const nodes = num("nodes");
    if (!(nodes >= 0)) return null;
    return {
        asked: num("nodes-asked"), nodes, total: num("nodes-total"), cut: num("nodes-cut") === 1,
        edges: num("edges"), thinned: num("edges-thinned") || 0, share: num("share"),
        layout: attr("data-layout") || "pprof", seconds: num("seconds"),
        fullSeconds: num("full-seconds"), budget: num("budget-seconds"),
    };
}

const count = (n) => Number(n).toLocaleString("en-US");

// A share of the total as the view writes it: "64.9%", "100%", "0.12%".
export function shareText(share) {
    const p = 100 * share;
    if (!(p >= 0)) return "";
    if (p >= 99.95) return "100%";
    return (p >= 10 ? p.toFixed(1) : p >= 1 ? p.toFixed(2) : p.toPrecision(2)) + "%";
}

// The line beside the node count for what was drawn (drawnInfo): {text, title, more,
// moreTitle}. more, when set, is the label of the action that asks for the whole graph
// asked (the server's fit=0): the budget drew fewer nodes, or left its lightest calls out;
// moreTitle says how long that would take by the server's prediction.
export function drawnSummary(d) {
    const all = d.nodes >= d.total;
    let text = (all ? `all ${count(d.total)} functions` : `${count(d.nodes)} of ${count(d.total)} functions`) +
        (all && d.asked > d.total ? ` (${count(d.asked)} asked)` : "");
    const share = shareText(d.share);
    if (share) text += ` · ${share} of the total`;
    let more = null;
    if (d.cut) {
        text += ` · ${count(d.asked)} asked: more take too long to lay out`;
        more = `Draw all ${count(d.asked)}`;
    } else if (d.thinned > 0) {
        text += ` · ${count(d.thinned)} lightest calls left out to lay out in time`;
        more = "Draw every call";
    }
    // the server's prediction; past its deadline (four budgets) the layout is stopped
    const secs = (v) => v < 10 ? v.toFixed(1) : String(Math.round(v));
    let moreTitle = "";
    if (more) {
        moreTitle = "lay out every node and call asked, past the layout budget";
        if (d.fullSeconds > 0) moreTitle += `: about ${secs(d.fullSeconds)} s`;
        if (d.budget > 0 && d.fullSeconds > 4 * d.budget)
            moreTitle += `, past the server's ${secs(4 * d.budget)} s limit (server.layout_timeout)`;
    }
    const title = d.layout === "large"
        ? "a large graph: straight arrows without labels (their values are in their tooltips), laid out faster"
        : "";
    return { text, title, more, moreTitle };
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
