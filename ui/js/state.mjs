// state.mjs - the view state, which lives in the URL's query string so that a link
// reproduces a view; parse/serialize are pure, createStore ties them to the history.

// Every parameter with its default. The first eight are the stable names links rely on; the rest
// are the UI's own. Order here is the order in the URL.
export const DEFAULTS = Object.freeze({
    view: "explore", // explore, diff, changes, heatmap, callgraph, source, profile, targets
    query: "", // label selector; "" = {} (every series)
    type: "", // profile type id, e.g. cpu:cpu; "" = chosen from /api/v1/profile_types
    from: "now-1h",
    until: "now",
    base_query: "", // comparisons: "" = query
    base_from: "",
    base_until: "",
    sel_from: "", // a range brushed on the timeline (unix seconds) that the profile shows
    sel_until: "",
    group_by: "", // timeline: one line per value of this label; changes: the groups
    fn: "", // explore: functions shown over time, exact names joined by "\n" (fn= repeated)
    fnvalue: "self", // functions over time: their "self" or "total" value
    kind: "", // changes: the kinds shown, comma-joined (step,trend,new,gone); "" = all
    focus: "", // pprof's filters (regexes), passed to the render API
    ignore: "",
    hide: "",
    search: "", // flame graph search (a regex, or text when it is not one)
    zoom: "", // the zoomed frame: its stack, names joined by ';' from the root's child
    sandwich: "", // a function shown with its callers and callees
    layout: "both", // both, flame, table
    orient: "icicle", // icicle (root on top) or flame (root at the bottom)
    sort: "-self", // top table: column, '-' for descending
    maxNodes: "", // flame graph node limit; "" = the server's default
    function: "", // source view: the function's exact name
    nodecount: "", // call graph: nodes drawn; "" = the server's default (80)
    rows: "", // heatmap: slices per second; "" = 50 (20 ms)
    row0: "", // heatmap: where offset 0 is drawn, "bottom" (FlameScope's) or "top"
    series: "", // single profile: its series' labels, as /api/v1/profiles lists them
    time: "", // single profile: its time in ns (time_ns of /api/v1/profiles)
    normalize: "", // diff: "1" shares compare, "0" amounts; "" = by the totals (diff-model.mjs)
    q: "", // diff: the false discovery rate; "" = the server's 0.05
    diffmode: "", // diff: "" noise-aware (only tested changes coloured), "plain" (no test)
    widths: "new", // diff: frames as wide as the new side's values, the base's, or both
    sides: "", // diff: "1" draws the two sides' flame graphs next to each other
    refresh: "", // auto-refresh: "10s", "30s", "1m"; "" = off
});

export const KEYS = Object.keys(DEFAULTS);

export const VIEWS = ["explore", "diff", "changes", "heatmap", "callgraph", "source", "profile",
    "targets"];
// The kinds of change /api/v1/changes finds, in the order the Changes view lists its filter.
export const KINDS = ["step", "trend", "new", "gone"];
// The most functions shown over time at once: one timeline request each.
export const MAX_FUNCTIONS = 8;
const CHOICES = {
    view: VIEWS,
    layout: ["both", "flame", "table"],
    orient: ["icicle", "flame"],
    row0: ["", "bottom", "top"],
    normalize: ["", "0", "1"],
    diffmode: ["", "plain"],
    widths: ["new", "base", "both"],
    sides: ["", "1"],
    refresh: ["", "10s", "30s", "1m"],
    fnvalue: ["self", "total"],
};
// Written even when at their default, so a URL says which range it shows.
const ALWAYS = new Set(["from", "until"]);

// The state of a query string ("?a=b&..." or "a=b"); unknown keys are dropped, bad
// choices fall back to the default.
export function parseState(search) {
    const p = new URLSearchParams(search || "");
    const s = { ...DEFAULTS };
    for (const k of KEYS) {
        const v = k === "fn" ? joinFunctions(p.getAll("fn")) : p.get(k);
        if (v === null) continue;
        if (CHOICES[k] && !CHOICES[k].includes(v)) continue;
        s[k] = v;
    }
    if (!/^-?(name|self|self_pct|total|total_pct)$/.test(s.sort)) s.sort = DEFAULTS.sort;
    for (const k of ["maxNodes", "nodecount", "rows", "time"])
        if (s[k] && !/^\d+$/.test(s[k])) s[k] = "";
    if (s.q && !(/^0?\.\d+$/.test(s.q) && +s.q > 0 && +s.q < 1)) s.q = "";
    s.kind = kindText(s.kind.split(","));
    return s;
}

