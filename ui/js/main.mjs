// main.mjs - the page: state from the URL, where it opens without a query, the query bar,
// the views (explore, the diff view, changes over time, heatmap, call graph, source, a
// single profile, the scrape targets), auto-refresh, upload, the API token.

import { createApi } from "./api.mjs";
import { h, replace } from "./dom.mjs";
import { createCallgraphView } from "./callgraph-view.mjs";
import { createChangesView } from "./changes-view.mjs";
import { compareWithPatch } from "./diff-model.mjs";
import { createDiffView } from "./diff-view.mjs";
import { createExplore } from "./explore.mjs";
import { createHeatmapView } from "./heatmap-view.mjs";
import { landingQuery } from "./landing.mjs";
import { createProfileView } from "./single.mjs";
import { createSourceView } from "./source-view.mjs";
import { QueryBar } from "./querybar.mjs";
import { createStore, DEFAULTS } from "./state.mjs";
import { createTargets } from "./targets.mjs";
import { setupUpload, typeCandidates } from "./upload.mjs";

// The views by URL name (state.view). Each create(root, ctx) returns {update(state, prev,
// how), destroy()}.
// tab: false for views reached from another one (a function's source, one profile);
// open(state): the patch its tab sets (default: just the view);
// landing: a URL without a query opens it on one service (landing.mjs);
// auto: what the auto-refresh asks of it: "auto" (it reloads without loading marks),
// "refresh" (as the Refresh button), none (nothing new to show: one stored profile; the
// targets page refreshes itself).
const VIEWS = {
    explore: { label: "Explore", create: createExplore, landing: true, auto: "auto" },
    diff: { label: "Compare", create: createDiffView, auto: "refresh",
            // without a base yet, what explore shows against the period before it
            open: (s) => (s.base_query || s.base_from || s.base_until ? { view: "diff" } : compareWithPatch(s)) },
    // every service's changes unless the query names some
    changes: { label: "Changes", create: createChangesView, auto: "refresh" },
    heatmap: { label: "Heatmap", create: createHeatmapView, landing: true, auto: "auto" },
    callgraph: { label: "Call graph", create: createCallgraphView, landing: true, auto: "refresh" },
    source: { label: "Source", create: createSourceView, tab: false, auto: "refresh" },
    profile: { label: "Profile", create: createProfileView, tab: false },
    targets: { label: "Targets", create: createTargets },
};
// The auto-refresh's periods (state.refresh).
const AUTO_MS = { "10s": 10000, "30s": 30000, "1m": 60000 };

const $ = (id) => document.getElementById(id);
const store = createStore(window);
const api = createApi({ storage: safeStorage(), doc: document, onAuth: () => askToken(true) });
let types = [];
let labelsPromise = null;
let current = null; // {name, view}
let shownState = null; // the state the current view was last brought in line with

function safeStorage() {
    try {
        return window.localStorage;
    } catch {
        return null;
    }
}

