// single.mjs - single stored profiles: a point on the timeline lists the profiles behind it
// (GET /api/v1/profiles) and opens one; the profile view (view=profile) shows that one
// profile (GET /api/v1/profile): its time, labels, flame graph and top table.
// seriesSelector, sameLabels and profileSearch are pure (tests/ui/single.test.mjs).

import { h, replace, showMenu } from "./dom.mjs";
import { formatDateTime, formatValue } from "./format.mjs";
import { createProfileArea } from "./profile-area.mjs";
import { quoteValue, withMatcher } from "./selector.mjs";
import { changed } from "./state.mjs";

// The selector of exactly these labels' values: {a="x", b="y"} ({} for none).
export function seriesSelector(labels) {
    const ks = Object.keys(labels || {}).filter((k) => k).sort();
    return "{" + ks.map((k) => k + "=" + quoteValue(labels[k])).join(", ") + "}";
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
    const ps = (list.profiles || []).filter((p) => !lq.exact || sameLabels(p.labels, lq.exact));
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
    if (!items.length) items.push({ label: "No profile starts in this step", action: () => {} });
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
    const head = h("div", { class: "panel-head profile-head", dataset: { testid: "profile-info" } });
    const area = createProfileArea(ctx, {
        detail: true,
        emptyText: () => [h("b", null, "This profile has no samples of this type.")],
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
        params: (st) => ({ query: st.series, type: st.type, from: String(+st.time / 1e9),
                           until: String(+st.time / 1e9 + 1e-9) }),
        load: async (st, signal) => {
            const doc = await api.json("api/v1/profile", { ...params(st), maxNodes: st.maxNodes,
                                                           top: 1 }, { signal });
            renderHead(st, doc);
            return doc;
        },
    };

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
