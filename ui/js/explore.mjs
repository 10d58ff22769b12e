// explore.mjs - the explore view: timeline, flame graph and top table of one query over
// time; fetches what the state asks for and keeps loading, empty and error states.

import { apiUrl, profileRange, renderParams, timelineParams } from "./api.mjs";
import { h, replace } from "./dom.mjs";
import { FlamePanel } from "./flame-panel.mjs";
import { modelFromJSON } from "./flame-model.mjs";
import { formatDateTime, formatDuration, formatPercent, formatValue } from "./format.mjs";
import { addAlternative, exactName, exactRegex } from "./selector.mjs";
import { changed } from "./state.mjs";
import { Timeline } from "./timeline.mjs";
import { TopTable } from "./toptable.mjs";

const TIMELINE_KEYS = ["query", "type", "from", "until", "group_by"];
const PROFILE_KEYS = ["query", "type", "from", "until", "sel_from", "sel_until", "focus",
    "ignore", "hide", "maxNodes"];
const EXPORTS = [
    { format: "pprof", label: "pprof", file: "profile.pb.gz", title: "gzipped pprof (go tool pprof)" },
    { format: "folded", label: "folded", file: "profile.folded", title: "folded stacks (FlameGraph)" },
    { format: "svg", label: "SVG", file: "flamegraph.svg", title: "standalone interactive SVG flame graph" },
    { format: "speedscope", label: "speedscope", file: "profile.speedscope.json",
      title: "speedscope JSON (speedscope.app)" },
];