// ---- status line (upload progress, errors that belong to no panel) ----
let statusTimer = 0;
function status(msg, kind = "ok") {
    const el = $("status");
    clearTimeout(statusTimer);
    if (!msg) {
        el.hidden = true;
        return;
    }
    el.className = "status " + kind;
    replace(el, msg, h("button", { type: "button", class: "close", "aria-label": "dismiss",
                                   onclick: () => { el.hidden = true; } }, "×"));
    el.hidden = false;
    if (kind === "ok") statusTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

// ---- token ----
function askToken(needed) {
    const box = $("auth");
    if (needed && !box.hidden) return; // already asking: every failed request lands here
    const input = h("input", { type: "password", id: "token-input", placeholder: "API token",
                               autocomplete: "current-password", "aria-label": "API token" });
    const save = (e) => {
        e.preventDefault();
        api.setToken(input.value.trim());
        box.hidden = true;
        reload();
    };
    replace(box, h("form", { class: "auth-form", onsubmit: save },
        h("span", null, needed ? "This server needs an API token (auth.token_file in its config). "
            : "The API token sent as Authorization: Bearer, kept in this browser. "),
        input, h("button", { type: "submit" }, "Save"),
        api.token() ? h("button", { type: "button", onclick: () => {
            api.setToken("");
            box.hidden = true;
            reload();
        } }, "Forget") : null,
        h("button", { type: "button", class: "close", "aria-label": "close",
                      onclick: () => { box.hidden = true; } }, "×")));
    box.hidden = false;
    input.focus();
}

// ---- data shared by the views ----
async function loadTypes() {
    types = await api.json("api/v1/profile_types");
    qb.setTypes(types);
    qb.loadServices();
    return types;
}

function labels() {
    if (!labelsPromise) {
        labelsPromise = api.json("api/v1/labels").catch((e) => {
            labelsPromise = null;
            throw e;
        });
    }
    return labelsPromise;
}

function defaultType(ts) {
    const profiles = [...new Set(ts.map((t) => t.profile))];
    const p = profiles.includes("cpu") ? "cpu" : profiles.includes("process_cpu") ? "process_cpu"
        : profiles[0];
    const c = typeCandidates(ts, p);
    return c.length ? c[0].id : "";
}

// ---- views ----
function renderNav(state) {
    const shown = Object.entries(VIEWS).filter(([name, v]) => v.tab !== false || state.view === name);
    replace($("views"), shown.map(([name, v]) => h("button", {
        type: "button", class: "tab" + (state.view === name ? " on" : ""),
        "aria-current": state.view === name ? "page" : null,
        onclick: () => store.set(v.open && state.view !== name ? v.open(state) : { view: name }),
    }, v.label)));
}

function showView(state, how) {
    const name = VIEWS[state.view] ? state.view : "explore";
    let prev = shownState;
    shownState = state;
    if (!current || current.name !== name) {
        if (current) current.view.destroy();
        current = { name, view: VIEWS[name].create($("main"), {
            store, api, types: () => types, labels, onQueryError: (m) => qb.setError(m),
        }) };
        prev = null;
    }
    document.body.dataset.view = name;
    const note = $("view-note");
    note.hidden = name === state.view;
    if (!note.hidden) note.textContent = `The "${state.view}" view is not part of this build; showing explore.`;
    current.view.update(state, prev, how);
}

function title(state) {
    const bits = [state.type, state.query].filter(Boolean).join(" ");
    document.title = bits ? `${bits} · scorch` : "scorch";
}

// ---- auto-refresh: the view's data again every few seconds, counted from the last
// change; not while the page is hidden or a button is held (a drag on the timeline) ----
let autoTimer = 0, buttonsDown = 0;
window.addEventListener("pointerdown", (e) => { buttonsDown = e.buttons; }, true);
window.addEventListener("pointerup", (e) => { buttonsDown = e.buttons; }, true);
window.addEventListener("blur", () => { buttonsDown = 0; });

function armAutoRefresh(state) {
    clearTimeout(autoTimer);
    const v = VIEWS[state.view] || VIEWS.explore, ms = AUTO_MS[state.refresh];
    if (!ms || !v.auto) return;
    autoTimer = setTimeout(() => {
        if (document.hidden || buttonsDown) {
            armAutoRefresh(store.get());
            return;
        }
        // for tests and the curious: how many times it ran
        document.body.dataset.autoRefreshes = String(+(document.body.dataset.autoRefreshes || 0) + 1);
        store.refresh(v.auto);
    }, ms);
}

// ---- landing: a view of one query without a query opens on the busiest service ----
let landing = null; // {key (type and range), done}

function needsLanding(state) {
    const v = VIEWS[state.view] || VIEWS.explore;
    return !!(v.landing && !state.query && state.type);
}

// True while the state waits for its service; the view is shown once it is known (or
// known to be none: then as the empty selector shows it).
function awaitLanding(state) {
    if (!needsLanding(state)) return false;
    const key = [state.type, state.from, state.until].join("\n");
    if (landing && landing.key === key) return !landing.done;
    const mine = (landing = { key, done: false });
    landingQuery(api, state).then((q) => {
        mine.done = true;
        const s = store.get();
        if (landing !== mine || !needsLanding(s)) return;
        if (q) store.set({ query: q }, { push: false });
        else render(s, null, "refresh");
    });
    return true;
}

// (the store's previous state is not the view's when a render waited for the landing:
// views compare with shownState)
function render(state, _prev, how) {
    qb.apply(state);
    renderNav(state);
    title(state);
    if (awaitLanding(state)) return;
    showView(state, how);
    armAutoRefresh(state);
}

async function reload() {
    labelsPromise = null;
    qb.forget();
    try {
        await loadTypes();
        status("");
    } catch (e) {
        if (e.status !== 401) status("Cannot list profile types: " + e.message, "error");
    }
    const s = store.get();
    if (!s.type && types.length) store.set({ type: defaultType(types) }, { push: false });
    else store.refresh();
}

// ---- start ----
const qb = new QueryBar($("querybar"), {
    api,
    onQuery: (text) => {
        qb.setError("");
        const q = text || "{}"; // run empty, it is every series (a URL without one opens on a service)
        if (q === store.get().query) store.refresh();
        else store.set({ query: q, sel_from: "", sel_until: "", zoom: "", sandwich: "" });
    },
    onType: (t) => store.set({ type: t, zoom: "", sandwich: "" }),
    onRange: (from, until) => store.set({ from, until, sel_from: "", sel_until: "" }),
    onRefresh: () => reload(),
    onAutoRefresh: (v) => store.set({ refresh: v }, { push: false }),
});
$("refresh").addEventListener("click", (e) => {
    e.preventDefault();
    const q = $("query-input").value.trim();
    if (q !== store.get().query) qb.submit();
    else reload();
});
$("token-button").addEventListener("click", () => askToken(false));
setupUpload($("upload"), $("drop"), { api, store, loadTypes, status });
store.subscribe(render);

(async () => {
    try {
        await loadTypes();
    } catch (e) {
        if (e.status !== 401) status("Cannot list profile types: " + e.message, "error");
    }
    const s = store.get();
    if (!s.type && types.length) {
        store.set({ type: defaultType(types) }, { push: false });
    } else {
        store.normalize();
        render(s, null, "refresh");
    }
})();

// the console handle (docs/ui.md): the store, the fetches, the current view
window.scorch = { store, api, DEFAULTS, get view() { return current && current.view; } };
