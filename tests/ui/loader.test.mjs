// loader.test.mjs - the views' request life (ui/js/loader.mjs) under node, with a few
// stand-in elements: an older, slower answer never lands over a newer one, a new request
// aborts the one before, the loading marks, error texts, data-state and the measures.
import { test } from "node:test";
import assert from "node:assert/strict";

// Just enough of the DOM for loader.mjs and dom.mjs's h/replace.
class FakeNode {}
class FakeElement extends FakeNode {
    constructor(tag) {
        super();
        this.tag = tag;
        this.children = [];
        this.dataset = {};
        this.attrs = {};
        this.className = "";
        this.hidden = false;
        const self = this;
        this.classList = {
            toggle(c, on) {
                const s = new Set(self.className.split(" ").filter(Boolean));
                if (on) s.add(c);
                else s.delete(c);
                self.className = [...s].join(" ");
            },
            contains: (c) => self.className.split(" ").includes(c),
        };
    }
    set textContent(v) {
        this.children = v ? [String(v)] : [];
    }
    get textContent() {
        return this.children.map((c) => (typeof c === "string" ? c : c.textContent)).join("");
    }
    append(...cs) {
        this.children.push(...cs);
    }
    setAttribute(k, v) {
        this.attrs[k] = String(v);
    }
    removeAttribute(k) {
        delete this.attrs[k];
    }
}
globalThis.Node = FakeNode;
globalThis.document = { createElement: (tag) => new FakeElement(tag) };

const { createLoader, errorText } = await import("../../ui/js/loader.mjs");
const { ApiError } = await import("../../ui/js/api.mjs");

// A request the test answers when it likes: {promise, resolve, reject, signal}.
function deferred() {
    const d = {};
    d.promise = new Promise((res, rej) => {
        d.resolve = res;
        d.reject = rej;
    });
    return d;
}

function panel() {
    const busy = new FakeElement("section"), msg = new FakeElement("div");
    return { busy, msg };
}

test("an older, slower answer never overwrites a newer one", async () => {
    const { busy, msg } = panel();
    const errors = [];
    const l = createLoader({ name: "t-order", busy, messages: [msg], queryErrors: (m) => errors.push(m) });
    const shown = [];
    // requests that ignore their signal: the older one still answers, after the newer
    const first = deferred(), second = deferred();
    const signals = [];
    const a = l.run((s) => { signals.push(s); return first.promise; }, (d) => { shown.push(d); });
    const b = l.run((s) => { signals.push(s); return second.promise; }, (d) => { shown.push(d); });
    assert.equal(signals[0].aborted, true, "the new request aborts the one before");
    assert.equal(signals[1].aborted, false);
    second.resolve("new");
    assert.equal(await b, true);
    first.resolve("old");
    assert.equal(await a, false, "the older answer is dropped");
    assert.deepEqual(shown, ["new"]);
    assert.equal(busy.dataset.state, "ready");
    assert.ok(!busy.classList.contains("loading"));
    assert.deepEqual(errors, [""], "the answer cleared the query's error once");
    // an older failure is dropped too: the panel keeps the newer answer
    const c = deferred(), d = deferred();
    const pc = l.run(() => c.promise, (x) => { shown.push(x); });
    const pd = l.run(() => d.promise, (x) => { shown.push(x); });
    d.resolve("newest");
    await pd;
    c.reject(new ApiError(500, "too late"));
    assert.equal(await pc, false);
    assert.deepEqual(shown, ["new", "newest"]);
    assert.ok(!/too late/.test(msg.textContent), msg.textContent);
});

test("loading marks, then the error in every box; a 400 goes to the query bar", async () => {
    const { busy, msg } = panel();
    const msg2 = new FakeElement("div");
    const errors = [];
    const l = createLoader({ name: "t-err", busy, messages: [msg, msg2], queryErrors: (m) => errors.push(m) });
    const r = deferred();
    const p = l.run(() => r.promise, () => assert.fail("no answer to draw"));
    assert.ok(busy.classList.contains("loading"));
    assert.equal(busy.attrs["aria-busy"], "true");
    assert.equal(busy.dataset.state, "loading");
    assert.equal(msg.className, "panel-msg loading");
    assert.equal(msg.textContent, "Loading…");
    assert.equal(msg2.textContent, "Loading…");
    r.reject(new ApiError(400, "bad selector at offset 3"));
    assert.equal(await p, true);
    assert.ok(!busy.classList.contains("loading"));
    assert.equal(busy.attrs["aria-busy"], undefined);
    assert.equal(busy.dataset.state, "error");
    assert.ok(+busy.dataset.loaded > 0);
    for (const m of [msg, msg2]) {
        assert.equal(m.className, "panel-msg error");
        assert.match(m.textContent, /^bad selector at offset 3Fix the query above/);
    }
    assert.deepEqual(errors, ["bad selector at offset 3"]);
    // the texts of the other failures
    const text = (e) => errorText(e).map((n) => n.textContent).join(" ");
    assert.match(text(new ApiError(401, "x")), /needs an API token/);
    assert.match(text(new ApiError(0, "x")), /Cannot reach the scorch server/);
    assert.match(text(new ApiError(500, "boom")), /^boom The server failed on this query/);
});

test("a view's own failure text, a draw that fails, the empty state, quiet runs", async () => {
    const { busy, msg } = panel();
    const l = createLoader({ name: "t-own", busy, messages: [msg], loadingText: "Laying out…" });
    await l.run(async () => "x", () => { throw new Error("the server's SVG does not parse"); });
    assert.equal(busy.dataset.state, "error");
    assert.match(msg.textContent, /the server's SVG does not parse/);
    await l.run(async () => { throw new ApiError(404, "no such function"); }, () => {}, {
        fail: (err) => {
            msg.textContent = "own: " + err.message;
            return true;
        },
    });
    assert.equal(msg.textContent, "own: no such function");
    await l.run(async () => ({}), () => ({ state: "empty" }));
    assert.equal(busy.dataset.state, "empty");
    // quiet (the auto-refresh): no marks while it runs, what is shown stays
    msg.textContent = "shown";
    const r = deferred();
    const p = l.run(() => r.promise, () => {}, { quiet: true });
    assert.ok(!busy.classList.contains("loading"));
    assert.equal(busy.attrs["aria-busy"], undefined);
    assert.equal(msg.textContent, "shown");
    r.resolve(1);
    await p;
    assert.equal(busy.dataset.state, "ready");
});

test("abort: the request under way is dropped and its marks go", async () => {
    const { busy, msg } = panel();
    const l = createLoader({ name: "t-abort", busy, messages: [msg] });
    let signal = null;
    const r = deferred();
    const p = l.run((s) => { signal = s; return r.promise; }, () => assert.fail("dropped"));
    assert.equal(l.busy(), true);
    l.abort();
    assert.equal(signal.aborted, true);
    assert.equal(l.busy(), false);
    assert.ok(!busy.classList.contains("loading"));
    r.resolve("late");
    assert.equal(await p, false);
    assert.equal(busy.dataset.state, "idle");
});

test("the measures: one of each name, the last request's", async () => {
    const l = createLoader({ name: "t-measure", stamp: null });
    for (let i = 0; i < 3; i++) await l.run(async () => i, (v) => ({ detail: { v } }));
    const draws = performance.getEntriesByName("scorch:t-measure:draw");
    assert.equal(draws.length, 1);
    assert.deepEqual(draws[0].detail, { v: 2 });
    assert.equal(performance.getEntriesByName("scorch:t-measure:fetch").length, 1);
});
