// api.mjs - the server's HTTP API: URLs for a view state, fetches with the bearer token,
// and errors that carry the server's message ({"error": "..."}).

import { parseMatchers, serviceOf } from "./selector.mjs";
import { addFunction } from "./state.mjs";
import { isRelative, parseTime } from "./timespec.mjs";

const TOKEN_KEY = "scorch_token";

// An API failure: status (0 for a network failure) and the server's own message.
export class ApiError extends Error {
    constructor(status, message) {
        super(message);
        this.name = "ApiError";
        this.status = status;
    }
}

// path?params, leaving out empty parameters; relative, so the UI works under a prefix.
export function apiUrl(path, params = {}) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params))
        if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
    const q = p.toString();
    return q ? path + "?" + q : path;
}

// The range a state's profile shows: the timeline's selection, else from/until.
export function profileRange(state) {
    if (state.sel_from && state.sel_until) return { from: state.sel_from, until: state.sel_until };
    return { from: state.from, until: state.until };
}

// Parameters of /api/v1/render (and its exports) for a state.
export function renderParams(state, extra = {}) {
    const r = profileRange(state);
    return {
        query: state.query, type: state.type, from: r.from, until: r.until,
        focus: state.focus, ignore: state.ignore, hide: state.hide, ...extra,
    };
}

// Parameters of the one render request a view makes for its flame graph and top table
// (format=json with top=1: one merge on the server for both).
export function flameParams(state, range = profileRange(state)) {
    return {
        query: state.query, type: state.type, from: range.from, until: range.until,
        focus: state.focus, ignore: state.ignore, hide: state.hide, format: "json",
        maxNodes: state.maxNodes, top: 1,
    };
}

// The state patch that opens the source view of a function, over the range the state's
// profile shows (the timeline's or heatmap's selection becomes the range).
export function sourcePatch(state, name) {
    const r = profileRange(state);
    return { view: "source", function: name, from: r.from, until: r.until, sel_from: "",
             sel_until: "", zoom: "", sandwich: "", search: "" };
}

// The state patch that shows a function over time: explore over the state's range, the
// function pinned beside the others (from a view other than explore: its heatmap span or
// single profile left behind).
export function overTimePatch(state, name) {
    return { view: "explore", fn: addFunction(state.fn, name), series: "", time: "", function: "",
             ...(state.view === "explore" ? {} : { sel_from: "", sel_until: "" }) };
}

// Parameters of /api/v1/timeline for a state (the whole range, no filters).
export function timelineParams(state) {
    return { query: state.query, type: state.type, from: state.from, until: state.until,
             group_by: state.group_by };
}

// Parameters of /api/v1/timeline for one function's values over time (self or total, as
// the state's fnvalue says): the timeline's, so that its steps are the timeline's.
export function functionParams(state, name) {
    return { ...timelineParams(state), function: name, value: state.fnvalue || "self" };
}

// Parameters of /api/v1/markers for a state: the label value changes (a new version) of the
// series the timeline shows, per service (the server's grouping: a timeline with a line per
// version would have no change of version within a line).
export function markersParams(state) {
    return { query: state.query, type: state.type, from: state.from, until: state.until };
}

// The label the Changes view groups by when the state names none: one group per service.
export const CHANGES_GROUP = "service_name";

// Parameters of /api/v1/changes for a state: q is the false discovery rate (the diff
// view's level too); the kinds shown are picked in the browser.
export function changesParams(state) {
    return { type: state.type, query: state.query, from: state.from, until: state.until,
             group_by: state.group_by || CHANGES_GROUP, q: state.q };
}

// ---- exports: what a downloaded file is called and what its SVG says it holds ----

// The file name ending of each render format.
export const EXPORT_EXT = { pprof: ".pb.gz", folded: ".folded", svg: ".svg",
                            speedscope: ".speedscope.json" };

// A time of the API as UTC text, relative times at nowMs to the second: "2026-11-30T10:00:00Z",
// with the milliseconds when it has some ("...10:00:03.040Z"); null when it is not a time.
function utc(s, nowMs) {
    const t = parseTime(s, isRelative(s) ? Math.floor(nowMs / 1000) * 1000 : nowMs);
    if (!Number.isFinite(t)) return null;
    return new Date(Math.floor(t)).toISOString().replace(/\.000Z$/, "Z");
}

