// changes-view.mjs - the Changes view (view=changes): what changed over the range beyond
// the noise between profiles (GET /api/v1/changes): per group (service_name by default,
// group_by) the functions with a step, a trend, or that are new or gone, the largest
// first, each with a sparkline of its value over time (the change time, the levels before
// and after, the group's label value changes marked), before -> after in the timeline's
// unit, the change with its 95% interval and its q-value; one click opens the diff of the
// two sides of the change, another the function over time in explore.

import { CHANGES_GROUP, changesParams } from "./api.mjs";
import {
    beforeAfter, changeText, findingDiffPatch, findingOverTimePatch, findingQ, groupMarkers, groupText,
    KIND_TEXT, kindCounts, shownFindings, sparkGuides, sparkline, stepsWithValues,
} from "./changes-model.mjs";
import { rangeText } from "./diff-model.mjs";
import { h, hideTooltip, replace, showTooltip } from "./dom.mjs";
import { formatDateTime, formatDuration, formatMetric } from "./format.mjs";
import { createLoader, message } from "./loader.mjs";
import { changed, KINDS, kindList, kindText } from "./state.mjs";
import { bucketAt, markerText } from "./timeline-model.mjs";
import { MARKER_COLOR } from "./timeline.mjs";

// What a fetch depends on; the kind filter only shows or hides rows.
const FETCH_KEYS = ["type", "query", "from", "until", "group_by", "q"];
const SPARK = { w: 200, h: 38 };
const KIND_LABEL = { step: "Step", trend: "Trend", new: "New", gone: "Gone" };

