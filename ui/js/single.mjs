// single.mjs - single stored profiles: a point on the timeline lists the profiles behind it
// (GET /api/v1/profiles) and opens one; the profile view (view=profile) shows that one
// profile (GET /api/v1/profile): its time, labels, flame graph, top table and exports.
// seriesSelector, exactSelector, sameLabels, lineQuery, profilePatch and profileSpan are
// pure (tests/ui/single.test.mjs).

import { h, replace, showMenu } from "./dom.mjs";
import { formatDateTime, formatValue } from "./format.mjs";
import { overTimePatch } from "./api.mjs";
import { createProfileArea } from "./profile-area.mjs";
import { parseMatchers, quoteValue, withMatcher } from "./selector.mjs";
import { changed } from "./state.mjs";

// The selector of exactly these labels' values: {a="x", b="y"} ({} for none).
export function seriesSelector(labels) {
    const ks = Object.keys(labels || {}).filter((k) => k).sort();
    return "{" + ks.map((k) => k + "=" + quoteValue(labels[k])).join(", ") + "}";
}

// The selector of exactly one series: its labels, and every other label name of names
// absent (=""): {a="x"} alone also selects {a="x", b="y"}.
export function exactSelector(labels, names) {
    const others = [...new Set(names || [])].filter((n) => n && !(n in (labels || {}))).sort();
    const own = seriesSelector(labels);
    if (!others.length) return own;
    const absent = others.map((n) => n + '=""').join(", ");
    return own === "{}" ? "{" + absent + "}" : own.slice(0, -1) + ", " + absent + "}";
}

// The labels of a series' canonical text ({a="x",b="y"}), null when it is not one.
export function labelsOf(series) {
    const ms = parseMatchers(series);
    if (!ms || ms.some((m) => m.op !== "=")) return null;
    return Object.fromEntries(ms.map((m) => [m.name, m.value]));
}

// The range of render that holds exactly one stored profile starting at timeNs (text):
// [t, t + 1 ns) for a profile that has one time; for one whose samples keep their own
// times (timed), up to the start of the series' next profile (nextNs, text), else an hour
// on (how far from its start the store looks for a profile's samples).
export function profileSpan(timeNs, timed, nextNs) {
    const t = BigInt(timeNs);
    if (!timed) return { from: String(t), until: String(t + 1n) };
    return { from: String(t), until: nextNs ? String(nextNs) : String(t + 3600n * 1000000000n) };
}