// The view. ctx: store, api, types() (the profile types), labels() (label names, a
// promise), onQueryError(message | "").
export function createExplore(root, ctx) {
    const { store, api } = ctx;
    const el = {};
    let state = null, model = null;
    let tlCtl = null, prCtl = null;

    // ---- layout ----
    el.tlHost = h("div", { class: "tl-host" });
    el.tlMsg = h("div", { class: "panel-msg", hidden: true });
    el.groupBy = h("select", { class: "group-by", "aria-label": "timeline lines",
                               onchange: () => store.set({ group_by: el.groupBy.value }) },
        h("option", { value: "" }, "one line per series"));
    el.selInfo = h("span", { class: "sel-info" });
    el.timeline = h("section", { class: "panel timeline-panel", dataset: { testid: "timeline" } },
        h("div", { class: "panel-head" }, h("h2", null, "Timeline"), el.groupBy, el.selInfo),
        el.tlHost, el.tlMsg);

    el.search = h("input", {
        type: "search", class: "fg-search", placeholder: "Search frames (regex)   /",
        "aria-label": "search frames", dataset: { testid: "search" }, spellcheck: false,
    });
    let searchTimer = 0;
    el.search.addEventListener("input", () => {
        clearTimeout(searchTimer);
        searchTimer = setTimeout(() => store.set({ search: el.search.value }, { push: false }), 120);
    });
    el.share = h("span", { class: "share", dataset: { testid: "search-share" }, "aria-live": "polite" });
    const seg = (name, choices) => h("span", { class: "seg", role: "group", "aria-label": name },
        choices.map(([v, label, title]) => h("button", {
            type: "button", dataset: { value: v }, title,
            onclick: () => store.set({ [name]: v }),
        }, label)));
    el.layout = seg("layout", [["table", "Table", "top table only"],
        ["both", "Both", "table and flame graph side by side"],
        ["flame", "Flame graph", "flame graph only"]]);
    el.orient = seg("orient", [["icicle", "Icicle", "root on top"],
        ["flame", "Flame", "root at the bottom"]]);
    el.detail = h("select", {
        class: "detail", "aria-label": "flame graph detail", dataset: { testid: "max-nodes" },
        title: "how many frames the server sends: the lightest are merged into their callers",
        onchange: () => store.set({ maxNodes: el.detail.value }),
    }, [["", "8k frames"], ["32768", "32k frames"], ["100000", "100k frames"]].map(([v, t]) =>
        h("option", { value: v }, t)));
    el.exports = h("span", { class: "exports" }, "Export ",
        EXPORTS.map((x) => h("a", { class: "button small", download: x.file, title: x.title,
                                    dataset: { format: x.format, testid: "export-" + x.format } },
            x.label)));
    el.filters = h("div", { class: "filters", hidden: true });
    el.toolbar = h("div", { class: "profile-toolbar" },
        h("span", { class: "search-box" }, el.search, el.share),
        el.layout, el.orient, el.detail, el.exports);

    el.tableHost = h("div", { class: "tt-host" });
    el.tableMsg = h("div", { class: "panel-msg", hidden: true });
    el.tablePanel = h("section", { class: "panel table-panel" }, el.tableHost, el.tableMsg);
    el.flameMsg = h("div", { class: "panel-msg", hidden: true });
    el.flamePanel = h("section", { class: "panel flame-panel", dataset: { testid: "flamegraph" } });
    el.split = h("div", { class: "split" }, el.tablePanel, el.flamePanel);
    el.view = h("div", { class: "view explore" }, el.timeline, el.toolbar, el.filters, el.split);
    root.append(el.view);

    const maxHeight = () => Math.max(240, window.innerHeight - 120);
    const timeline = new Timeline(el.tlHost, {
        onSelect: (r) => store.set(r ? { sel_from: String(r[0]), sel_until: String(r[1]) }
            : { sel_from: "", sel_until: "" }),
    });
    const panel = new FlamePanel(el.flamePanel, {
        maxHeight,
        onZoom: (path) => store.set({ zoom: path.join(";") }),
        onFilter: (kind, name) => store.set({
            [kind]: addAlternative(state[kind], exactRegex(name)), zoom: "", sandwich: "",
        }),
        onSandwich: (name) => store.set({ sandwich: name,
                                          layout: name && state.layout === "table" ? "both" : state.layout }),
        onSelect: (name) => selectFunction(name),
        onShare: (s) => showShare(s),
    });
    el.flamePanel.append(el.flameMsg);
    const table = new TopTable(el.tableHost, {
        onSort: (sort) => store.set({ sort }, { push: false }),
        onSelect: (name) => selectFunction(exactName(state.search) === name ? "" : name),
        onSandwich: (name) => store.set({ sandwich: name,
                                          layout: state.layout === "table" ? "both" : state.layout }),
        onContext: null,
    });

    function selectFunction(name) {
        store.set({ search: name ? exactRegex(name) : "" }, { push: false });
    }

    function showShare(s) {
        if (!s) {
            el.share.textContent = "";
            return;
        }
        el.share.textContent = s.nodes
            ? `${s.functions} function${s.functions === 1 ? "" : "s"}, ${s.nodes} frame` +
              `${s.nodes === 1 ? "" : "s"}: ${formatValue(s.value, s.unit)} · ` +
              `${formatPercent(s.value, s.total)} of total`
            : "no match";
    }

    // ---- messages ----
    function message(box, kind, content) {
        if (!kind) {
            box.hidden = true;
            box.className = "panel-msg";
            return;
        }
        box.className = "panel-msg " + kind;
        replace(box, content);
        box.hidden = false;
    }

    function typeInfo(id) {
        return ctx.types().find((t) => t.id === id) || null;
    }

    function emptyText(st, what) {
        const t = typeInfo(st.type);
        return [h("b", null, `No ${t ? t.sample_type : st.type} ${what} for `,
            h("code", null, st.query || "{}"), " in this time range."),
        h("p", null, "Widen the time range, pick another profile type, loosen the label " +
            "selector, or drop a profile file here to upload it.")];
    }

    function errorText(err) {
        if (err.status === 401)
            return [h("b", null, "This server needs an API token."), h("p", null,
                "Enter it with the Token button at the top right.")];
        if (err.status === 0)
            return [h("b", null, "Cannot reach the scorch server."), h("p", null,
                "Check that it runs, then press Refresh.")];
        const hint = err.status === 400
            ? "Fix the query above (label selector, time range or filters) and run it again."
            : "The server failed on this query; its log may say more.";
        return [h("b", null, err.message), h("p", null, hint)];
    }

    // ---- fetching ----
    async function loadTimeline(st) {
        if (tlCtl) tlCtl.abort();
        const ac = (tlCtl = new AbortController());
        el.timeline.classList.add("loading");
        message(el.tlMsg, "loading", "Loading…");
        try {
            const data = await api.json("api/v1/timeline", timelineParams(st), { signal: ac.signal });
            if (ac.signal.aborted) return;
            const t = typeInfo(st.type);
            timeline.setData(data, t ? t.unit : "");
            timeline.setSelection(selection(st));
            const empty = !data.series.length || data.series.every((s) => s.values.every((v) => !v));
            message(el.tlMsg, empty ? "empty" : null, empty ? emptyText(st, "profiles") : null);
        } catch (err) {
            if (err.name === "AbortError") return;
            timeline.setData(null);
            message(el.tlMsg, "error", errorText(err));
            reportError(err);
        } finally {
            if (tlCtl === ac) el.timeline.classList.remove("loading");
        }
    }

    async function loadProfile(st) {
        if (prCtl) prCtl.abort();
        const ac = (prCtl = new AbortController());
        el.split.classList.add("loading");
        message(el.flameMsg, "loading", "Loading…");
        message(el.tableMsg, "loading", "Loading…");
        const t0 = performance.now();
        try {
            const p = renderParams(st);
            const [flame, top] = await Promise.all([
                api.json("api/v1/render", { ...p, format: "json", maxNodes: st.maxNodes },
                         { signal: ac.signal }),
                api.json("api/v1/render", { ...p, format: "top" }, { signal: ac.signal }),
            ]);
            if (ac.signal.aborted) return;
            const t1 = performance.now();
            model = modelFromJSON(flame);
            panel.setModel(model, st);
            table.setData(top);
            table.setSelected(exactName(st.search));
            const empty = !model.rootTotal;
            message(el.flameMsg, empty ? "empty" : null, empty ? emptyText(st, "samples") : null);
            message(el.tableMsg, empty ? "empty" : null, empty ? emptyText(st, "samples") : null);
            ctx.onQueryError("");
            // for the benchmark and the curious: what the last load cost
            window.__scorchTiming = { fetchMs: t1 - t0, renderMs: performance.now() - t1,
                                      nodes: model.n, drawMs: panel.fg.lastDrawMs };
            el.flamePanel.dataset.nodes = String(model.n);
            el.flamePanel.dataset.total = String(model.rootTotal);
        } catch (err) {
            if (err.name === "AbortError") return;
            model = null;
            panel.setModel(null, st);
            table.setData(null);
            message(el.flameMsg, "error", errorText(err));
            message(el.tableMsg, "error", errorText(err));
            reportError(err);
        } finally {
            if (prCtl === ac) {
                el.split.classList.remove("loading");
                el.flamePanel.dataset.loaded = String(Date.now());
            }
        }
    }

    function reportError(err) {
        if (err.status === 400) ctx.onQueryError(err.message);
    }

    function selection(st) {
        return st.sel_from && st.sel_until ? [+st.sel_from, +st.sel_until] : null;
    }

    // ---- state -> view ----
    function renderSelInfo(st) {
        const sel = selection(st);
        if (!sel) {
            replace(el.selInfo, h("span", { class: "hint" }, "drag across the timeline to select a range"));
            return;
        }
        replace(el.selInfo, "Selected ", h("b", null, formatDateTime(sel[0])), " – ",
            h("b", null, formatDateTime(sel[1]).slice(11)), ` (${formatDuration(sel[1] - sel[0])}) `,
            h("button", { type: "button", class: "small", dataset: { testid: "zoom-selection" },
                          title: "make the selection the time range",
                          onclick: () => store.set({ from: String(sel[0]), until: String(sel[1]),
                                                     sel_from: "", sel_until: "" }) }, "Zoom in"),
            " ",
            h("button", { type: "button", class: "small", dataset: { testid: "clear-selection" },
                          onclick: () => store.set({ sel_from: "", sel_until: "" }) }, "Clear"));
    }

    function renderFilters(st) {
        const chips = [];
        for (const k of ["focus", "ignore", "hide"]) {
            if (!st[k]) continue;
            chips.push(h("span", { class: "chip", dataset: { filter: k } }, h("b", null, k), " ",
                h("code", null, st[k]),
                h("button", { type: "button", title: "remove this filter", "aria-label": "remove " + k,
                              onclick: () => store.set({ [k]: "" }) }, "×")));
        }
        el.filters.hidden = !chips.length;
        replace(el.filters, chips.length ? [h("span", { class: "label" }, "Filters:"), chips] : []);
    }

    function renderExports(st) {
        const p = renderParams(st);
        for (const a of el.exports.querySelectorAll("a")) {
            a.href = apiUrl("api/v1/render", { ...p, format: a.dataset.format });
        }
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
        const refresh = how === "refresh" || !prev;
        for (const b of el.layout.querySelectorAll("button"))
            b.classList.toggle("on", b.dataset.value === st.layout);
        for (const b of el.orient.querySelectorAll("button"))
            b.classList.toggle("on", b.dataset.value === st.orient);
        el.split.className = "split layout-" + st.layout + (el.split.classList.contains("loading") ? " loading" : "");
        if (document.activeElement !== el.search) el.search.value = st.search;
        if (![...el.detail.options].some((o) => o.value === st.maxNodes))
            el.detail.append(h("option", { value: st.maxNodes }, st.maxNodes + " frames"));
        el.detail.value = st.maxNodes;
        if (refresh) fillGroupBy(st);
        else el.groupBy.value = st.group_by;
        renderSelInfo(st);
        renderFilters(st);
        renderExports(st);
        table.setSort(st.sort);
        table.setSelected(exactName(st.search));
        if (!st.type) {
            timeline.setData(null);
            panel.setModel(null, st);
            table.setData(null);
            const none = [h("b", null, "No profiles stored yet."), h("p", null,
                "Push some to /ingest (Pyroscope clients, scorch ingest, scorch agent), or " +
                "drop a pprof, folded or perf script file here to upload it.")];
            message(el.tlMsg, "empty", none);
            message(el.flameMsg, "empty", none.map((n) => n.cloneNode(true)));
            message(el.tableMsg, "empty", []);
            return;
        }
        if (refresh || changed(prev, st, TIMELINE_KEYS)) loadTimeline(st);
        else if (changed(prev, st, ["sel_from", "sel_until"])) timeline.setSelection(selection(st));
        if (refresh || changed(prev, st, PROFILE_KEYS)) loadProfile(st);
        else panel.apply(st);
    }

    function onKey(e) {
        const t = e.target;
        const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
        if (e.key === "/" && !typing) {
            e.preventDefault();
            el.search.focus();
            el.search.select();
        } else if (e.key === "Escape" && !typing) {
            if (state.sandwich) store.set({ sandwich: "" });
            else if (state.zoom) store.set({ zoom: "" });
            else if (state.search) store.set({ search: "" }, { push: false });
        } else if (e.key === "Escape" && t === el.search) {
            el.search.value = "";
            store.set({ search: "" }, { push: false });
            el.search.blur();
        }
    }
    document.addEventListener("keydown", onKey);

    return {
        update,
        element: el.view,
        // the range the profile shows, for the page title
        range: () => profileRange(state),
        flame: panel,
        destroy() {
            document.removeEventListener("keydown", onKey);
            panel.close();
            el.view.remove();
        },
    };
}
