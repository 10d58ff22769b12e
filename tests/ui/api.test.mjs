// api.test.mjs - API URLs of a state, the token, errors carrying the server's message, and
// what exported files are called and titled.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    ApiError, apiUrl, createApi, exportFileName, exportTitle, profileRange, renderParams, timelineParams,
} from "../../ui/js/api.mjs";
import { DEFAULTS } from "../../ui/js/state.mjs";

test("URLs leave empty parameters out", () => {
    assert.equal(apiUrl("api/v1/labels"), "api/v1/labels");
    assert.equal(apiUrl("api/v1/render", { query: '{a="b"}', type: "cpu:cpu", focus: "", x: null }),
        "api/v1/render?query=%7Ba%3D%22b%22%7D&type=cpu%3Acpu");
});

test("the profile shows the timeline's selection when there is one", () => {
    const s = { ...DEFAULTS, type: "cpu:cpu", query: '{a="1"}', focus: "^f$" };
    assert.deepEqual(profileRange(s), { from: "now-1h", until: "now" });
    const sel = { ...s, sel_from: "100", sel_until: "200" };
    assert.deepEqual(profileRange(sel), { from: "100", until: "200" });
    assert.deepEqual(renderParams(sel, { format: "svg" }), {
        query: '{a="1"}', type: "cpu:cpu", from: "100", until: "200", focus: "^f$", ignore: "",
        hide: "", format: "svg",
    });
    assert.deepEqual(timelineParams({ ...sel, group_by: "env" }), {
        query: '{a="1"}', type: "cpu:cpu", from: "now-1h", until: "now", group_by: "env",
    });
});

function fakeFetch(answers, seen) {
    return async (url, opts) => {
        seen.push({ url, opts });
        const [status, body] = answers.shift();
        return {
            ok: status < 400, status, statusText: "status " + status,
            text: async () => body, json: async () => JSON.parse(body),
        };
    };
}

test("the token goes into the Authorization header and a cookie", async () => {
    const store = new Map();
    const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v),
                      removeItem: (k) => store.delete(k) };
    const doc = { cookie: "" };
    const seen = [];
    const api = createApi({ fetchFn: fakeFetch([[200, "[]"], [200, "[]"]], seen), storage, doc });
    await api.json("api/v1/labels");
    assert.equal(seen[0].opts.headers.Authorization, undefined);
    api.setToken("s3cret");
    assert.match(doc.cookie, /^scorch_token=s3cret; path=\//);
    await api.json("api/v1/labels");
    assert.equal(seen[1].opts.headers.Authorization, "Bearer s3cret");
    api.setToken("");
    assert.equal(api.token(), "");
    assert.match(doc.cookie, /max-age=0/);
});

test("errors carry the server's message; 401 asks for the token", async () => {
    let asked = 0;
    const seen = [];
    const api = createApi({
        fetchFn: fakeFetch([
            [400, '{"error":"bad selector at offset 5: expected a quoted value"}'],
            [401, '{"error":"missing or wrong bearer token"}'],
            [500, "not json"],
        ], seen),
        onAuth: () => asked++,
    });
    await assert.rejects(api.json("api/v1/render", { query: "{a=}" }),
        (e) => e instanceof ApiError && e.status === 400 && /bad selector at offset 5/.test(e.message));
    await assert.rejects(api.json("api/v1/labels"), (e) => e.status === 401);
    assert.equal(asked, 1);
    await assert.rejects(api.json("api/v1/labels"), (e) => e.status === 500 && e.message === "status 500");
    const down = createApi({ fetchFn: async () => { throw new TypeError("Failed to fetch"); } });
    await assert.rejects(down.json("api/v1/labels"), (e) => e.status === 0 && /cannot reach/.test(e.message));
});

test("exported files are named after the service, the type and the range, in UTC", () => {
    const now = Date.UTC(2026, 10, 30, 10, 0, 0, 640);
    const p = { query: '{service_name="goprog"}', type: "cpu:cpu", from: "now-1h", until: "now" };
    // relative times to the second
    assert.equal(exportFileName(p, "pprof", now), "goprog_cpu-cpu_2026-11-30T09-00-00Z_2026-11-30T10-00-00Z.pb.gz");
    assert.equal(exportFileName(p, "folded", now), "goprog_cpu-cpu_2026-11-30T09-00-00Z_2026-11-30T10-00-00Z.folded");
    assert.equal(exportFileName(p, "svg", now).slice(-4), ".svg");
    assert.equal(exportFileName(p, "speedscope", now).slice(-16), ".speedscope.json");
    // a heatmap's selection keeps its milliseconds
    const sel = { query: '{env="test", service_name="bursts"}', type: "cpu:cpu-clock",
                  from: "1796020227.040", until: "1796020227.160" };
    assert.equal(exportFileName(sel, "folded", now),
                 "bursts_cpu-cpu-clock_2026-11-30T06-30-27.040Z_2026-11-30T06-30-27.160Z.folded");
    // one stored profile, [t, t + 1 ns): one time
    const one = { query: '{env="prod", service_name="shop", pod=""}', type: "heap:inuse_space",
                  from: "1796020227000000000", until: "1796020227000000001" };
    assert.equal(exportFileName(one, "pprof", now), "shop_heap-inuse_space_2026-11-30T06-30-27Z.pb.gz");
    // no one service: the matchers' values, or "all"; nothing but letters, digits, . _ -
    assert.equal(exportFileName({ ...p, query: '{env=~"a|b/c", x="y z"}' }, "folded", now).split("_")[0], "a-b-c-y-z");
    assert.equal(exportFileName({ ...p, query: "" }, "folded", now).split("_")[0], "all");
    assert.equal(exportFileName({ ...p, query: "{}" }, "folded", now).split("_")[0], "all");
    assert.match(exportFileName({ ...p, query: '{service_name="../x:y"}' }, "svg", now), /^\.\.-x-y_cpu-cpu_[\w.-]+\.svg$/);
    // times that do not parse are left out (the server will say what is wrong with them)
    assert.equal(exportFileName({ ...p, from: "yesterday" }, "folded", now), "goprog_cpu-cpu.folded");
});

test("an SVG export's title says what it shows", () => {
    const now = Date.UTC(2026, 10, 30, 10, 0, 0);
    assert.equal(exportTitle({ query: '{service_name="goprog"}', type: "cpu:cpu", from: "now-1h", until: "now" }, now),
                 "goprog · cpu:cpu · 2026-11-30 09:00:00 – 10:00:00 UTC");
    assert.equal(exportTitle({ query: "", type: "cpu:cpu", from: "now-1d", until: "now" }, now),
                 "all services · cpu:cpu · 2026-11-29 10:00:00 – 2026-11-30 10:00:00 UTC");
    assert.equal(exportTitle({ query: '{env="prod"}', type: "cpu:cpu", from: "1796020227.040",
                               until: "1796020227.160" }, now),
                 '{env="prod"} · cpu:cpu · 2026-11-30 06:30:27.040 – 06:30:27.160 UTC');
    assert.equal(exportTitle({ query: '{service_name="shop", pod=""}', type: "cpu:cpu",
                               from: "1796020227000000000", until: "1796020227000000001" }, now),
                 "shop · cpu:cpu · 2026-11-30 06:30:27 UTC");
});
