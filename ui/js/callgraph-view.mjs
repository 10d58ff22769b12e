// callgraph-view.mjs - the call graph view (view=callgraph): the server's Graphviz SVG
// (GET /api/v1/callgraph, pprof's graph) with pan (drag) and zoom (wheel, buttons), the
// node count with what the server drew of it (how much of the profile, and a button for
// the whole graph asked when the layout budget drew less), tooltips with a node's values,
// and a click on a node to focus on its function (the explore filters apply: focus,
// ignore, hide, shown as chips).

import { apiUrl } from "./api.mjs";
import { h, hideTooltip, replace, showMenu, showTooltip } from "./dom.mjs";
import {
    clickPatch, cssTransform, drawnInfo, drawnSummary, fitTransform, legendCounts, nodeName,
    nodeValues, nodecountChoices, panBy, zoomAt,
} from "./callgraph-model.mjs";
import { createLoader, message } from "./loader.mjs";
import { renderFilters } from "./profile-area.mjs";
import { changed } from "./state.mjs";

const KEYS = ["query", "type", "from", "until", "sel_from", "sel_until", "focus", "ignore",
    "hide", "nodecount"];

export function createCallgraphView(root, ctx) {
    const { store, api } = ctx;
    let state = null, svg = null, t = { k: 1, x: 0, y: 0 }, size = { w: 0, h: 0 };
    let whole = false; // the whole graph asked, past the layout budget (fit=0), until the query changes
    const count = h("select", { "aria-label": "nodes", dataset: { testid: "nodecount" },
                                title: "how many functions the graph keeps (pprof's nodecount)",
                                onchange: () => store.set({ nodecount: count.value === "80" ? "" : count.value }) });
    const shown = h("span", { class: "hint cg-shown", dataset: { testid: "callgraph-shown" } });
    const btn = (label, title, f) => h("button", { type: "button", class: "small", title, onclick: f }, label);
    const filters = h("div", { class: "filters", hidden: true });
    const stage = h("div", { class: "cg-stage" });
    const box = h("div", { class: "cg-box", dataset: { testid: "callgraph" } }, stage);
    const msg = h("div", { class: "panel-msg", hidden: true });
    const panel = h("section", { class: "panel callgraph-panel" },
        h("div", { class: "panel-head" }, h("h2", null, "Call graph"), count, shown,
            btn("Fit", "show the whole graph", () => fit()),
            btn("+", "zoom in", () => zoomBy(1.25)), btn("−", "zoom out", () => zoomBy(0.8)),
            h("a", { class: "button small", dataset: { testid: "callgraph-svg" }, download: "callgraph.svg",
                     title: "the SVG as drawn" }, "SVG"),
            h("span", { class: "hint" }, "drag to pan, wheel to zoom, click a function to focus on it, right-click for more")),
        filters, box, msg);
    const view = h("div", { class: "view callgraph" }, panel);
    root.append(view);

    const apply = () => { stage.style.transform = cssTransform(t); };
    function fit() {
        t = fitTransform(size.w, size.h, box.clientWidth, box.clientHeight);
        apply();
    }
    function zoomBy(f) {
        t = zoomAt(t, f, box.clientWidth / 2, box.clientHeight / 2);
        apply();
    }

    // pan by dragging; a click without moving is a click on what is under it
    let drag = null;
    box.addEventListener("mousedown", (e) => {
        if (e.button !== 0) return;
        drag = { x: e.clientX, y: e.clientY, moved: false };
        e.preventDefault();
    });
    window.addEventListener("mousemove", onDrag);
    window.addEventListener("mouseup", onUp);
    function onDrag(e) {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        drag.moved = true;
        t = panBy(t, dx, dy);
        drag.x = e.clientX;
        drag.y = e.clientY;
        apply();
    }
    function onUp(e) {
        const d = drag;
        drag = null;
        if (!d || d.moved) return;
        const name = nodeAt(e.target);
        if (name) store.set(clickPatch(state, name, e.shiftKey ? "ignore" : "focus"));
    }
    box.addEventListener("wheel", (e) => {
        e.preventDefault();
        const r = box.getBoundingClientRect();
        t = zoomAt(t, Math.exp(-e.deltaY / 500), e.clientX - r.left, e.clientY - r.top);
        apply();
    }, { passive: false });
    box.addEventListener("contextmenu", (e) => {
        const name = nodeAt(e.target);
        if (!name) return;
        e.preventDefault();
        showMenu([
            { label: "Focus on this function", action: () => store.set(clickPatch(state, name, "focus")) },
            { label: "Ignore stacks with it", action: () => store.set(clickPatch(state, name, "ignore")) },
            { label: "Hide this frame", action: () => store.set(clickPatch(state, name, "hide")) },
            "-",
            { label: "Show source", action: () => store.set({ view: "source", function: name }) },
            { label: "Flame graph", action: () => store.set({ view: "explore", search: "^" +
                name.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&") + "$" }) },
        ], e.clientX, e.clientY);
    });
    box.addEventListener("mouseover", (e) => {
        const g = e.target.closest && e.target.closest("g.node");
        const edge = !g && e.target.closest && e.target.closest("g.edge");
        const tip = edge ? linkTitle(edge) : "";
        const name = g ? nodeAt(e.target) : "";
        if (name) showTooltip(nodeTip(g, name), e.clientX, e.clientY);
        else if (tip) showTooltip(h("div", { class: "tip-title" }, tip), e.clientX, e.clientY);
        else hideTooltip();
    });
    box.addEventListener("mouseleave", () => hideTooltip());

    // The tooltip graphviz puts on a node's or an edge's link (xlink:title / title).
    function linkTitle(g) {
        const a = g.querySelector("a");
        return a ? a.getAttribute("xlink:title") || a.getAttribute("title") ||
            a.getAttributeNS("http://www.w3.org/1999/xlink", "title") || "" : "";
    }

    // The function of the node an event target is in (pprof's tooltip: "name (cum)").
    function nodeAt(target) {
        const g = target && target.closest && target.closest("g.node");
        return g ? nodeName(linkTitle(g)) : "";
    }

    // A node's tooltip: its function and its values as its box shows them.
    function nodeTip(g, name) {
        const v = nodeValues([...g.querySelectorAll("text")].map((el) => el.textContent));
        const row = (label, value, share) => h("tr", null, h("th", null, label), h("td", null, value),
            h("td", null, share));
        return h("div", { class: "fg-tip cg-tip" }, h("div", { class: "tip-title" }, name),
            v ? h("table", null,
                h("tr", null, h("th"), h("th", null, "value"), h("th", null, "of total")),
                row("Self (flat)", v.flat, v.flatShare), row("Total (cum)", v.cum, v.cumShare)) : null,
            h("div", { class: "tip-hint" }, "click: focus on it · shift-click: ignore it"));
    }

    function params(st, all = whole) {
        const sel = st.sel_from && st.sel_until;
        return { query: st.query, type: st.type, from: sel ? st.sel_from : st.from,
                 until: sel ? st.sel_until : st.until, focus: st.focus, ignore: st.ignore,
                 hide: st.hide, nodecount: st.nodecount || "", fit: all ? "0" : "" };
    }

    // What was drawn of what was asked, beside the node count (the server's data attributes;
    // the legend's counts from a server without them).
    function summary(el, st, nodes) {
        const d = drawnInfo((n) => el.getAttribute(n));
        box.dataset.drawn = d ? String(d.nodes) : "";
        if (!d) {
            const legend = legendCounts(el.textContent);
            replace(shown, legend ? `${legend.shown} of ${legend.total} functions` +
                (st.nodecount && legend.shown < +st.nodecount ? " (fewer than asked: larger graphs take too long to lay out)" : "")
                : `${nodes} functions`);
            return;
        }
        const s = drawnSummary(d);
        shown.title = s.title;
        replace(shown, s.text, s.more ? [" ", h("button", {
            type: "button", class: "small", dataset: { testid: "callgraph-all" }, title: s.moreTitle,
            onclick: () => {
                whole = true;
                updateLink(st);
                load(st);
            } }, s.more)] : null);
    }

    function updateLink(st) {
        panel.querySelector('[data-testid="callgraph-svg"]').href = apiUrl("api/v1/callgraph", params(st));
    }

    const loader = createLoader({ name: "callgraph", busy: panel, stamp: box, messages: [msg],
                                  loadingText: "Laying out the graph…", queryErrors: ctx.onQueryError });

    function load(st) {
        loader.run((signal) => api.text("api/v1/callgraph", params(st), { signal }), (text) => {
            const doc = new DOMParser().parseFromString(text, "image/svg+xml");
            const el = doc.documentElement;
            if (!el || el.nodeName !== "svg") throw new Error("the server's SVG does not parse");
            // graphviz sizes in pt with a viewBox; draw at the viewBox's size in px
            const vb = (el.getAttribute("viewBox") || "").split(/\s+/).map(Number);
            size = vb.length === 4 && vb[2] > 0 ? { w: vb[2], h: vb[3] }
                : { w: parseFloat(el.getAttribute("width")) || 800, h: parseFloat(el.getAttribute("height")) || 600 };
            el.setAttribute("width", size.w);
            el.setAttribute("height", size.h);
            svg = document.importNode(el, true);
            replace(stage, svg);
            const nodes = svg.querySelectorAll("g.node").length;
            box.dataset.nodes = String(Math.max(0, nodes));
            summary(svg, st, nodes);
            fit();
            const empty = !nodes;
            message(msg, empty ? "empty" : null, empty ? [h("b", null, "No samples for this query in this time range.")] : null);
            return { state: empty ? "empty" : "ready", detail: { nodes } };
        }, {
            fail: () => {
                replace(stage);
            },
        });
    }

    function update(st, prev, how) {
        state = st;
        replace(count, nodecountChoices(st.nodecount).map((n) => h("option", { value: String(n) }, n + " nodes")));
        count.value = String(+st.nodecount || 80);
        renderFilters(filters, st, store);
        const again = how === "refresh" || !prev || changed(prev, st, KEYS);
        if (again && how !== "refresh") whole = false; // a new query starts within the budget
        updateLink(st);
        if (!st.type) {
            message(msg, "empty", [h("b", null, "No profiles stored yet.")]);
            return;
        }
        if (again) load(st);
    }

    return {
        update,
        element: view,
        transform: () => t,
        destroy() {
            loader.abort();
            window.removeEventListener("mousemove", onDrag);
            window.removeEventListener("mouseup", onUp);
            hideTooltip();
            view.remove();
        },
    };
}
