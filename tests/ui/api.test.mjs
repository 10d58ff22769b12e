// api.test.mjs - API URLs of a state, the token, and errors carrying the server's message.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiError, apiUrl, createApi, profileRange, renderParams, timelineParams }
    from "../../ui/js/api.mjs";
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
