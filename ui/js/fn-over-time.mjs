// fn-over-time.mjs - functions over time: the panel under explore's timeline with a chart
// per pinned function (state fn), its self or total value (fnvalue) per step of the
// timeline's range (GET /api/v1/timeline?function=NAME&value=self|total), drawn by the
// timeline's own canvas: the same axis, unit, lines per series or label value, markers and
// brush. Each chart is removable; the name searches the function in the flame graph.

import { functionParams } from "./api.mjs";
import { h } from "./dom.mjs";
import { createLoader, message } from "./loader.mjs";
import { markSegment, segmented } from "./profile-area.mjs";
import { exactName, exactRegex } from "./selector.mjs";
import { changed, functionList, removeFunction } from "./state.mjs";
import { labelsKey } from "./timeline-model.mjs";
import { Timeline } from "./timeline.mjs";

// What a chart's answer depends on.
export const FN_KEYS = ["query", "type", "from", "until", "group_by", "fnvalue"];

// At most this many charts ask at once: each is a heavy query, of which the server runs
// server.max_queries (4) at once, making the others wait (up to 5 s, then 503) beside the
// timeline, the markers and the flame graph explore asks for at the same time.
export const IN_FLIGHT = 2;

// A runner of async tasks, at most n at a time, in the order given: run(task) resolves
// (or rejects) as task() does once its turn came.
export function limiter(n) {
    let active = 0;
    const queue = [];
    const next = () => {
        if (active < n && queue.length) {
            active++;
            queue.shift()();
        }
    };
    return async (task) => {
        await new Promise((res) => {
            queue.push(res);
            next();
        });
        try {
            return await task();
        } finally {
            active--;
            next();
        }
    };
}

// Whether a /api/v1/timeline answer is a function's (a server without function support
// answers the plain timeline, without "function").
export const isFunctionAnswer = (data, name) => !!data && data.function === name;

// What a function's answer holds: "values" (some step has a value other than 0),
// "zeros" (profiles, none with the function), "none" (no profile in the range).
export function functionContent(data) {
    let any = false;
    for (const s of (data && data.series) || []) {
        for (const v of s.values) {
            if (v === null || v === undefined) continue;
            if (v !== 0) return "values";
            any = true;
        }
    }
    return any ? "zeros" : "none";
}

