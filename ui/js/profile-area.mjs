// profile-area.mjs - one profile shown as a flame graph and a top table, with the toolbar
// (search, layout, orientation, detail, exports) and the filter chips: the part explore,
// the heatmap's selection and a single stored profile share. The caller says what to fetch
// (a flame graph document with its top table, api.mjs flameParams); the area keeps the
// loading, empty and error states, the zoom and its full-detail refetch of truncated
// subtrees, search, sandwich and the keyboard.

import { apiUrl, exportFileName, exportTitle } from "./api.mjs";
import { h, replace } from "./dom.mjs";
import { createLoader, message } from "./loader.mjs";
import { FlamePanel } from "./flame-panel.mjs";
import { detailFocus, modelFromJSON, truncated } from "./flame-model.mjs";
import { formatPercent, formatValue } from "./format.mjs";
import { addAlternative, exactName, exactRegex } from "./selector.mjs";
import { TopTable } from "./toptable.mjs";

// The export links: render formats (file names: api.mjs exportFileName).
const EXPORTS = [
    { format: "pprof", label: "pprof", title: "gzipped pprof (go tool pprof)" },
    { format: "folded", label: "folded", title: "folded stacks (FlameGraph)" },
    { format: "svg", label: "SVG", title: "standalone interactive SVG flame graph" },
    { format: "speedscope", label: "speedscope", title: "speedscope JSON (speedscope.app)" },
];

// The filter chips (focus, ignore, hide) of a state into el; removing one sets it to "".
export function renderFilters(el, st, store) {
    const chips = [];
    for (const k of ["focus", "ignore", "hide"]) {
        if (!st[k]) continue;
        chips.push(h("span", { class: "chip", dataset: { filter: k } }, h("b", null, k), " ",
            h("code", null, st[k]),
            h("button", { type: "button", title: "remove this filter", "aria-label": "remove " + k,
                          onclick: () => store.set({ [k]: "" }) }, "×")));
    }
    el.hidden = !chips.length;
    replace(el, chips.length ? [h("span", { class: "label" }, "Filters:"), chips] : []);
}

// The flame graph's search box: typing sets `search` (after a pause, replacing the
// history entry rather than adding one per key).
export function searchInput(store) {
    const el = h("input", {
        type: "search", class: "fg-search", placeholder: "Search frames (regex)   /",
        "aria-label": "search frames", dataset: { testid: "search" }, spellcheck: false,
    });
    let timer = 0;
    el.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => store.set({ search: el.value }, { push: false }), 120);
    });
    return el;
}

// A segmented control of the state key name: choices [value, label, title]; a click sets it.
export function segmented(store, name, choices, testid) {
    return h("span", { class: "seg", role: "group", "aria-label": name, dataset: testid ? { testid } : null },
        choices.map(([v, label, title]) => h("button", {
            type: "button", dataset: { value: v }, title, onclick: () => store.set({ [name]: v }),
        }, label)));
}

// Marks the button of a segmented control whose value is v.
export function markSegment(seg, v) {
    for (const b of seg.querySelectorAll("button")) b.classList.toggle("on", b.dataset.value === v);
}

// The keys of a view with a flame graph (a keydown handler): "/" focuses the search box;
// Escape leaves the sandwich, else resets the zoom, else clears the search (in the search
// box: clears it). current() is the view's state.
export function flameKeys(store, search, current) {
    return (e) => {
        const t = e.target, state = current();
        const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
        if (e.key === "/" && !typing) {
            e.preventDefault();
            search.focus();
            search.select();
        } else if (e.key === "Escape" && !typing && state) {
            if (state.sandwich) store.set({ sandwich: "" });
            else if (state.zoom) store.set({ zoom: "" });
            else if (state.search) store.set({ search: "" }, { push: false });
        } else if (e.key === "Escape" && t === search) {
            search.value = "";
            store.set({ search: "" }, { push: false });
            search.blur();
        }
    };
}

