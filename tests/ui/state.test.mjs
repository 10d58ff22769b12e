// state.test.mjs - the view state in the URL: round trips, defaults, history.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseOf, changed, createStore, DEFAULTS, KEYS, parseState, stateToSearch }
    from "../../ui/js/state.mjs";

test("an empty URL is the default state; from/until are always written", () => {
    assert.deepEqual(parseState(""), DEFAULTS);
    assert.equal(stateToSearch(DEFAULTS), "?from=now-1h&until=now");
});

test("the stable parameters keep their names", () => {
    for (const k of ["view", "query", "type", "from", "until", "base_query", "base_from", "base_until"])
        assert.ok(KEYS.includes(k), k);
});

test("round trip of every parameter, including awkward text", () => {
    const s = {
        ...DEFAULTS, view: "diff", query: '{service_name="api", env=~"prod|stage", x!="a&b=c;d"}',
        type: "heap:inuse_space", from: "now-6h", until: "now-1h", base_query: '{env="old"}',
        base_from: "1700000000", base_until: "2026-11-30T04:05:06Z", sel_from: "1700000100",
        sel_until: "1700000200", group_by: "pod", focus: "^main\\.burn$|^x$", ignore: "runtime\\.",
        hide: "^a\\+b$", search: "net/http.(*conn)", zoom: "runtime.main;main.main;main.burn",
        sandwich: "sort.symMerge", layout: "flame", orient: "flame", sort: "-total_pct",
        maxNodes: "100000",
    };
    const q = stateToSearch(s);
    assert.deepEqual(parseState(q), s);
    assert.deepEqual(parseState(q.slice(1)), s);
    // selectors stay readable
    assert.match(q, /query=\{service_name%3D%22api%22,/);
    // every state parses back to itself through the URL class too
    const u = new URL("http://h/" + q);
    assert.deepEqual(parseState(u.search), s);
});

test("defaults are left out; bad choices fall back", () => {
    assert.equal(stateToSearch({ ...DEFAULTS, type: "cpu:cpu" }), "?type=cpu:cpu&from=now-1h&until=now");
    const s = parseState("?view=nope&layout=wide&orient=up&sort=bogus&maxNodes=lots&extra=1");
    assert.deepEqual(s, DEFAULTS);
    assert.equal(parseState("?sort=name").sort, "name");
    assert.equal(parseState("?view=heatmap").view, "heatmap");
});

test("base_* default to the main query and range", () => {
    const s = parseState("?query={a=\"1\"}&from=now-2h&until=now");
    assert.deepEqual(baseOf(s), { query: '{a="1"}', from: "now-2h", until: "now" });
    assert.deepEqual(baseOf({ ...s, base_query: "{}", base_from: "1", base_until: "2" }),
        { query: "{}", from: "1", until: "2" });
    assert.ok(changed(s, { ...s, type: "x" }, ["type"]));
    assert.ok(!changed(s, { ...s }, KEYS));
});

// A window stand-in: location, history with entries, popstate.
function fakeWindow(search) {
    const listeners = {};
    const w = {
        location: { pathname: "/", search, hash: "" },
        entries: ["/" + search],
        index: 0,
        history: {
            pushState(_, __, url) {
                w.entries.splice(w.index + 1);
                w.entries.push(url);
                w.index++;
                w.location.search = url.slice(1);
            },
            replaceState(_, __, url) {
                w.entries[w.index] = url;
                w.location.search = url.slice(1);
            },
        },
        addEventListener(t, f) {
            (listeners[t] ||= []).push(f);
        },
        go(n) {
            w.index += n;
            w.location.search = w.entries[w.index].slice(1);
            for (const f of listeners.popstate || []) f();
        },
    };
    return w;
}

test("the store pushes and replaces history entries; back and forward restore states", () => {
    const w = fakeWindow("?type=cpu:cpu&from=now-1h&until=now");
    const store = createStore(w);
    const seen = [];
    store.subscribe((s, prev, how) => seen.push([how, s.from, prev.from]));
    assert.equal(store.get().type, "cpu:cpu");
    store.set({ from: "now-6h" });
    store.set({ search: "main" }, { push: false });
    store.set({ from: "now-6h" }); // no change: no entry, no notification
    assert.equal(w.entries.length, 2);
    assert.equal(w.entries[1], "/?type=cpu:cpu&from=now-6h&until=now&search=main");
    w.go(-1);
    assert.equal(store.get().from, "now-1h");
    assert.equal(store.get().search, "");
    w.go(1);
    assert.equal(store.get().from, "now-6h");
    store.refresh();
    store.refresh("auto");
    assert.deepEqual(seen.map((x) => x[0]), ["push", "replace", "pop", "pop", "refresh", "auto"]);
    assert.deepEqual(seen[0], ["push", "now-6h", "now-1h"]);
});

test("auto-refresh: off, 10 s, 30 s or a minute, in the URL", () => {
    assert.equal(DEFAULTS.refresh, "");
    for (const v of ["10s", "30s", "1m"]) {
        assert.equal(parseState("?refresh=" + v).refresh, v);
        assert.equal(stateToSearch({ ...DEFAULTS, refresh: v }), "?from=now-1h&until=now&refresh=" + v);
    }
    assert.equal(parseState("?refresh=5s").refresh, "");
    assert.equal(parseState("?refresh=1").refresh, "");
});
