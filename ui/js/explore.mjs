// explore.mjs - the explore view: timeline (with the markers of label value changes),
// functions over time, flame graph and top table of one query over time; fetches what the
// state asks for and keeps loading, empty and error states. The ways into the diff view
// start here: "Compare with..." (what is shown against the period before), a second range
// shift-brushed on the timeline, two values of the label the timeline is grouped by.

import {
    flameParams, markersParams, overTimePatch, profileRange, renderParams, sourcePatch,
    timelineParams,
} from "./api.mjs";
import { compareWithPatch, defaultLabelPair, labelSidesPatch, rangesPatch } from "./diff-model.mjs";
import { h, replace } from "./dom.mjs";
import { formatDateTime, formatDuration } from "./format.mjs";
import { createFunctionPanel, revealFunction } from "./fn-over-time.mjs";
import { createLoader, message } from "./loader.mjs";
import { createProfileArea } from "./profile-area.mjs";
import { changed } from "./state.mjs";
import { Timeline } from "./timeline.mjs";
import { openProfileAt } from "./single.mjs";

const TIMELINE_KEYS = ["query", "type", "from", "until", "group_by"];
const PROFILE_KEYS = ["query", "type", "from", "until", "sel_from", "sel_until", "focus",
    "ignore", "hide", "maxNodes"];

// The "nothing here" message of a state's panels.
export function emptyText(types, st, what) {
    const t = types().find((x) => x.id === st.type) || null;
    return [h("b", null, `No ${t ? t.sample_type : st.type} ${what} for `,
        h("code", null, st.query || "{}"), " in this time range."),
    h("p", null, "Widen the time range, pick another profile type, loosen the label " +
        "selector, or drop a profile file here to upload it.")];
}