export function createChangesView(root, ctx) {
    const { store, api } = ctx;
    let state = null, doc = null;

    const el = {};
    el.groupBy = h("select", { "aria-label": "group by", dataset: { testid: "changes-group-by" },
                               title: "the groups whose functions are tested: one per value of this label",
                               onchange: () => store.set({ group_by: el.groupBy.value === CHANGES_GROUP ? "" : el.groupBy.value }) },
    h("option", { value: CHANGES_GROUP }, "per " + CHANGES_GROUP));
    el.kinds = h("span", { class: "seg kinds", role: "group", "aria-label": "kinds shown", dataset: { testid: "changes-kinds" } });
    el.q = h("select", { class: "detail", "aria-label": "false discovery rate", dataset: { testid: "changes-q" },
                         title: "the false discovery rate: a change is listed when its q-value is below it",
                         onchange: () => store.set({ q: el.q.value }) },
    [["0.01", "q < 0.01"], ["", "q < 0.05"], ["0.1", "q < 0.1"]].map(([v, t]) => h("option", { value: v }, t)));
    el.summary = h("div", { class: "changes-summary", dataset: { testid: "changes-summary" } });
    el.markers = h("div", { class: "changes-markers", dataset: { testid: "changes-markers" } });
    el.tbody = h("tbody");
    el.table = h("table", { class: "top-table changes-table", dataset: { testid: "changes-table" } },
        h("thead", null, h("tr", null,
            h("th", { class: "name group" }, "Group"), h("th", { class: "name" }, "Function"),
            h("th", { class: "kind" }, "Kind"),
            h("th", { class: "spark", title: "the function's value per step over the range: the dashed lines are " +
                      "the levels before and after (a trend: the fitted line), the red line the change, the purple " +
                      "ones label value changes" }, "Over time"),
            h("th", { class: "num ba", title: "the means before and after the change (a trend: its fitted values at the " +
                      "range's ends), in the timeline's unit" }, "Before → after"),
            h("th", { class: "num chg", title: "the relative change with its 95% interval (a trend: the slope per hour)" }, "Change"),
            h("th", { class: "num q", title: "the q-value: the false discovery rate at which it is a change" }, "q"),
            h("th", { class: "act" }, ""))),
        el.tbody);
    el.msg = h("div", { class: "panel-msg", hidden: true });
    el.body = h("section", { class: "panel changes-body", dataset: { testid: "changes" } },
        h("div", { class: "panel-head" }, h("h2", null, "Changes"), el.groupBy, el.kinds, el.q,
            h("span", { class: "hint" }, "steps, trends, new and gone functions beyond the noise between profiles")),
        el.summary, el.markers,
        // the messages cover the list, not the controls above it (a level to raise)
        h("div", { class: "changes-list" }, h("div", { class: "changes-scroll" }, el.table), el.msg));
    el.view = h("div", { class: "view changes" }, el.body);
    root.append(el.view);

    // ---- the header ----
    function renderKinds(st) {
        const on = kindList(st.kind), counts = kindCounts(doc);
        replace(el.kinds, KINDS.map((k) => h("button", {
            type: "button", class: on.includes(k) && st.kind ? "on" : "", dataset: { value: k },
            "aria-pressed": String(on.includes(k) && !!st.kind), title: KIND_TEXT[k] + " (click again: every kind)",
            onclick: () => {
                // a click shows that kind alone, or adds it to the kinds picked; the last
                // one picked again shows every kind
                const cur = st.kind ? kindList(st.kind) : [];
                const next = cur.includes(k) ? cur.filter((x) => x !== k) : cur.concat(k);
                store.set({ kind: kindText(next) });
            },
        }, KIND_LABEL[k], doc ? h("span", { class: "count" }, " " + counts[k]) : null)));
    }

    async function fillGroupBy(st) {
        let names = [];
        try {
            names = await ctx.labels();
        } catch { /* the select keeps its default */ }
        const cur = st.group_by || CHANGES_GROUP;
        replace(el.groupBy, h("option", { value: CHANGES_GROUP }, "per " + CHANGES_GROUP),
            names.filter((n) => n !== "__name__" && n !== CHANGES_GROUP).map((n) => h("option", { value: n }, "per " + n)));
        if (!names.includes(cur) && cur !== CHANGES_GROUP) el.groupBy.append(h("option", { value: cur }, "per " + cur));
        el.groupBy.value = state.group_by || CHANGES_GROUP;
    }

    function renderSummary(st) {
        if (!doc) {
            replace(el.summary, "");
            replace(el.markers, "");
            return;
        }
        const shown = shownFindings(doc, st.kind).length, all = (doc.changes || []).length;
        const level = doc.level || st.q || "0.05";
        replace(el.summary,
            h("span", null, h("b", null, `${all} change${all === 1 ? "" : "s"}`),
                shown < all ? ` (${shown} shown)` : "", " in ", h("b", null, rangeText(st.from, st.until)), " for ",
                h("code", null, st.query || "{}"), `, per ${st.group_by || CHANGES_GROUP}, q < ${level}`,
                doc.step ? `, steps of ${formatDuration(doc.step)}` : "",
                doc.groups !== undefined ? ` · ${doc.groups} group${doc.groups === 1 ? "" : "s"}` +
                    (doc.functions ? `, ${doc.functions} function${doc.functions === 1 ? "" : "s"} tested` : "") : ""),
            doc.method ? h("span", { class: "hint", dataset: { testid: "changes-method" } }, " · method: ", doc.method) : null);
        const ms = doc.markers || [];
        replace(el.markers, ms.length ? [h("span", { class: "label" }, "Label changes:"),
            ms.slice(0, 20).map((m) => h("span", { class: "marker-chip" }, h("i", { style: { background: MARKER_COLOR } }),
                markerText(m, { withGroup: true, withDate: spansDays(st) }))),
            ms.length > 20 ? h("span", { class: "hint" }, `and ${ms.length - 20} more`) : null] : "");
    }

    const spansDays = (st) => {
        const ts = (doc && doc.changes && doc.changes[0] && doc.changes[0].timestamps) || [];
        return ts.length > 1 && ts[ts.length - 1] - ts[0] > 86400;
    };

    // ---- the findings ----
    function spark(f, markers) {
        const dpr = window.devicePixelRatio || 1;
        const cv = h("canvas", { class: "spark", width: SPARK.w * dpr, height: SPARK.h * dpr,
                                 style: { width: SPARK.w + "px", height: SPARK.h + "px" }, role: "img",
                                 "aria-label": `${f.function} over time` });
        const ts = f.timestamps || [], vs = f.values || [];
        const step = ts.length > 1 ? ts[1] - ts[0] : doc.step || 1;
        const sp = sparkline(vs, ts, step, SPARK.w, SPARK.h, { extra: [f.before, f.after] });
        const g = sparkGuides(f, sp);
        const c = cv.getContext("2d");
        c.setTransform(dpr, 0, 0, dpr, 0, 0);
        // label value changes of its group, then the change, the levels, the line
        c.lineWidth = 1;
        c.setLineDash([2, 2]);
        c.strokeStyle = MARKER_COLOR;
        for (const m of markers) {
            if (m.at < sp.t0 || m.at > sp.t1) continue;
            const x = Math.round(sp.x(m.at)) + 0.5;
            c.beginPath();
            c.moveTo(x, 0);
            c.lineTo(x, SPARK.h);
            c.stroke();
        }
        c.setLineDash([]);
        if (g.at !== null) {
            c.strokeStyle = "rgba(200, 50, 30, 0.8)";
            c.beginPath();
            c.moveTo(Math.round(g.at) + 0.5, 0);
            c.lineTo(Math.round(g.at) + 0.5, SPARK.h);
            c.stroke();
        }
        c.setLineDash([4, 3]);
        c.strokeStyle = "#888";
        for (const [x0, y0, x1, y1] of g.levels) {
            c.beginPath();
            c.moveTo(x0, y0);
            c.lineTo(x1, y1);
            c.stroke();
        }
        c.setLineDash([]);
        c.strokeStyle = c.fillStyle = "#1e78dc";
        c.lineWidth = 1.4;
        for (const run of sp.runs) {
            if (run.length === 1) {
                c.beginPath();
                c.arc(run[0][0], run[0][1], 1.8, 0, 2 * Math.PI);
                c.fill();
                continue;
            }
            c.beginPath();
            run.forEach(([x, y], i) => (i ? c.lineTo(x, y) : c.moveTo(x, y)));
            c.stroke();
        }
        cv.dataset.points = String(stepsWithValues(f));
        cv.dataset.at = g.at === null ? "" : g.at.toFixed(1);
        // hover: the step's time and value
        cv.addEventListener("mousemove", (e) => {
            const r = cv.getBoundingClientRect();
            const t = sp.t0 + ((e.clientX - r.left - 2) / (SPARK.w - 4)) * (sp.t1 - sp.t0);
            const k = bucketAt(ts, step, t);
            if (k < 0) return;
            const v = vs[k];
            showTooltip(h("div", { class: "tl-tip" },
                h("div", { class: "tip-title" }, formatDateTime(ts[k])),
                h("div", null, v === null || v === undefined ? h("span", { class: "tip-none" }, "no profile")
                    : h("b", null, formatMetric(v, f.unit)))), e.clientX, e.clientY);
        });
        cv.addEventListener("mouseleave", hideTooltip);
        return cv;
    }

    function row(f) {
        const ch = changeText(f);
        const when = Number.isFinite(f.at) ? formatDateTime(f.at, false) : "";
        return h("tr", { dataset: { testid: "change-row", function: f.function, kind: f.kind, group: groupText(f.labels) } },
            h("td", { class: "name group", title: groupText(f.labels) }, groupText(f.labels)),
            h("td", { class: "name", title: f.function }, h("code", null, f.function)),
            h("td", null, h("span", { class: "kind-badge k-" + f.kind, title: KIND_TEXT[f.kind] || f.kind }, f.kind),
                when && f.kind !== "trend" ? h("div", { class: "hint at" }, "at " + when.slice(11)) : null,
                // the label change beside a step (a deploy), as the server pairs them
                f.marker ? h("div", { class: "marker-at", dataset: { testid: "change-marker" },
                                      title: markerText(f.marker, { withDate: true }) },
                h("i", { style: { background: MARKER_COLOR } }), `${f.marker.label}=${f.marker.value}`) : null),
            h("td", { class: "spark" }, spark(f, groupMarkers(doc.markers, f.labels))),
            h("td", { class: "num", dataset: { testid: "before-after" } }, beforeAfter(f)),
            h("td", { class: "num change " + (f.kind === "gone" || (f.change_pct < 0) || f.slope_per_hour < 0 ? "down" : "up") },
                h("b", null, ch.change), ch.slope ? h("div", { class: "hint" }, ch.slope) : null,
                ch.interval ? h("div", { class: "hint interval" }, ch.interval) : null),
            h("td", { class: "num q" }, findingQ(f)),
            h("td", { class: "actions" },
                h("button", { type: "button", class: "small", dataset: { testid: "change-diff" },
                              title: f.kind === "trend" ? "the diff view: the range's first quarter against its last"
                                  : "the diff view: before the change against after it",
                              onclick: () => {
                                  const p = findingDiffPatch(f, state);
                                  if (p) store.set(p);
                              } }, "Compare"),
                h("button", { type: "button", class: "small", dataset: { testid: "change-over-time" },
                              title: "explore: this function's value over time under the timeline",
                              onclick: () => store.set(findingOverTimePatch(f, state)) }, "Over time")));
    }

    function render(st) {
        renderKinds(st);
        renderSummary(st);
        if (!doc) {
            replace(el.tbody, "");
            return;
        }
        const fs = shownFindings(doc, st.kind);
        replace(el.tbody, fs.map(row));
        if (fs.length) {
            message(el.msg, null);
            return;
        }
        const all = (doc.changes || []).length;
        message(el.msg, "empty", all ? [h("b", null, `None of the ${all} changes is of the kinds picked.`),
            h("p", null, "Pick another kind above.")]
            : doc.groups === 0 ? [h("b", null, `No ${st.type} profiles for `, h("code", null, st.query || "{}"),
                ` in ${rangeText(st.from, st.until)}: nothing to test.`),
            h("p", null, "Widen the time range, pick another profile type or loosen the label selector.")]
                : [h("b", null, `Nothing changed beyond noise in ${rangeText(st.from, st.until)} for `, h("code", null, st.query || "{}"), "."),
                h("p", null, `No function's value stepped, trended, appeared or vanished with q < ${st.q || "0.05"} ` +
                    `(per ${st.group_by || CHANGES_GROUP}). Widen the time range, or raise the level (q < 0.1).`)]);
    }

    const loader = createLoader({ name: "changes", busy: el.body, messages: [el.msg],
                                  queryErrors: ctx.onQueryError });

    function load(st) {
        loader.run((signal) => api.json("api/v1/changes", changesParams(st), { signal }), (d) => {
            doc = d;
            render(state);
        }, {
            fail: () => {
                doc = null;
                render(state);
            },
        });
    }

    function update(st, prev, how) {
        state = st;
        const refresh = how === "refresh" || how === "auto" || !prev;
        if (refresh && how !== "auto") fillGroupBy(st);
        else el.groupBy.value = st.group_by || CHANGES_GROUP;
        el.q.value = ["0.01", "0.1"].includes(st.q) ? st.q : "";
        if (!st.type) {
            doc = null;
            render(st);
            message(el.msg, "empty", [h("b", null, "No profiles stored yet."), h("p", null,
                "Push some to /ingest; what changes in them over time is listed here.")]);
            return;
        }
        if (refresh || changed(prev, st, FETCH_KEYS)) load(st);
        else if (changed(prev, st, ["kind"])) render(st);
    }

    return {
        update,
        element: el.view,
        data: () => doc,
        destroy() {
            loader.abort();
            hideTooltip();
            el.view.remove();
        },
    };
}