// The view. ctx: store, api, types(), onQueryError(m). opts: exports (bool: the export
// links, to render with exportParams(state): its query, type and range, or null while they
// are not known), detail (bool: the frames select), emptyText(state, what) (the empty
// message), onSource(name) (opens the source view; default: none), onOverTime(name) (shows
// the function over time; default: none).
export function createProfileArea(ctx, opts = {}) {
    const { store, api } = ctx;
    const el = {};
    let state = null, model = null, base = null; // base: the model before a detail fetch
    let fetcher = null;

    el.search = searchInput(store);
    el.share = h("span", { class: "share", dataset: { testid: "search-share" }, "aria-live": "polite" });
    const seg = (name, choices) => segmented(store, name, choices);
    el.layout = seg("layout", [["table", "Table", "top table only"],
        ["both", "Both", "table and flame graph side by side"],
        ["flame", "Flame graph", "flame graph only"]]);
    el.orient = seg("orient", [["icicle", "Icicle", "root on top"],
        ["flame", "Flame", "root at the bottom"]]);
    el.detail = opts.detail ? h("select", {
        class: "detail", "aria-label": "flame graph detail", dataset: { testid: "max-nodes" },
        title: "how many frames the server sends: the lightest are merged into their callers",
        onchange: () => store.set({ maxNodes: el.detail.value }),
    }, [["", "8k frames"], ["32768", "32k frames"], ["100000", "100k frames"]].map(([v, t]) =>
        h("option", { value: v }, t))) : null;
    // names and relative ranges are taken when a link is followed: the file says the range
    // it holds
    el.exports = opts.exports ? h("span", { class: "exports", hidden: true }, "Export ",
        EXPORTS.map((x) => h("a", { class: "button small", download: "", title: x.title,
                                    dataset: { format: x.format, testid: "export-" + x.format },
                                    onmousedown: () => setExports(state), onclick: () => setExports(state) },
            x.label))) : null;
    el.note = h("span", { class: "fg-note", dataset: { testid: "detail-note" } });
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
    el.root = h("div", { class: "profile-area" }, el.toolbar, el.filters, el.note, el.split);
    // the profile, and a zoomed frame's subtree at full detail (marked on the same panels)
    const main = createLoader({ name: "flame", busy: el.split, stamp: el.flamePanel,
                                messages: [el.flameMsg, el.tableMsg], queryErrors: ctx.onQueryError });
    const detail = createLoader({ name: "flame-detail", busy: el.split, stamp: el.flamePanel });

    const maxHeight = () => Math.max(240, window.innerHeight - 120);
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
        onSource: opts.onSource || null,
        onOverTime: opts.onOverTime || null,
    });
    el.flamePanel.append(el.flameMsg);
    const table = new TopTable(el.tableHost, {
        onSort: (sort) => store.set({ sort }, { push: false }),
        onSelect: (name) => selectFunction(exactName(state.search) === name ? "" : name),
        onSandwich: (name) => store.set({ sandwich: name,
                                          layout: state.layout === "table" ? "both" : state.layout }),
        onSource: opts.onSource || null,
        onOverTime: opts.onOverTime || null,
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

    const emptyText = (st, what) => opts.emptyText ? opts.emptyText(st, what)
        : [h("b", null, "No samples here.")];

    function showEmpty(content) {
        message(el.flameMsg, "empty", content);
        message(el.tableMsg, "empty", Array.isArray(content)
            ? content.map((n) => (n instanceof Node ? n.cloneNode(true) : n)) : content);
    }

    // The detail note: whether the graph lost frames to maxNodes, and what a zoom shows.
    function renderNote(st) {
        if (!model || !base) {
            replace(el.note, "");
            return;
        }
        if (model !== base) {
            replace(el.note, h("span", { class: "hint" }, model.truncated
                ? `this subtree in more detail: the ${model.n} heaviest frames of the stacks through `
                : `this subtree at full detail: ${model.n} frames of the stacks through `,
            h("code", null, st.zoom.split(";").pop()), model.truncated ? "; zoom deeper for more" : ""));
        } else if (base.truncated) {
            replace(el.note, h("span", { class: "hint" },
                `${base.n} heaviest frames shown, lighter ones merged into their callers; ` +
                "zoom into a frame to see its subtree in full"));
        } else replace(el.note, "");
    }

    function show(m, st) {
        model = m;
        panel.setModel(m, st);
        el.flamePanel.dataset.nodes = String(m ? m.n : 0);
        el.flamePanel.dataset.total = String(m ? m.rootTotal : 0);
        renderNote(st);
    }

    // A truncated graph zoomed into a frame: the frame's subtree again at full detail
    // (a focus on the frame's function keeps every stack through its path, and drops
    // the rest that competed for maxNodes); back to the whole graph without a zoom.
    function loadDetail(st) {
        detail.abort();
        const focus = base && base.truncated && !st.focus ? detailFocus(st.zoom) : "";
        if (!focus) {
            if (model !== base && base) show(base, st);
            else panel.apply(st);
            renderNote(st);
            return;
        }
        detail.run((signal) => fetcher.focused ? fetcher.focused(st, focus, signal)
            : api.json("api/v1/render", { ...fetcher.params(st), format: "json", focus,
                                          maxNodes: st.maxNodes }, { signal }),
        (doc) => {
            const m = modelFromJSON(doc);
            m.truncated = truncated(m, st.maxNodes);
            show(m, st);
            return { detail: { nodes: m.n, paintMs: panel.fg.lastDrawMs } };
        }, {
            fail: () => {
                panel.apply(st); // the truncated graph stays; the note says nothing new
                return true;
            },
        });
    }

    // Fetches and shows: f.load(state, signal) -> a flame document with "top"; the
    // subtree of a zoomed frame at full detail from f.focused(state, focus, signal) -> a
    // flame document, else from render with f.params(state) and the focus. quiet: no
    // loading marks (the auto-refresh: what is shown stays until the new data is there).
    // The measures: "scorch:flame:fetch", "scorch:flame:draw" (detail: nodes, and paintMs,
    // the canvas's first draw).
    function load(st, f, { quiet = false } = {}) {
        fetcher = f;
        detail.abort();
        return main.run((signal) => f.load(st, signal), (doc) => {
            const m = modelFromJSON(doc);
            m.truncated = truncated(m, st.maxNodes);
            base = m;
            show(m, st);
            table.setData(doc.top || null);
            table.setSelected(exactName(st.search));
            const empty = !m.rootTotal;
            if (empty) showEmpty(emptyText(st, "samples"));
            else {
                message(el.flameMsg, null);
                message(el.tableMsg, null);
            }
            const paintMs = panel.fg.lastDrawMs;
            if (st.zoom && m.truncated) loadDetail(st);
            return { state: empty ? "empty" : "ready", detail: { nodes: m.n, paintMs } };
        }, {
            quiet,
            fail: () => {
                base = null;
                show(null, st);
                table.setData(null);
            },
        });
    }

    // Brings toolbar, table and graph in line with st (no fetch).
    function apply(st, prev) {
        state = st;
        markSegment(el.layout, st.layout);
        markSegment(el.orient, st.orient);
        el.split.className = "split layout-" + st.layout + (el.split.classList.contains("loading") ? " loading" : "");
        if (document.activeElement !== el.search) el.search.value = st.search;
        if (el.detail) {
            if (![...el.detail.options].some((o) => o.value === st.maxNodes))
                el.detail.append(h("option", { value: st.maxNodes }, st.maxNodes + " frames"));
            el.detail.value = st.maxNodes;
        }
        renderFilters(el.filters, st, store);
        setExports(st);
        table.setSort(st.sort);
        table.setSelected(exactName(st.search));
        if (prev && prev.zoom !== st.zoom && base) loadDetail(st);
        else if (model) panel.apply(st);
    }

    // The export links of st: render URLs (the SVG titled with what it shows) and file
    // names after the service, type and range.
    function setExports(st) {
        if (!el.exports) return;
        const p = st && opts.exportParams ? opts.exportParams(st) : null;
        el.exports.hidden = !p;
        if (!p) return;
        const now = Date.now();
        for (const a of el.exports.querySelectorAll("a")) {
            const f = a.dataset.format;
            a.href = apiUrl("api/v1/render", { ...p, format: f, title: f === "svg" ? exportTitle(p, now) : "" });
            a.download = exportFileName(p, f, now);
        }
    }

    function clear(content) {
        main.abort();
        detail.abort();
        base = null;
        show(null, state || {});
        table.setData(null);
        if (content) showEmpty(content);
    }

    const onKey = flameKeys(store, el.search, () => state);
    document.addEventListener("keydown", onKey);

    return {
        element: el.root,
        flame: panel,
        load,
        apply,
        clear,
        // the export links again (exportParams' answer changed)
        updateExports: () => setExports(state),
        model: () => model,
        destroy() {
            document.removeEventListener("keydown", onKey);
            main.abort();
            detail.abort();
            panel.close();
            el.root.remove();
        },
    };
}