export function sameLabels(a, b) {
    const ka = Object.keys(a || {}).sort(), kb = Object.keys(b || {}).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

// The selector and filter for the profiles of a timeline line: a line per series has the
// series' labels (the profiles of exactly that series); a line per value of group_by has
// that label (the state's query narrowed to the value; every series of it).
export function lineQuery(state, line) {
    if (state.group_by) {
        const v = line.labels[state.group_by] || "";
        return { query: withMatcher(state.query, state.group_by, v), exact: null };
    }
    return { query: seriesSelector(line.labels), exact: line.labels };
}

// The state patch that opens one listed profile in the profile view.
export function profilePatch(p) {
    return { view: "profile", series: p.series, time: p.time_ns, zoom: "", sandwich: "",
             search: "", sel_from: "", sel_until: "" };
}

// The profiles behind a timeline point (bucket k of line): opened at once when there is
// one, else listed in a menu at the pointer.
export async function openProfileAt(ctx, state, timeline, line, k, e) {
    const d = timeline.data;
    const from = d.ts[k], until = d.ts[k] + d.step;
    const lq = lineQuery(state, line);
    let list;
    try {
        list = await ctx.api.json("api/v1/profiles", { query: lq.query, type: state.type,
                                                        from, until, limit: 50 });
    } catch (err) {
        showMenu([{ label: "Cannot list the profiles: " + err.message, action: () => {} }],
                 e.clientX, e.clientY);
        return;
    }
    const mine = (l) => (l.profiles || []).filter((p) => !lq.exact || sameLabels(p.labels, lq.exact));
    let ps = mine(list);
    if (!ps.length) {
        // a step that a longer profile covers (the timeline spreads a profile over its
        // duration): those that started up to ten minutes before and still ran in it
        try {
            list = await ctx.api.json("api/v1/profiles", { query: lq.query, type: state.type,
                                                            from: from - 600, until: from, limit: 50 });
            ps = mine(list).filter((p) => p.time + p.duration > from);
        } catch (err) {
            ps = [];
        }
    }
    if (ps.length === 1) {
        ctx.store.set(profilePatch(ps[0]));
        return;
    }
    const t = ctx.types().find((x) => x.id === state.type);
    const unit = t ? t.unit : "";
    const items = ps.map((p) => ({
        label: `${formatDateTime(p.time)} · ${formatValue(p.total, unit)}` +
            (lq.exact ? "" : ` · ${seriesName(p.labels, line.labels)}`),
        title: p.series,
        action: () => ctx.store.set(profilePatch(p)),
    }));
    if (!items.length) items.push({ label: "No profile covers this step", action: () => {} });
    if (list.truncated) items.push({ label: "… more: narrow the range", action: () => {} });
    showMenu(items, e.clientX, e.clientY);
}

function seriesName(labels, common) {
    return Object.keys(labels).filter((k) => !(k in common)).sort()
        .map((k) => `${k}=${labels[k]}`).join(", ") || "{}";
}

// ---- the profile view ----

const KEYS = ["series", "time", "type", "focus", "ignore", "hide", "maxNodes"];
// Back to explore: the state kept its query and range.
const BACK = { view: "explore", series: "", time: "", zoom: "", sandwich: "", search: "" };

export function createProfileView(root, ctx) {
    const { store, api } = ctx;
    let state = null;
    // the render parameters of the profile shown, for the exports: {key, params | null}
    let exact = null;
    const keyOf = (st) => [st.series, st.time, st.type].join("\n");
    const head = h("div", { class: "panel-head profile-head", dataset: { testid: "profile-info" } });
    const area = createProfileArea(ctx, {
        detail: true,
        exports: true,
        exportParams: (st) => exact && exact.key === keyOf(st) && exact.params
            ? { ...exact.params, type: st.type, focus: st.focus, ignore: st.ignore, hide: st.hide } : null,
        emptyText: () => [h("b", null, "This profile has no samples of this type.")],
        onOverTime: (name) => store.set(overTimePatch(state, name)),
        onSource: (name) => {
            const t = +state.time / 1e9;
            store.set({ view: "source", function: name, query: state.series, from: String(t),
                        until: String(t + 1), series: "", time: "" });
        },
    });
    const panel = h("section", { class: "panel single-panel" }, head);
    const view = h("div", { class: "view profile" }, panel, area.element);
    root.append(view);

    const params = (st) => ({ series: st.series, type: st.type, time: st.time,
                              focus: st.focus, ignore: st.ignore, hide: st.hide });
    const fetcher = {
        load: async (st, signal) => {
            const doc = await api.json("api/v1/profile", { ...params(st), maxNodes: st.maxNodes,
                                                           top: 1 }, { signal });
            renderHead(st, doc);
            return doc;
        },
        // a zoomed frame's subtree: the same profile with a focus on its function
        focused: (st, focus, signal) => api.json("api/v1/profile", { ...params(st), focus,
                                                                     maxNodes: st.maxNodes }, { signal }),
    };

    // The exports go through render (GET /api/v1/profile answers JSON only): the series
    // by exactly its labels, the range of its one profile.
    async function resolveExports(st) {
        const key = keyOf(st);
        if (exact && exact.key === key) return;
        const mine = (exact = { key, params: null });
        area.updateExports();
        const labels = labelsOf(st.series);
        if (!labels || !/^\d+$/.test(st.time)) return;
        try {
            const query = exactSelector(labels, await ctx.labels());
            const one = profileSpan(st.time, false);
            const list = await api.json("api/v1/profiles", { query, type: st.type, ...one, limit: 1 });
            const p = (list.profiles || [])[0];
            let span = one;
            if (p && p.timed) {
                const far = profileSpan(st.time, true);
                const next = await api.json("api/v1/profiles", { query, type: st.type, from: one.until,
                                                                 until: far.until, limit: 1 });
                span = profileSpan(st.time, true, ((next.profiles || [])[0] || {}).time_ns);
            }
            if (exact !== mine) return;
            mine.params = { query, ...span };
            area.updateExports();
        } catch { /* the links stay hidden; the view's own request says what is wrong */ }
    }

    function renderHead(st, doc) {
        const p = doc && doc.profile;
        const labels = p ? p.labels : {};
        replace(head, h("h2", null, "Profile"),
            h("span", { class: "profile-time", dataset: { testid: "profile-time" } },
                p ? formatDateTime(p.time) : "…"),
            h("span", { class: "profile-labels" }, Object.keys(labels).sort().map((k) =>
                h("span", { class: "chip label-chip" }, h("b", null, k), "=", labels[k]))),
            doc ? h("span", { class: "profile-total" }, "total ",
                h("b", null, formatValue(doc.total, doc.unit))) : null,
            h("button", { type: "button", class: "small", dataset: { testid: "profile-back" },
                          onclick: () => store.set(BACK) }, "Back to the time range"));
    }

    function update(st, prev, how) {
        state = st;
        const reload = how === "refresh" || !prev || changed(prev, st, KEYS);
        area.apply(st, reload ? null : prev);
        if (!st.series || !st.time) {
            renderHead(st, null);
            area.clear([h("b", null, "No profile chosen."), h("p", null,
                "Click a point on the explore view's timeline to open the profile behind it.")]);
            return;
        }
        if (reload) {
            renderHead(st, null);
            area.load(st, fetcher);
        }
        resolveExports(st);
    }

    return {
        update,
        element: view,
        flame: area.flame,
        destroy() {
            area.destroy();
            view.remove();
        },
    };
}