// The query string of a state ("?view=..."): parameters at their default are left out,
// except from and until.
export function stateToSearch(state) {
    const p = new URLSearchParams();
    for (const k of KEYS) {
        const v = state[k] ?? DEFAULTS[k];
        if (v === DEFAULTS[k] && !ALWAYS.has(k)) continue;
        if (v === "" && ALWAYS.has(k)) continue;
        if (k === "fn") for (const name of functionList(v)) p.append(k, name);
        else p.set(k, v);
    }
    const q = p.toString();
    // braces, quotes and commas of selectors stay readable in the address bar
    return q ? "?" + q.replace(/%7B/g, "{").replace(/%7D/g, "}").replace(/%2C/g, ",")
        .replace(/%3A/g, ":") : "";
}

// ---- functions over time (fn) and kinds of change (kind) ----
// A function name may hold any character but a newline (commas in C++ templates and Go
// generics, '&' and '=' in operators): the URL repeats fn= once per name, and the state
// joins them with "\n" so that it stays a string that compares with ===.

// The names of a state's fn: ["main.burn", ...], in the order they were pinned.
export function functionList(fn) {
    return String(fn || "").split("\n").filter((x) => x !== "");
}

// names as a state's fn: empty names and repeats dropped, at most MAX_FUNCTIONS kept.
export function joinFunctions(names) {
    const out = [];
    for (const n of names) {
        const x = String(n).replace(/[\r\n]+/g, " ");
        if (x.trim() && !out.includes(x) && out.length < MAX_FUNCTIONS) out.push(x);
    }
    return out.join("\n");
}

// fn with name pinned (at the end; already there: unchanged). Past MAX_FUNCTIONS the
// oldest goes.
export function addFunction(fn, name) {
    const names = functionList(fn);
    if (names.includes(name)) return joinFunctions(names);
    names.push(name);
    return joinFunctions(names.slice(-MAX_FUNCTIONS));
}

// fn without name.
export function removeFunction(fn, name) {
    return joinFunctions(functionList(fn).filter((n) => n !== name));
}

// The kinds of a state's kind: all of them for "".
export function kindList(kind) {
    const ks = String(kind || "").split(",").filter((k) => KINDS.includes(k));
    return ks.length ? KINDS.filter((k) => ks.includes(k)) : KINDS.slice();
}

// kinds as a state's kind: in KINDS' order, unknown ones dropped, "" for all (or none:
// an empty filter would show nothing, which no one asks for).
export function kindText(kinds) {
    const ks = KINDS.filter((k) => kinds.includes(k));
    return ks.length === KINDS.length ? "" : ks.join(",");
}

// True when the two states differ in one of keys.
export function changed(a, b, keys) {
    return keys.some((k) => (a ? a[k] : undefined) !== (b ? b[k] : undefined));
}

// The comparison side of a state (base_query defaults to query).
export function baseOf(state) {
    return {
        query: state.base_query || state.query,
        from: state.base_from || state.from,
        until: state.base_until || state.until,
    };
}

// The store: the current state, changes that push or replace a history entry, and
// subscribers called with (state, previous, how) after every change, including
// back/forward (how = "pop") and refreshes (how = "refresh", same state, new data; "auto"
// for the auto-refresh's, which views that know it load without their loading marks).
export function createStore(win) {
    let state = parseState(win.location.search);
    const subs = [];
    const notify = (prev, how) => {
        for (const f of subs.slice()) f(state, prev, how);
    };
    const write = (push) => {
        const url = win.location.pathname + stateToSearch(state) + win.location.hash;
        if (push) win.history.pushState(null, "", url);
        else win.history.replaceState(null, "", url);
    };
    win.addEventListener("popstate", () => {
        const prev = state;
        state = parseState(win.location.search);
        notify(prev, "pop");
    });
    return {
        get: () => state,
        // patch: the keys to change; opts.push (default true) adds a history entry
        set(patch, opts = {}) {
            const prev = state;
            const next = { ...state, ...patch };
            if (!changed(prev, next, KEYS)) return;
            state = next;
            write(opts.push !== false);
            notify(prev, opts.push !== false ? "push" : "replace");
        },
        refresh(how = "refresh") {
            notify(state, how);
        },
        subscribe(f) {
            subs.push(f);
            return () => subs.splice(subs.indexOf(f), 1);
        },
        // writes the current state into the URL (normalises it) without notifying
        normalize() {
            write(false);
        },
    };
}