// The view. ctx: store, api, types() (the profile types), labels() (label names, a
// promise), onQueryError(message | "").
export function createExplore(root, ctx) {
    const { store, api } = ctx;
    const el = {};
    let state = null;
    let markersMissing = false; // the server has no /api/v1/markers: asked once a page
    let second = null; // the shift-brushed range to compare the selection with

    // ---- layout ----
    el.tlHost = h("div", { class: "tl-host" });
    el.tlMsg = h("div", { class: "panel-msg", hidden: true });
    el.groupBy = h("select", { class: "group-by", "aria-label": "timeline lines",
                               onchange: () => store.set({ group_by: el.groupBy.value }) },
        h("option", { value: "" }, "one line per series"));
    el.selInfo = h("span", { class: "sel-info" });
    el.labelCompare = h("span", { class: "label-compare", hidden: true, dataset: { testid: "group-compare" } });
    el.compareWith = h("button", {
        type: "button", class: "small", dataset: { testid: "compare-with" },
        title: "open the diff view: what is shown here against the period before it (change the base there)",
        onclick: () => store.set(compareWithPatch(state)),
    }, "Compare with…");
    el.timeline = h("section", { class: "panel timeline-panel", dataset: { testid: "timeline" } },
        h("div", { class: "panel-head" }, h("h2", null, "Timeline"), el.groupBy, el.labelCompare,
            el.selInfo, h("span", { class: "spacer" }), el.compareWith),
        el.tlHost, el.tlMsg);
    const selectRange = (r) => store.set(r ? { sel_from: String(r[0]), sel_until: String(r[1]) }
        : { sel_from: "", sel_until: "" });
    const fns = createFunctionPanel(ctx, { onSelect: selectRange });
    const area = createProfileArea(ctx, {
        exports: true, detail: true, exportParams: (st) => renderParams(st),
        emptyText: (st, what) => emptyText(ctx.types, st, what),
        onSource: (name) => store.set(sourcePatch(state, name)),
        onOverTime: (name) => {
            store.set(overTimePatch(state, name));
            revealFunction(fns, name);
        },
    });
    el.view = h("div", { class: "view explore" }, el.timeline, fns.element, area.element);
    root.append(el.view);

    const timeline = new Timeline(el.tlHost, {
        onSelect: selectRange,
        onPoint: (line, k, e) => openProfileAt(ctx, state, timeline, line, k, e),
        onSecond: (r) => {
            second = r;
            renderSelInfo(state);
        },
    });

    function typeInfo(id) {
        return ctx.types().find((t) => t.id === id) || null;
    }

    // ---- fetching ----
    // the timeline: a 400's message goes to the query bar (the flame graph's answer clears it)
    const tlLoader = createLoader({ name: "timeline", busy: el.timeline, messages: [el.tlMsg],
                                    queryErrors: (m) => m && ctx.onQueryError(m) });
    // the markers only annotate: no loading marks, no messages
    const mkLoader = createLoader({ name: "markers", stamp: null });

    // quiet: no loading marks (the auto-refresh: the lines stay until the new ones are there)
    function loadTimeline(st, quiet = false) {
        tlLoader.run((signal) => api.json("api/v1/timeline", timelineParams(st), { signal }), (data) => {
            const t = typeInfo(st.type);
            timeline.setData(data, t ? t.unit : "");
            timeline.setSelection(selection(st));
            fns.setColors(timeline.data ? timeline.data.lines : []);
            const empty = !data.series.length || data.series.every((s) => s.values.every((v) => !v));
            message(el.tlMsg, empty ? "empty" : null, empty ? emptyText(ctx.types, st, "profiles") : null);
            renderLabelCompare(st);
            return { state: empty ? "empty" : "ready" };
        }, {
            quiet,
            fail: () => {
                timeline.setData(null);
                renderLabelCompare(st);
            },
        });
    }

    // The markers of label value changes (a new version) on the timeline and the functions'
    // charts. They only annotate: a failure leaves them out, and a server without the
    // endpoint is not asked again.
    function loadMarkers(st) {
        if (markersMissing) {
            mkLoader.abort();
            return;
        }
        const show = (ms) => {
            timeline.setMarkers(ms);
            fns.setMarkers(ms);
            el.timeline.dataset.markers = String(ms.length);
        };
        mkLoader.run((signal) => api.json("api/v1/markers", markersParams(st), { signal }),
            (d) => show((d && d.markers) || []), {
                quiet: true,
                fail: (err) => {
                    if (err.status === 404) markersMissing = true;
                    show([]);
                    return true;
                },
            });
    }

    // one request for the flame graph and the table: one merge on the server
    const fetcher = {
        params: (st) => renderParams(st),
        load: (st, signal) => api.json("api/v1/render", flameParams(st), { signal }),
    };

    function selection(st) {
        return st.sel_from && st.sel_until ? [+st.sel_from, +st.sel_until] : null;
    }

    // ---- state -> view ----
    const rangeText = (r) => [h("b", null, formatDateTime(r[0])), " – ",
        h("b", null, formatDateTime(r[1]).slice(11)), ` (${formatDuration(r[1] - r[0])}) `];

    // The timeline grouped by a label: its two heaviest values compared in one click.
    function renderLabelCompare(st) {
        const label = st.group_by;
        const lines = label && timeline.data ? timeline.data.lines : null;
        const pair = lines ? defaultLabelPair(lines, label) : null;
        el.labelCompare.hidden = !pair;
        if (!pair) return;
        const values = [...new Set(lines.filter((l) => !l.other && l.labels[label]).map((l) => l.labels[label]))];
        const pick = (v, testid) => {
            const s = h("select", { "aria-label": testid, dataset: { testid } },
                values.map((x) => h("option", { value: x }, x)));
            s.value = v;
            return s;
        };
        const a = pick(pair.base, "group-base"), b = pick(pair.new, "group-new");
        replace(el.labelCompare, "compare ", a, " with ", b, " ",
            h("button", { type: "button", class: "small primary", dataset: { testid: "group-compare-go" },
                          title: `the diff view: ${label}="${a.value}" (base) against ${label}="${b.value}" (new) over this range`,
                          onclick: () => {
                              const r = profileRange(state);
                              store.set({ ...labelSidesPatch(state.query, label, a.value, b.value), from: r.from,
                                          until: r.until, sel_from: "", sel_until: "" });
                          } }, "Compare"));
    }

    function renderSelInfo(st) {
        const sel = selection(st);
        timeline.setSecond(second);
        const cmp = second ? [h("span", { class: "hm-span s1" }, "Compare with ", rangeText(second)),
            sel ? h("button", { type: "button", class: "small primary", dataset: { testid: "compare-ranges" },
                                title: "the diff view of the two ranges (the first selected is the base)",
                                onclick: () => store.set(rangesPatch(sel, second)) }, "Compare")
                : h("span", { class: "hint" }, "drag (without shift) to select the base range"),
            h("button", { type: "button", class: "small", onclick: () => {
                second = null;
                renderSelInfo(state);
            } }, "×")] : null;
        if (!sel) {
            replace(el.selInfo, cmp || h("span", { class: "hint" },
                "drag to select a range (shift-drag: a second one to compare it with); " +
                "click a point to open its profile"));
            return;
        }
        replace(el.selInfo, h("span", { class: "hm-span s0" }, "Selected ", rangeText(sel)),
            h("button", { type: "button", class: "small", dataset: { testid: "zoom-selection" },
                          title: "make the selection the time range",
                          onclick: () => store.set({ from: String(sel[0]), until: String(sel[1]),
                                                     sel_from: "", sel_until: "" }) }, "Zoom in"),
            " ",
            h("button", { type: "button", class: "small", dataset: { testid: "clear-selection" },
                          onclick: () => store.set({ sel_from: "", sel_until: "" }) }, "Clear"), cmp);
    }

    async function fillGroupBy(st) {
        let names = [];
        try {
            names = await ctx.labels();
        } catch { /* the select keeps its first option */ }
        const cur = st.group_by;
        replace(el.groupBy, h("option", { value: "" }, "one line per series"),
            names.filter((n) => n !== "__name__").map((n) => h("option", { value: n }, "one line per " + n)));
        if (cur && !names.includes(cur)) el.groupBy.append(h("option", { value: cur }, "one line per " + cur));
        el.groupBy.value = state.group_by;
    }

    function update(st, prev, how) {
        state = st;
        const quiet = how === "auto";
        const refresh = how === "refresh" || quiet || !prev;
        if (prev && changed(prev, st, TIMELINE_KEYS)) second = null;
        if (refresh && !quiet) fillGroupBy(st);
        else el.groupBy.value = st.group_by;
        renderSelInfo(st);
        fns.update(st, prev, how);
        const reload = refresh || changed(prev, st, PROFILE_KEYS);
        area.apply(st, reload ? null : prev);
        if (!st.type) {
            timeline.setData(null);
            const none = [h("b", null, "No profiles stored yet."), h("p", null,
                "Push some to /ingest (Pyroscope clients, scorch ingest, scorch agent), or " +
                "drop a pprof, folded or perf script file here to upload it.")];
            message(el.tlMsg, "empty", none);
            area.clear(none.map((n) => n.cloneNode(true)));
            return;
        }
        if (refresh || changed(prev, st, TIMELINE_KEYS)) {
            loadTimeline(st, quiet);
            loadMarkers(st);
        } else if (changed(prev, st, ["sel_from", "sel_until"])) timeline.setSelection(selection(st));
        fns.setSelection(selection(st));
        if (reload) area.load(st, fetcher, { quiet });
    }

    return {
        update,
        element: el.view,
        // the range the profile shows, for the page title
        range: () => profileRange(state),
        flame: area.flame,
        timeline,
        functions: fns,
        destroy() {
            tlLoader.abort();
            mkLoader.abort();
            fns.destroy();
            area.destroy();
            el.view.remove();
        },
    };
}
