// heatmap-view.mjs - the heatmap view (view=heatmap): FlameScope's sub-second heatmap of
// the query's timestamped samples (GET /api/v1/heatmap), a selection of cells as
// sel_from/sel_until with the flame graph and top table of that span below, and a second
// selection (shift-drag) to compare with in the diff view.

import { flameParams, overTimePatch, renderParams, sourcePatch } from "./api.mjs";
import { h, replace } from "./dom.mjs";
import { formatDateTime } from "./format.mjs";
import { Heatmap } from "./heatmap.mjs";
import { comparePatch, compareSearch, msToSeconds, secondsToMs, zoomPatch } from "./heatmap-model.mjs";
import { createLoader, message } from "./loader.mjs";
import { createProfileArea } from "./profile-area.mjs";
import { changed } from "./state.mjs";

const MAP_KEYS = ["query", "type", "from", "until", "rows"];
const PROFILE_KEYS = ["query", "type", "sel_from", "sel_until", "focus", "ignore", "hide",
    "maxNodes"];
// A comparison's base side means nothing here: left over from the diff view, it goes.
const NO_BASE = { base_query: "", base_from: "", base_until: "" };

// A span [fromMs, untilMs) as text: "12:00:03.240 – 12:00:03.460 (220 ms)".
export function spanText(sp) {
    const t = (ms) => formatDateTime(Math.floor(ms / 1000)).slice(11) + "." +
        String(((ms % 1000) + 1000) % 1000).padStart(3, "0");
    const d = sp[1] - sp[0];
    return `${t(sp[0])} – ${t(sp[1])} (${d < 10000 ? d + " ms" : (d / 1000).toFixed(1) + " s"})`;
}