// The panel. ctx: store, api, types(). opts.onSelect([from, until] | null): a range
// brushed on a chart (explore's selection).
export function createFunctionPanel(ctx, opts = {}) {
    const { store, api } = ctx;
    let state = null;
    let markers = [], selection = null;
    let colors = new Map(); // the timeline's colour of each line (labelsKey), so that a series
    // has one colour in every chart
    const charts = new Map(); // name -> {row, timeline, msg, note, loader}
    const run = limiter(IN_FLIGHT);

    const value = segmented(store, "fnvalue", [
        ["self", "Self", "the time spent in the function itself (pprof's flat)"],
        ["total", "Total", "the function and everything it calls (pprof's cum)"]], "fn-value");
    const list = h("div", { class: "fn-list" });
    const root = h("section", { class: "panel fn-panel", hidden: true, dataset: { testid: "fn-panel" } },
        h("div", { class: "panel-head" }, h("h2", null, "Functions over time"), value,
            h("span", { class: "hint" }, "on the timeline's steps and unit; drag to select a range"),
            h("span", { class: "spacer" }),
            h("button", { type: "button", class: "small", title: "remove every function",
                          onclick: () => store.set({ fn: "" }) }, "Remove all")),
        list);

    function chart(name) {
        const msg = h("div", { class: "panel-msg", hidden: true });
        const note = h("span", { class: "hint fn-note" });
        const host = h("div", { class: "tl-host" });
        const row = h("div", { class: "fn-chart", dataset: { testid: "fn-chart", name } },
            h("div", { class: "fn-head" },
                h("button", { type: "button", class: "fn-name", title: "search it in the flame graph",
                              onclick: () => store.set({ search: exactName(state.search) === name ? "" : exactRegex(name) },
                                                       { push: false }) }, name),
                note, h("span", { class: "spacer" }),
                h("button", { type: "button", class: "close", title: "remove this function",
                              "aria-label": "remove " + name, dataset: { testid: "fn-remove" },
                              onclick: () => store.set({ fn: removeFunction(state.fn, name) }) }, "×")),
            host, msg);
        const timeline = new Timeline(host, { height: 110, label: "over time: " + name,
                                              colorOf: (l) => colors.get(labelsKey(l.labels)),
                                              onSelect: (r) => opts.onSelect && opts.onSelect(r) });
        const loader = createLoader({ name: "function", busy: row, messages: [msg] });
        return { name, row, timeline, msg, note, loader, data: null, unit: "" };
    }

    // quiet: the auto-refresh, without loading marks
    function load(c, st, quiet) {
        c.loader.run((signal) => run(() => api.json("api/v1/timeline", functionParams(st, c.name), { signal })), (data) => {
            if (!isFunctionAnswer(data, c.name)) {
                c.timeline.setData(null);
                message(c.msg, "error", [h("b", null, "This server does not draw functions over time."),
                    h("p", null, "Its /api/v1/timeline has no function parameter: upgrade scorch.")]);
                return { state: "error" };
            }
            const t = ctx.types().find((x) => x.id === st.type);
            c.data = data;
            c.unit = t ? t.unit : "";
            c.timeline.setData(data, c.unit);
            c.timeline.setSelection(selection);
            c.timeline.setMarkers(markers);
            const what = functionContent(data);
            c.note.textContent = what === "zeros" ? "not in any profile of this range (zero where there are profiles)" : "";
            c.row.dataset.content = what;
            message(c.msg, what === "none" ? "empty" : null, what === "none"
                ? [h("b", null, "No profiles in this range."), h("p", null, "Widen the time range or loosen the selector.")]
                : null);
            return { state: what === "none" ? "empty" : "ready" };
        }, {
            quiet,
            fail: () => {
                c.timeline.setData(null);
            },
        });
    }

    // Brings the panel in line with st: charts added, removed and reordered as fn says,
    // each fetched again when what it shows changed (or on a refresh).
    function update(st, prev, how) {
        state = st;
        markSegment(value, st.fnvalue);
        const names = functionList(st.fn);
        root.hidden = !names.length || !st.type;
        for (const [name, c] of charts) {
            if (names.includes(name)) continue;
            c.loader.abort();
            c.row.remove();
            charts.delete(name);
        }
        const reload = !prev || how === "refresh" || how === "auto" || changed(prev, st, FN_KEYS);
        const added = [];
        for (const name of names) {
            let c = charts.get(name);
            if (!c) {
                c = chart(name);
                charts.set(name, c);
                added.push(c);
            }
            list.append(c.row); // in fn's order
        }
        if (!st.type) return;
        for (const c of charts.values())
            if (reload || added.includes(c)) load(c, st, how === "auto" && !added.includes(c));
    }

    return {
        element: root,
        update,
        // the timeline's selection and markers, drawn on every chart
        setSelection(sel) {
            selection = sel;
            for (const c of charts.values()) c.timeline.setSelection(sel);
        },
        setMarkers(ms) {
            markers = ms || [];
            for (const c of charts.values()) c.timeline.setMarkers(markers);
        },
        // lines: the timeline's (with their colours); the charts drawn again in them
        setColors(lines) {
            colors = new Map((lines || []).map((l) => [labelsKey(l.labels), l.color]));
            for (const c of charts.values()) if (c.data) c.timeline.setData(c.data, c.unit);
        },
        // the chart of a function (for tests and scrolling)
        chart: (name) => charts.get(name) || null,
        names: () => [...charts.keys()],
        destroy() {
            for (const c of charts.values()) c.loader.abort();
            root.remove();
        },
    };
}

// A function's chart scrolled into view once it is there (after a "Show over time").
export function revealFunction(panel, name) {
    requestAnimationFrame(() => {
        const c = panel.chart(name);
        if (c) c.row.scrollIntoView({ block: "nearest", behavior: "smooth" });
    });
}
