// diff-view.mjs - the diff view (view=diff): two selections compared (GET /api/v1/diff).
// The query bar is the new side; the base side has its own selector and range here (or a
// label's two values, picked in one go). It shows what is compared and how (replicates,
// method, metric, q level), the diff flame graph (data-testid="diff-flamegraph": frames as
// wide as the new side's values, red grew, blue shrank, grey within noise) or the two
// sides' flame graphs side by side, and the diff table, significant changes first.
// Two requests a load: format=flame for the graph, format=json for the table and the
// statistics of the tooltip.

import { apiUrl, exportFileName } from "./api.mjs";
import {
    autoNormalize, DIFF_DIM_COLOR, diffBase, diffColor, diffOverTimePatch, diffParams, earlierRange, formatChange,
    formatInterval, formatQ, GONE_COLOR, hiddenFrames, isPlain, labelOfSides, labelSidesPatch,
    labelValues, layoutDiff, METRIC_TEXT, NEW_COLOR, nodeDiffColor, nodeShares, normalizeOf,
    rangeText, rawBaseTotal, rowsByName, swapPatch,
} from "./diff-model.mjs";
import { functionColor } from "./colors.mjs";
import { DiffTable } from "./diff-table.mjs";
import { h, replace } from "./dom.mjs";
import { FlamePanel } from "./flame-panel.mjs";
import { modelFromJSON, truncated } from "./flame-model.mjs";
import { formatMetric, formatPercent, formatValue, metricView } from "./format.mjs";
import { createLoader, message } from "./loader.mjs";
import { flameKeys, markSegment, renderFilters, searchInput, segmented } from "./profile-area.mjs";
import { addAlternative, exactName, exactRegex, withoutMatcher } from "./selector.mjs";
import { changed } from "./state.mjs";
import { displayTime } from "./timespec.mjs";

// What a fetch depends on; everything else (widths, sides, zoom, search, layout) redraws.
const FETCH_KEYS = ["type", "query", "from", "until", "base_query", "base_from", "base_until",
    "focus", "ignore", "hide", "normalize", "q", "maxNodes", "diffmode"];
const SIDE_KEYS = ["type", "query", "from", "until", "base_query", "base_from", "base_until"];

// A wrong guess of the default normalisation: fetch again with the rule's answer.
class Redo extends Error {
    constructor(normalize) {
        super("redo");
        this.normalize = normalize;
    }
}

// Side by side: one colour per function, the same on both sides (per name, once a model).
const nameColors = new WeakMap();
function byFunction(m, id) {
    let c = nameColors.get(m);
    if (!c) nameColors.set(m, (c = m.names.map(functionColor)));
    return c[m.name[id]];
}