export function createHeatmapView(root, ctx) {
    const { store, api } = ctx;
    let state = null, second = null;
    const rowsSel = h("select", { "aria-label": "rows", title: "slices per second",
                                  onchange: () => store.set({ rows: rowsSel.value === "50" ? "" : rowsSel.value }) },
        [["25", "40 ms rows"], ["50", "20 ms rows"], ["100", "10 ms rows"], ["200", "5 ms rows"]]
            .map(([v, t]) => h("option", { value: v }, t)));
    const orient = h("button", { type: "button", class: "small", dataset: { testid: "heatmap-row0" },
                                 title: "where the start of each second is drawn",
                                 onclick: () => store.set({ row0: state.row0 === "top" ? "" : "top" }) });
    const info = h("span", { class: "sel-info" });
    const mapHost = h("div", { class: "hm-host" });
    const mapMsg = h("div", { class: "panel-msg", hidden: true });
    const panel = h("section", { class: "panel heatmap-panel" },
        h("div", { class: "panel-head" }, h("h2", null, "Heatmap"), rowsSel, orient, info),
        mapHost, mapMsg);
    const area = createProfileArea(ctx, {
        detail: true, exports: true, exportParams: (st) => renderParams(st),
        emptyText: () => [h("b", null, "No samples in the selected span.")],
        onSource: (name) => store.set(sourcePatch(state, name)),
        onOverTime: (name) => store.set(overTimePatch(state, name)),
    });
    const hint = h("div", { class: "panel hm-hint" },
        "Drag across the heatmap, from one cell to another, to see the flame graph of that " +
        "span; shift-drag a second span to compare the two.");
    const view = h("div", { class: "view heatmap" }, panel, hint, area.element);
    root.append(view);

    const map = new Heatmap(mapHost, {
        onSelect: (which, span) => {
            if (which === 1) {
                second = span;
                renderInfo(state);
                return;
            }
            store.set({ sel_from: msToSeconds(span[0]), sel_until: msToSeconds(span[1]),
                        zoom: "", sandwich: "" });
        },
    });

    function firstSpan(st) {
        const a = secondsToMs(st.sel_from), b = secondsToMs(st.sel_until);
        return Number.isFinite(a) && Number.isFinite(b) && b > a ? [a, b] : null;
    }

    function renderInfo(st) {
        const first = firstSpan(st);
        map.setSpans([first, second]);
        const parts = [];
        if (first) parts.push(h("span", { class: "hm-span s0" }, "Selected ", h("b", null, spanText(first))));
        if (second) parts.push(h("span", { class: "hm-span s1" }, "Compare with ", h("b", null, spanText(second))));
        if (first && second) {
            parts.push(h("a", { class: "button small primary-link", dataset: { testid: "heatmap-compare" },
                                href: compareSearch(st, first, second),
                                title: "the diff view of the two spans (the first is the base)",
                                onclick: (e) => {
                                    e.preventDefault(); // the store's history entry, no page load
                                    store.set(comparePatch(st, first, second));
                                } }, "Compare"));
        }
        if (first) {
            parts.push(h("button", { type: "button", class: "small", dataset: { testid: "zoom-selection" },
                                     title: "make the seconds around the selection the time range (the selection stays)",
                                     onclick: () => store.set(zoomPatch(st)) }, "Zoom in"));
        }
        if (first || second) {
            parts.push(h("button", { type: "button", class: "small", dataset: { testid: "clear-selection" },
                                     onclick: () => {
                                         second = null;
                                         if (first) store.set({ sel_from: "", sel_until: "" });
                                         else renderInfo(state);
                                     } }, "Clear"));
        }
        if (!parts.length) parts.push(h("span", { class: "hint" }, "drag to select; shift-drag for a second span"));
        replace(info, parts);
        hint.hidden = !!first;
        area.element.hidden = !first;
    }

    // The measures: "scorch:heatmap:fetch", "scorch:heatmap:draw" (detail: cols and rows
    // of the answer, paintMs: the canvas's draw).
    const mapLoader = createLoader({ name: "heatmap", busy: panel, messages: [mapMsg],
                                     queryErrors: ctx.onQueryError });

    // quiet: no loading marks (the auto-refresh)
    function loadMap(st, quiet = false) {
        mapLoader.run((signal) => api.json("api/v1/heatmap", { query: st.query, type: st.type, from: st.from,
                                                                 until: st.until, rows: st.rows }, { signal }),
        (doc) => {
            map.setData(doc, st.row0 || "bottom");
            message(mapMsg, doc.cols ? null : "empty", doc.cols ? null : [
                h("b", null, "No timestamped samples for ", h("code", null, st.query || "{}"),
                  " in this time range."),
                h("p", null, "The heatmap needs samples with their own times: perf script " +
                  "pushes (format=perf_script) and scorch record. pprof profiles have none; " +
                  "pick a perf type (e.g. cpu:cpu-clock) or widen the range.")]);
            return { state: doc.cols ? "ready" : "empty",
                     detail: { cols: doc.cols, rows: doc.rows, paintMs: map.lastDrawMs } };
        }, {
            quiet,
            fail: () => {
                map.setData(null);
            },
        });
    }

    const fetcher = {
        params: (st) => renderParams(st),
        load: (st, signal) => api.json("api/v1/render", flameParams(st), { signal }),
    };

    function update(st, prev, how) {
        state = st;
        if (st.base_query || st.base_from || st.base_until) // after this update, not inside it
            queueMicrotask(() => store.get().view === "heatmap" && store.set(NO_BASE, { push: false }));
        const quiet = how === "auto";
        const refresh = how === "refresh" || quiet || !prev;
        rowsSel.value = st.rows || "50";
        orient.textContent = st.row0 === "top" ? "0 ms at the top" : "0 ms at the bottom";
        if (prev && changed(prev, st, MAP_KEYS)) second = null;
        renderInfo(st);
        const reload = refresh || changed(prev, st, PROFILE_KEYS);
        area.apply(st, reload ? null : prev);
        if (!st.type) {
            map.setData(null);
            message(mapMsg, "empty", [h("b", null, "No profiles stored yet.")]);
            return;
        }
        if (refresh || changed(prev, st, MAP_KEYS)) loadMap(st, quiet);
        else if (changed(prev, st, ["row0"])) map.setData(map.doc, st.row0);
        if (reload && firstSpan(st)) area.load(st, fetcher, { quiet });
    }

    return {
        update,
        element: view,
        flame: area.flame,
        heatmap: map,
        destroy() {
            mapLoader.abort();
            map.destroy();
            area.destroy();
            view.remove();
        },
    };
}