// The times of a range as UTC text: one when the range is shorter than a millisecond (one
// stored profile, [t, t + 1 ns)).
function rangeUtc(params, nowMs) {
    const a = utc(params.from, nowMs), b = utc(params.until, nowMs);
    if (!a || !b) return [];
    return a === b ? [a] : [a, b];
}

// What a selector selects, for names: its service, else its matchers' values, else "all".
function subject(query) {
    const svc = serviceOf(query);
    if (svc) return svc;
    const ms = parseMatchers(query);
    return ms && ms.length ? ms.map((m) => m.value).join("-") : "all";
}

// The name of an export of render parameters (query, type, from, until) in format:
// service, type and range, "goprog_cpu-cpu_2026-11-30T09-00-00Z_2026-11-30T10-00-00Z.pb.gz";
// relative times as of nowMs. Only letters, digits and . _ - (no colons, which Windows
// refuses, no slashes).
export function exportFileName(params, format, nowMs = Date.now()) {
    const clean = (s) => String(s).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
    const parts = [subject(params.query), params.type || "profile",
        ...rangeUtc(params, nowMs).map((t) => t.replace(/:/g, "-"))];
    return parts.map(clean).filter(Boolean).join("_") + (EXPORT_EXT[format] || "." + format);
}

// The title of an SVG export (render's title parameter): "goprog · cpu:cpu · 2026-11-30
// 09:00:00 – 10:00:00 UTC".
export function exportTitle(params, nowMs = Date.now()) {
    const q = String(params.query || "").trim();
    const who = serviceOf(q) || (q && q !== "{}" ? q : "all services");
    const r = rangeUtc(params, nowMs).map((t) => t.replace("T", " ").replace("Z", ""));
    const when = r.length === 2 && r[0].slice(0, 10) === r[1].slice(0, 10)
        ? `${r[0]} – ${r[1].slice(11)} UTC` : r.length ? r.join(" – ") + " UTC" : "";
    return [who, params.type, when].filter(Boolean).join(" · ");
}

// The client: json(path, params, {signal}), text(...), post(path, params, body).
// storage is localStorage (or a stand-in), doc the document (for the cookie); onAuth is
// called on 401 answers.
export function createApi({ fetchFn = globalThis.fetch.bind(globalThis), storage = null,
                            doc = null, onAuth = null } = {}) {
    const api = {
        token() {
            try {
                return (storage && storage.getItem(TOKEN_KEY)) || "";
            } catch {
                return "";
            }
        },
        // Saves the token (empty: forgets it). The cookie lets plain links (exports) and
        // page loads through too: the server reads both.
        setToken(t) {
            try {
                if (t) storage && storage.setItem(TOKEN_KEY, t);
                else storage && storage.removeItem(TOKEN_KEY);
            } catch { /* private mode: the header still works for this page */ }
            if (doc) {
                doc.cookie = t ? `${TOKEN_KEY}=${encodeURIComponent(t)}; path=/; SameSite=Strict`
                    : `${TOKEN_KEY}=; path=/; max-age=0; SameSite=Strict`;
            }
        },
        async request(method, path, params, { signal, body, headers = {} } = {}) {
            const h = { ...headers };
            const t = api.token();
            if (t) h.Authorization = "Bearer " + t;
            let res;
            try {
                res = await fetchFn(apiUrl(path, params), { method, headers: h, body, signal });
            } catch (e) {
                if (e && e.name === "AbortError") throw e;
                throw new ApiError(0, "cannot reach the scorch server (" + (e.message || e) + ")");
            }
            if (!res.ok) {
                let msg = res.statusText || "error";
                try {
                    const j = JSON.parse(await res.text());
                    if (j && j.error) msg = j.error;
                } catch { /* not JSON: keep the status text */ }
                if (res.status === 401 && onAuth) onAuth();
                throw new ApiError(res.status, msg);
            }
            return res;
        },
        async json(path, params, opts) {
            return (await api.request("GET", path, params, opts)).json();
        },
        async text(path, params, opts) {
            return (await api.request("GET", path, params, opts)).text();
        },
        async post(path, params, body, opts = {}) {
            return (await api.request("POST", path, params, { ...opts, body })).json();
        },
    };
    return api;
}