export function createDiffView(root, ctx) {
    const { store, api } = ctx;
    const el = {};
    let state = null;
    let tree = null, flameDoc = null, jsonDoc = null, rows = new Map();
    let normalized = null; // what the shown data is
    let guess = true; // the default normalisation to ask for before the totals are known

    // ---- the header: what is compared and how ----
    el.summary = h("div", { class: "diff-summary", dataset: { testid: "diff-summary" } });
    el.method = h("div", { class: "diff-method", dataset: { testid: "diff-method" } });
    el.baseQuery = h("input", { class: "diff-base-query", spellcheck: false, "aria-label": "base selector",
                                placeholder: "the same selector as the new side", dataset: { testid: "base-query" } });
    el.baseFrom = h("input", { class: "diff-time", "aria-label": "base from", placeholder: "from", size: 14 });
    el.baseUntil = h("input", { class: "diff-time", "aria-label": "base until", placeholder: "until", size: 14 });
    const preset = (label, title, f) => h("button", { type: "button", class: "small", title,
                                                       onclick: () => f() }, label);
    el.baseForm = h("form", { class: "diff-base", autocomplete: "off", onsubmit: (e) => {
        e.preventDefault();
        applyBase();
    } },
    h("span", { class: "form-label" }, "Change the base:"), el.baseQuery, el.baseFrom, h("span", null, "to"), el.baseUntil,
    h("button", { type: "submit", class: "small primary", dataset: { testid: "base-apply" } }, "Apply"),
    h("span", { class: "presets" },
        preset("same range", "the base over the new side's range", () => setBaseRange(state.from, state.until)),
        preset("period before", "the base over the period just before the new side's", () => shiftBase(null)),
        preset("a day before", "the new side's range a day earlier", () => shiftBase(86400e3)),
        preset("a week before", "the new side's range a week earlier", () => shiftBase(7 * 86400e3))),
);
    el.baseError = h("div", { class: "query-error", role: "alert", hidden: true, dataset: { testid: "base-error" } });
    el.labelPicker = h("div", { class: "diff-labels", hidden: true, dataset: { testid: "label-picker" } });
    el.sideButtons = h("span", { class: "side-buttons" },
        h("button", { type: "button", class: "small", dataset: { testid: "swap-sides" }, title: "the new side becomes the base",
                      onclick: () => store.set(swapPatch(state)) }, "⇄ Swap sides"),
        h("button", { type: "button", class: "small", dataset: { testid: "label-sides" },
                      title: "compare two values of a label (e.g. load=low against load=high) over the same range",
                      onclick: () => toggleLabelPicker() }, "By label…"));
    el.head = h("section", { class: "panel diff-head" }, h("div", { class: "diff-top" }, el.summary, el.sideButtons),
        el.baseForm, el.baseError, el.labelPicker, el.method);

    // ---- the toolbar ----
    el.search = searchInput(store);
    el.share = h("span", { class: "share", dataset: { testid: "search-share" }, "aria-live": "polite" });
    const seg = (name, choices, testid) => segmented(store, name, choices, testid);
    el.normalize = seg("normalize", [["1", "Shares", "normalise: scale the base to the new total, so shares compare"],
        ["0", "Amounts", "do not normalise: values compare as they are, both sides drawn to one scale"]],
    "normalize");
    el.normHint = h("span", { class: "hint norm-hint" });
    el.widths = seg("widths", [["new", "New", "frames as wide as the new side's values"],
        ["base", "Base", "frames as wide as the base side's values: what shrank or vanished at its old size"],
        ["both", "Both", "frames as wide as both sides together: every frame of either side visible"]], "widths");
    el.mode = seg("diffmode", [["", "Noise-aware", "colour only the changes that the spread between " +
        "the profiles of each side does not explain (a test per function)"],
    ["plain", "Plain", "red and blue by the change itself, no test, as other profilers draw a diff"]], "diffmode");
    el.sides = seg("sides", [["", "Diff", "one flame graph coloured by the change"],
        ["1", "Side by side", "the two sides' flame graphs next to each other"]], "sides");
    el.layout = seg("layout", [["table", "Table", "the diff table only"],
        ["both", "Both", "flame graph and table"], ["flame", "Flame graph", "the flame graph only"]], "layout");
    el.orient = seg("orient", [["icicle", "Icicle", "root on top"], ["flame", "Flame", "root at the bottom"]], "orient");
    el.q = h("select", { class: "detail", "aria-label": "false discovery rate", dataset: { testid: "q-level" },
                         title: "the false discovery rate: a change is significant when its q-value is below it",
                         onchange: () => store.set({ q: el.q.value }) },
    [["0.01", "q < 0.01"], ["", "q < 0.05"], ["0.1", "q < 0.1"]].map(([v, t]) => h("option", { value: v }, t)));
    el.exports = h("span", { class: "exports" }, "Export ",
        [["tsv", "TSV", "diff.tsv", "per function: both sides and the statistics"],
            ["folded", "folded", "diff.folded", "stack base new lines (FlameGraph's difffolded.pl)"]]
            .map(([f, label, file, title]) => h("a", { class: "button small", download: file, title,
                                                       dataset: { format: f } }, label)));
    el.toolbar = h("div", { class: "profile-toolbar" },
        h("span", { class: "search-box" }, el.search, el.share),
        h("span", { class: "tool" }, el.normalize, el.normHint), el.mode, el.widths, el.sides, el.layout, el.orient, el.q,
        el.exports);
    el.filters = h("div", { class: "filters", hidden: true });
    el.note = h("div", { class: "fg-note", dataset: { testid: "diff-note" } });

    // ---- the graph(s) ----
    el.legend = h("div", { class: "diff-legend", dataset: { testid: "diff-legend" } });
    el.mainHost = h("div", { class: "diff-main" });
    el.baseHost = h("div", { class: "diff-side" });
    el.newHost = h("div", { class: "diff-side" });
    el.sideBox = h("div", { class: "diff-sides", hidden: true },
        h("div", { class: "diff-col" }, h("div", { class: "side-title" }, h("span", { class: "side-tag base" }, "Base"),
            h("span", { class: "hint" }, " colours name functions, the same on both sides; the diff graph shows the changes")),
        el.baseHost),
        h("div", { class: "diff-col" }, h("div", { class: "side-title" }, h("span", { class: "side-tag new" }, "New")), el.newHost));
    el.graphMsg = h("div", { class: "panel-msg", hidden: true });
    el.graph = h("section", { class: "panel flame-panel diff-graph", dataset: { testid: "diff-flamegraph" } },
        el.legend, el.mainHost, el.sideBox, el.graphMsg);
    el.tableHost = h("div", { class: "tt-host" });
    el.tableMsg = h("div", { class: "panel-msg", hidden: true });
    el.tablePanel = h("section", { class: "panel table-panel diff-table-panel" }, el.tableHost, el.tableMsg);
    el.body = h("div", { class: "diff-body" }, el.graph, el.tablePanel);
    el.view = h("div", { class: "view diff" }, el.head, el.toolbar, el.filters, el.note, el.body);
    root.append(el.view);

    const maxHeight = () => Math.max(240, window.innerHeight - 160);
    const panelOpts = (extra) => ({
        maxHeight, sandwich: false, selectLabel: "Select in the table",
        tooltip: (m, id) => tooltip(m, id),
        onZoom: (path) => store.set({ zoom: path.join(";") }),
        onFilter: (kind, name) => store.set({ [kind]: addAlternative(state[kind], exactRegex(name)), zoom: "" }),
        onSandwich: () => {},
        onSelect: (name) => selectFunction(name),
        onShare: (s) => showShare(s),
        onOverTime: (name) => store.set(diffOverTimePatch(state, name)),
        ...extra,
    });
    const main = new FlamePanel(el.mainHost, panelOpts({
        label: "diff flame graph", nodeColor: nodeDiffColor, dimColor: DIFF_DIM_COLOR,
    }));
    const sides = {
        base: new FlamePanel(el.baseHost, panelOpts({ label: "base flame graph", onShare: () => {},
                                                      nodeColor: byFunction })),
        new: new FlamePanel(el.newHost, panelOpts({ label: "new flame graph", nodeColor: byFunction })),
    };
    const table = new DiffTable(el.tableHost, {
        onSelect: (name) => selectFunction(exactName(state.search) === name ? "" : name),
    });

    function selectFunction(name) {
        store.set({ search: name ? exactRegex(name) : "" }, { push: false });
    }

    function showShare(s) {
        el.share.textContent = !s ? "" : s.nodes
            ? `${s.functions} function${s.functions === 1 ? "" : "s"}, ${s.nodes} frame` +
              `${s.nodes === 1 ? "" : "s"}: ${formatValue(s.value, s.unit)} · ` +
              `${formatPercent(s.value, s.total)} of the ${state.widths === "both" ? "two sides" : state.widths + " side"}`
            : "no match";
    }

    // ---- the base side ----
    function fillBaseForm(st) {
        const active = document.activeElement;
        if (active !== el.baseQuery) el.baseQuery.value = st.base_query;
        el.baseQuery.placeholder = (st.query || "{}") + "  (the new side's selector)";
        const b = diffBase(st);
        if (active !== el.baseFrom) el.baseFrom.value = displayTime(b.from);
        if (active !== el.baseUntil) el.baseUntil.value = displayTime(b.until);
    }

    // unchanged inputs keep the URL's spelling of a time
    function timeInput(inp, cur) {
        const v = inp.value.trim();
        return v === displayTime(cur) ? cur : v;
    }

    function applyBase() {
        const b = diffBase(state);
        const q = el.baseQuery.value.trim();
        const from = timeInput(el.baseFrom, b.from), until = timeInput(el.baseUntil, b.until);
        // the range as the inputs say it (an implied period before becomes explicit only
        // when changed: the default follows the new side's range)
        const same = from === b.from && until === b.until && b.before;
        setBase(q === state.query ? "" : q, same ? "" : from, same ? "" : until);
    }

    function setBase(query, from, until) {
        store.set({ base_query: query, base_from: from, base_until: until, zoom: "" });
    }

    function setBaseRange(from, until) {
        setBase(state.base_query, from, until);
    }

    function shiftBase(ms) {
        const r = earlierRange(state.from, state.until, Date.now(), ms ?? undefined);
        if (r) setBaseRange(r.from, r.until);
    }

    function baseError(m) {
        el.baseError.textContent = m;
        el.baseError.hidden = !m;
        el.baseQuery.setAttribute("aria-invalid", m && /base_query/.test(m) ? "true" : "false");
    }

    // ---- two values of a label ----
    let pickerSeq = 0;
    async function toggleLabelPicker(open = el.labelPicker.hidden) {
        el.labelPicker.hidden = !open;
        if (!open) return;
        const seq = ++pickerSeq;
        const cur = labelOfSides(diffBase(state).query, state.query);
        replace(el.labelPicker, h("span", { class: "hint" }, "Loading labels…"));
        let names = [];
        try {
            names = (await ctx.labels()).filter((n) => n !== "__name__" && n !== "service_name");
        } catch (err) {
            replace(el.labelPicker, h("span", { class: "error-text" }, "Cannot list labels: " + err.message));
            return;
        }
        if (seq !== pickerSeq) return;
        if (!names.length) {
            replace(el.labelPicker, h("span", { class: "hint" }, "The series have no labels to compare by."));
            return;
        }
        const label = h("select", { "aria-label": "label", dataset: { testid: "label-name" } },
            names.map((n) => h("option", { value: n }, n)));
        label.value = cur ? cur.label : names.includes(state.group_by) ? state.group_by : names[0];
        const baseSel = h("select", { "aria-label": "base value", dataset: { testid: "label-base" } });
        const newSel = h("select", { "aria-label": "new value", dataset: { testid: "label-new" } });
        const go = h("button", { type: "button", class: "small primary", dataset: { testid: "label-compare" },
                                 disabled: true, onclick: () => {
                                     const common = withoutMatcher(state.query, label.value);
                                     store.set(labelSidesPatch(common, label.value, baseSel.value, newSel.value));
                                     toggleLabelPicker(false);
                                 } }, "Compare");
        const info = h("span", { class: "hint" });
        const fill = async () => {
            const name = label.value, s = ++pickerSeq;
            info.textContent = "…";
            go.disabled = true;
            let vs = [];
            try {
                const series = await api.json("api/v1/series", {
                    query: withoutMatcher(state.query, name), type: state.type, from: state.from, until: state.until,
                });
                vs = labelValues(series, name);
            } catch (err) {
                info.textContent = "cannot list series: " + err.message;
                return;
            }
            if (s !== pickerSeq) return;
            for (const sel of [baseSel, newSel]) replace(sel, vs.map((v) => h("option", { value: v }, v)));
            const sameLabel = cur && cur.label === name;
            baseSel.value = sameLabel && vs.includes(cur.base) ? cur.base : vs[0] || "";
            newSel.value = sameLabel && vs.includes(cur.new) ? cur.new : vs[1] || vs[0] || "";
            go.disabled = vs.length < 2;
            info.textContent = vs.length < 2 ? `the new side's series have ${vs.length ? "one value" : "no value"} of ${name}`
                : `${vs.length} values over the new side's range; both sides take that range`;
        };
        label.addEventListener("change", fill);
        replace(el.labelPicker, h("span", null, "Compare by"), label, h("span", { class: "side-tag base" }, "Base"),
            baseSel, h("span", { class: "side-tag new" }, "New"), newSel, go, info,
            h("button", { type: "button", class: "close", "aria-label": "close", onclick: () => toggleLabelPicker(false) }, "×"));
        await fill();
    }

    // ---- what is compared, and how ----
    function sideText(tag, query, from, until, n) {
        return h("div", { class: "side-line" }, h("span", { class: "side-tag " + tag }, tag === "base" ? "Base" : "New"),
            h("code", null, query || "{}"), h("span", null, rangeText(from, until)),
            n === undefined ? null : h("span", { class: "reps", title: "profiles or time buckets tested as replicates" },
                `${n} replicate${n === 1 ? "" : "s"}`));
    }

    function renderSummary(st) {
        const b = diffBase(st);
        const j = jsonDoc;
        const n = sideText("new", st.query, st.from, st.until, j ? j.profiles : undefined);
        n.append(h("span", { class: "hint" }, "(set in the query bar above; type and filters apply to both sides)"));
        const bl = sideText("base", b.query, b.from, b.until, j ? j.base_profiles : undefined);
        if (b.before) bl.append(h("span", { class: "hint", dataset: { testid: "base-default" } },
            "(no base range given: the period just before the new side's; change it below)"));
        replace(el.summary, bl, n, j && j.empty ? h("div", { class: "warn-text", dataset: { testid: "diff-empty" } },
            j.empty_text + (j.empty === "both" ? "." : `: the ${j.empty === "base" ? "new" : "base"} side's flame graph ` +
            "is drawn as it is, nothing is compared.")) : null);
        fillBaseForm(st);
        if (!j) {
            replace(el.method, "");
            return;
        }
        const warn = j.method !== "replicates";
        const rawBase = rawBaseTotal(j);
        const ratio = rawBase > 0 ? j.total / rawBase - 1 : Infinity;
        const auto = st.normalize === "";
        replace(el.method,
            h("div", { class: "method-line" + (warn ? " warn" : ""), dataset: { method: j.method || "" } },
                h("b", null, "Method: "), j.method_text || "no statistics", j.method ? h("code", null, " " + j.method) : null,
                // the server cuts a range into whole seconds, and a profile counts where it starts
                j.method === "none" && j.total && j.base_total ? h("div", null,
                    "Both sides have samples, but no replicates to test: ranges shorter than a second (heatmap " +
                    "selections) or inside one long profile are not cut into replicates. The exact difference is " +
                    "shown, nothing is coloured.") : null),
            h("div", { class: "method-line" },
                h("b", null, "Compared: "), isPlain(st) ? `${j.sample_type} (${j.unit}), the plain difference: no test; `
                    : `${j.sample_type} (${j.unit}), ${METRIC_TEXT[j.metric] || j.metric || "–"}` +
                    (j.metric_unit ? ` (the table's values: ${metricView(j.metric_unit).title})` : "") +
                    `; significant when q < ${j.q ?? (st.q || 0.05)}; `,
                h("span", { dataset: { testid: "diff-verdict" } }, verdict(j, st))),
            h("div", { class: "method-line" },
                h("b", null, "Totals: "), `base ${formatValue(rawBase, j.unit)}, new ${formatValue(j.total, j.unit)}` +
                (Number.isFinite(ratio) ? ` (${formatChange(ratio * 100)})` : "") + "; ",
                normalized ? `normalised: base values ×${j.base_scale.toPrecision(3)}, shares compare`
                    : "not normalised: amounts compare, both sides drawn to one scale",
                auto ? ` (the default: the totals differ by ${normalized ? "more" : "no more"} than 10%)` : ""));
    }

    function verdict(j, st) {
        if (isPlain(st)) return "red grew, blue shrank, by any amount; switch to Noise-aware for the test";
        if (j.method === "none") return "nothing was tested (a side has no profiles)";
        const tested = `${j.tested} function${j.tested === 1 ? "" : "s"} tested`;
        const news = [j.new ? `${j.new} new` : "", j.gone ? `${j.gone} gone` : ""].filter(Boolean);
        const tail = news.length ? `; ${news.join(", ")} (on one side only)` : "";
        if (!j.grew && !j.shrank) return `${tested}: no significant change${tail}`;
        return `${tested}: ${j.grew} grew, ${j.shrank} shrank significantly${tail}`;
    }

    // ---- the tooltip: both sides, the change, the function's test ----
    function tooltip(m, id) {
        const name = m.names[m.name[id]];
        const u = m.unit;
        const sh = nodeShares(m, id);
        const row = (label, v, self, share) => h("tr", null, h("th", null, label),
            h("td", null, formatValue(v, u)), h("td", null, formatPercent(share, 1)), h("td", null, formatValue(self, u)));
        const r = rows.get(name);
        const test = [];
        if (r) {
            for (const [label, pct, lo, hi, q] of [["self", r.delta_pct, r.delta_pct_lo, r.delta_pct_hi, r.flat_q],
                ["total", r.cum_delta_pct, r.cum_delta_pct_lo, r.cum_delta_pct_hi, r.cum_q]]) {
                if (q === null && pct === null) continue;
                test.push(h("tr", null, h("th", null, label), h("td", null, formatChange(pct ?? (r.base_flat ? null : Infinity))),
                    h("td", null, formatInterval(lo, hi)), h("td", null, "q " + formatQ(q))));
            }
        }
        // the tested quantity itself: the means the test compared, in their unit
        const mu = jsonDoc && jsonDoc.metric_unit;
        const mean = (cum) => r && mu && h("tr", null, h("th", null, cum ? "total" : "self"),
            h("td", { colspan: 3 }, `${formatMetric(cum ? r.base_cum_mean : r.base_mean, mu)} → ` +
            `${formatMetric(cum ? r.cum_mean : r.mean, mu)}`));
        const c = m.plain ? 0 : m.change[id];
        let v;
        if (m.oneSided) v = h("div", { class: "tip-verdict" }, "one side has no profiles: nothing compared");
        else if (m.plain) v = h("div", { class: "tip-verdict" }, "plain diff: no test");
        else if (c === 2) v = h("div", { class: "tip-verdict new" }, "new: this call path is absent from the base");
        else if (c === -2) v = h("div", { class: "tip-verdict gone" }, "gone: this call path is absent from the new side");
        else if (c) v = h("div", { class: "tip-verdict " + (c > 0 ? "up" : "down") }, c > 0 ? "significant growth" : "significant shrinkage");
        else if (!jsonDoc) v = h("div", { class: "tip-verdict" }, "statistics loading…");
        else if (r && r.significant) v = h("div", { class: "tip-verdict" }, "its function changed significantly, but this call path did not move the same way");
        else if (r && (r.flat_q !== null || r.cum_q !== null)) v = h("div", { class: "tip-verdict" }, "within noise: not significant");
        else v = h("div", { class: "tip-verdict" }, "not tested (too small a share of the samples)");
        const scaled = normalized && jsonDoc ? ` (×${jsonDoc.base_scale.toPrecision(3)})` : "";
        return h("div", { class: "fg-tip diff-tip" },
            h("div", { class: "tip-title" }, name),
            h("table", null,
                h("tr", null, h("th"), h("th", null, "total"), h("th", null, "of its side"), h("th", null, "self")),
                row("Base" + scaled, m.baseTotal[id], m.baseSelf[id], sh.base),
                row("New", m.value[id], m.newSelf[id], sh.new),
                h("tr", null, h("th", null, "Change"), h("td", { colspan: 3 }, normalized
                    ? `${formatChange(sh.rel)} of its share`
                    : `${formatChange(sh.valueRel)} of its value, ${formatChange(sh.rel)} of its share`))),
            test.length ? h("div", { class: "tip-sub" }, "The function's test (change of its mean, 95% interval):") : null,
            test.length ? h("table", { class: "tip-test" }, test) : null,
            r && mu && !m.plain ? h("div", { class: "tip-sub" }, `Its means, base → new (${metricView(mu).title}):`) : null,
            r && mu && !m.plain ? h("table", { class: "tip-test", dataset: { testid: "tip-means" } }, mean(false), mean(true)) : null,
            v,
            h("div", { class: "tip-hint" }, "click to zoom, right-click for more"));
    }

    // ---- drawing ----
    function draw(st, fresh) {
        const on = st.sides === "1";
        el.mainHost.hidden = on;
        el.sideBox.hidden = !on;
        el.legend.hidden = on;
        el.graph.dataset.widths = st.widths;
        el.graph.dataset.sides = on ? "1" : "";
        if (!tree) {
            main.setModel(null, st);
            sides.base.setModel(null, st);
            sides.new.setModel(null, st);
            replace(el.note, "");
            return;
        }
        const oneScale = !normalized;
        if (on) {
            if (fresh) {
                sides.base.setModel(layoutDiff(tree, "base", { oneScale }), st);
                sides.new.setModel(layoutDiff(tree, "new", { oneScale }), st);
            } else {
                sides.base.apply(st);
                sides.new.apply(st);
            }
            el.graph.dataset.nodes = String(sides.new.model.n);
            renderNoteParts(null, truncated(tree, st.maxNodes) ? h("span", { class: "hint" },
                `The ${tree.n} heaviest frames of both sides together, lighter ones merged into their callers.`) : null);
            return;
        }
        if (fresh) main.setModel(flagged(layoutDiff(tree, st.widths, { oneScale }), st), st);
        else main.apply(st);
        el.graph.dataset.nodes = String(main.model.n);
        renderNote(st, main.model);
    }

    // how the model's frames are coloured: the plain diff, or one side alone
    function flagged(m, st) {
        m.plain = isPlain(st);
        m.oneSided = !!(jsonDoc && (jsonDoc.empty === "base" || jsonDoc.empty === "new"));
        return m;
    }

    function renderNote(st, m) {
        const cut = truncated(tree, st.maxNodes) ? h("span", { class: "hint" },
            `The ${tree.n} heaviest frames of both sides together, lighter ones merged into their callers ` +
            "(focus on a function for its whole subtree). ") : null;
        renderNoteParts(m, cut);
    }

    function renderNoteParts(m, cut) {
        const hid = hiddenFrames(m);
        // one scale: say what the empty part of the width is
        const own = m && (m.widths === "base" ? m.baseRoot : m.newRoot);
        const scale = m && m.span > m.rootTotal && m.widths !== "both" ? h("span", { class: "hint scale-note" },
            `Amounts on one scale: the width is the ${m.widths === "base" ? "new" : "base"} side's total; ` +
            `the ${m.widths} side's is ${formatPercent(own, m.span)} of it. `) : null;
        if (!hid) {
            replace(el.note, cut, scale);
            return;
        }
        const what = m.widths === "base" ? "new on the new side" : "that vanished";
        replace(el.note, cut, scale, h("span", { class: "hint" },
            `${hid.count} call path${hid.count === 1 ? "" : "s"} ${what} (${formatPercent(hid.share, 1)} of the ` +
            `${m.widths === "base" ? "new" : "base"} side) ${hid.count === 1 ? "is" : "are"} not drawn at the ` +
            `${m.widths} side's widths: `),
        h("button", { type: "button", class: "small", onclick: () => store.set({ widths: "both" }) }, "Both sides' widths"),
        " ",
        h("button", { type: "button", class: "small", onclick: () => store.set({ sides: "1" }) }, "Side by side"));
    }

    // ---- fetching ----
    function showEmpty(st) {
        const b = diffBase(st);
        const none = [];
        if (!rawBaseTotal(flameDoc)) none.push(["base", b.query, b.from, b.until]);
        if (!flameDoc.total) none.push(["new", st.query, st.from, st.until]);
        if (!none.length) {
            message(el.graphMsg, null);
            message(el.tableMsg, null);
            return;
        }
        const t = ctx.types().find((x) => x.id === st.type);
        const text = () => [h("b", null, none.map(([side, q, f, u]) => `The ${side} side has no ${t ? t.sample_type : st.type} ` +
            `samples for ${q || "{}"} in ${rangeText(f, u)}.`).join(" ")),
        h("p", null, "Pick another range or selector for that side (the base above, the new side in the query bar).")];
        // one empty side still draws the other at the widths that have values
        const drawn = st.sides === "1" || (st.widths === "new" ? flameDoc.total : st.widths === "base"
            ? rawBaseTotal(flameDoc) : true);
        message(el.graphMsg, drawn && none.length < 2 ? null : "empty", drawn && none.length < 2 ? null : text());
        message(el.tableMsg, none.length < 2 ? null : "empty", none.length < 2 ? null : text());
        // the summary says the server's words (which side, which range) when it gave them
        if (drawn && none.length < 2 && !(jsonDoc && jsonDoc.empty))
            replace(el.note, h("span", { class: "warn-text" }, text()[0].textContent));
    }

    // the server names the parameter of a 400: a base side's error belongs to the base's inputs
    const loader = createLoader({
        name: "diff", busy: el.body, stamp: el.graph, messages: [el.graphMsg, el.tableMsg],
        queryErrors: (m) => {
            if (/^'base_/.test(m)) baseError(m);
            else ctx.onQueryError(m);
            if (!m) baseError("");
        },
    });

    // Both answers of the diff (flame and json), asked together.
    async function fetchDiff(st, signal) {
        let norm = normalizeOf(st, guess);
        for (let attempt = 0; ; attempt++) {
            // the default normalisation follows the totals, which come with the answers:
            // a wrong guess stops both requests and asks again with the rule's answer
            const check = (doc) => {
                if (st.normalize === "" && attempt === 0) {
                    const a = autoNormalize(rawBaseTotal(doc), doc.total);
                    if (a !== norm) throw new Redo(a);
                }
                return doc;
            };
            const run = new AbortController();
            const stop = () => run.abort();
            signal.addEventListener("abort", stop);
            try {
                const opts = { signal: run.signal };
                const docs = await Promise.all([
                    api.json("api/v1/diff", diffParams(st, "flame", norm), opts).then(check),
                    api.json("api/v1/diff", diffParams(st, "json", norm), opts).then(check),
                ]);
                return { docs, norm };
            } catch (err) {
                if (!(err instanceof Redo)) throw err;
                run.abort();
                norm = guess = err.normalize;
            } finally {
                signal.removeEventListener("abort", stop);
            }
        }
    }

    function load(st) {
        loader.run((signal) => fetchDiff(st, signal), ({ docs, norm }) => {
            [flameDoc, jsonDoc] = docs;
            if (st.normalize === "") guess = norm;
            normalized = !!flameDoc.normalized;
            tree = modelFromJSON(flameDoc);
            rows = rowsByName(jsonDoc);
            table.setData(jsonDoc);
            table.setSelected(exactName(st.search));
            message(el.graphMsg, null);
            message(el.tableMsg, null);
            draw(st, true);
            showEmpty(st);
            replace(el.legend, legend(st, jsonDoc));
            el.graph.dataset.normalized = normalized ? "1" : "0";
            el.graph.dataset.method = jsonDoc.method || "";
            renderSummary(state);
            renderControls(state);
        }, {
            fail: () => {
                tree = flameDoc = jsonDoc = null;
                rows = new Map();
                draw(st, true);
                table.setData(null);
                renderSummary(state);
                renderControls(state);
            },
        });
    }

    // ---- state -> view ----
    function renderControls(st) {
        const on = markSegment;
        const norm = normalizeOf(st, normalized);
        on(el.normalize, norm === null ? "" : norm ? "1" : "0");
        el.normHint.textContent = st.normalize === "" ? "(default)" : "";
        el.normHint.title = "normalised by default when the two totals differ by more than 10%";
        on(el.mode, st.diffmode);
        on(el.widths, st.widths);
        on(el.sides, st.sides);
        on(el.layout, st.layout);
        on(el.orient, st.orient);
        el.widths.hidden = st.sides === "1";
        el.q.value = ["0.01", "0.1"].includes(st.q) ? st.q : "";
        el.body.className = "diff-body layout-" + st.layout + (el.body.classList.contains("loading") ? " loading" : "");
        if (document.activeElement !== el.search) el.search.value = st.search;
        renderFilters(el.filters, st, store);
        const p = diffParams(st, "tsv", norm === null ? guess : norm);
        // files named after what they compare: diff_<new side's service, type, range>
        for (const a of el.exports.querySelectorAll("a")) {
            a.href = apiUrl("api/v1/diff", { ...p, format: a.dataset.format });
            a.download = "diff_" + exportFileName(p, a.dataset.format === "tsv" ? "tsv" : "folded");
        }
    }

    function update(st, prev, how) {
        state = st;
        const refresh = how === "refresh" || !prev;
        if (prev && changed(prev, st, SIDE_KEYS)) el.labelPicker.hidden = true;
        renderControls(st);
        renderSummary(st);
        if (!st.type) {
            tree = null;
            draw(st, true);
            const none = [h("b", null, "No profiles stored yet."), h("p", null,
                "Push some to /ingest, then compare two time ranges or two label values here.")];
            message(el.graphMsg, "empty", none);
            message(el.tableMsg, "empty", none.map((n) => n.cloneNode(true)));
            return;
        }
        if (refresh || changed(prev, st, FETCH_KEYS)) {
            load(st);
            return;
        }
        const fresh = changed(prev, st, ["widths", "sides"]);
        if (fresh || changed(prev, st, ["zoom", "search", "orient"])) draw(st, fresh);
        if (changed(prev, st, ["search"])) table.setSelected(exactName(st.search));
    }

    const onKey = flameKeys(store, el.search, () => state);
    document.addEventListener("keydown", onKey);

    return {
        update,
        element: el.view,
        // the panels, for tests: the diff graph, and the two sides' graphs
        flame: main,
        sides,
        table,
        data: () => ({ flame: flameDoc, json: jsonDoc, normalized }),
        destroy() {
            document.removeEventListener("keydown", onKey);
            loader.abort();
            main.close();
            el.view.remove();
        },
    };
}

// The colour key: what red, blue, grey and the one-sided colours say, with the strengths
// drawn; the plain diff's says that nothing was tested.
function legend(st, doc) {
    const sw = (color, text, key) => h("span", { class: "lg-item", dataset: key ? { key } : undefined },
        h("i", { style: { background: color } }), text);
    if (doc && (doc.empty === "base" || doc.empty === "new"))
        return [h("span", { class: "hint" }, "colours name functions: one side has no profiles, nothing is compared")];
    const plain = isPlain(st);
    return [
        sw(diffColor(-1, 1, 0.25), "−75%"), sw(diffColor(-1, 1, 0.8), "−20%"),
        h("span", { class: "lg-label" }, "shrank"),
        sw(diffColor(0, 1, 1), plain ? "unchanged" : "within noise / not tested"),
        h("span", { class: "lg-label" }, "grew"),
        sw(diffColor(1, 1, 1.25), "+25%"), sw(diffColor(1, 1, 4), "+300%"),
        sw(NEW_COLOR, "new (not in the base)", "new"), sw(GONE_COLOR, "gone (not in the new side)", "gone"),
        h("span", { class: "hint" }, plain ? " every change, however small: nothing tested (the plain diff)"
            : " significant changes only (q below the level); the shade: how far the frame's share moved; " +
              "paths on one side only: news whatever the spread"),
    ];
}
