// watch.e2e.mjs - what changed over time, in Chromium, on data this file pushes itself: a
// service whose deploy of version v2 (halfway through two hours of one-minute profiles)
// doubles one function (main.hot) while the others stay as they were, with a few percent
// of noise per profile, beside a service where nothing changes. The Changes view lists that step first and opens the diff of its
// two sides; the function drawn over time reads its values before and after; the version
// change is a marker on the timeline and its tooltip says so; functions are pinned from the
// flame graph's menu, switched between self and total and removed.
//
// env: as browser-lib.mjs.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import {
    BASE, page, q, shot, params, setup, allow, loaded, timelineLoaded, until, diffLoaded, frameAt, drawn,
} from "./browser-lib.mjs";

const NOW = Math.floor(Date.now() / 60000) * 60;
// two hours: the timeline's steps (about 120 of them) are the profiles' minute
const T0 = NOW - 7800, AT = T0 + 3600, END = T0 + 7200;
const SVC = '{service_name="wwatch"}', TYPE = "cpu:samples";
const RANGE = { from: String(T0), until: String(END) };
// samples a profile (a minute) before and after the deploy
const HOT = [100, 200], STEADY = 300, GC = 80;

async function push(name, from, folded, dur = 60) {
    const u = new URL("ingest", BASE);
    u.search = new URLSearchParams({ name, format: "folded", from: String(from), until: String(from + dur) });
    const r = await fetch(u, { method: "POST", body: folded });
    assert.equal(r.status, 200, `push ${name}: ${await r.text()}`);
}

// a seeded generator (mulberry32): the same noise every run
let seed = 12345;
function rand() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const noisy = (v) => Math.max(1, Math.round(v * (1 + 0.08 * (rand() - 0.5))));

before(async () => {
    for (let i = 0; i < 120; i++) {
        const t = T0 + 60 * i, after = t >= AT ? 1 : 0;
        await push(`wwatch{version=${after ? "v2" : "v1"}}`, t,
            `main.main;main.serve;main.hot ${noisy(HOT[after])}\n` +
            `main.main;main.serve;main.steady ${noisy(STEADY)}\n` +
            `main.main;main.gc ${noisy(GC)}\n`);
        // a service where nothing changes, over the same two hours
        await push("wsteady{version=v1}", t, `main.main;main.work ${noisy(STEADY)}\nmain.main;main.io ${noisy(GC)}\n`);
    }
});

setup();

const changesAt = () => page.evaluate(() => +(document.querySelector('[data-testid="changes"]')?.dataset.loaded || 0));
const changesLoaded = (since) => loaded(since, "changes", ".changes-body");

// Waits until the chart of function name has an answer newer than since.
async function chartLoaded(name, since = 0) {
    await page.waitForFunction(([n, t]) => {
        const c = [...document.querySelectorAll('[data-testid="fn-chart"]')].find((e) => e.dataset.name === n);
        return c && +(c.dataset.loaded || 0) > t && !c.classList.contains("loading");
    }, [name, since], { timeout: 60000 });
}

// The values of a function's chart, its lines (one a version) summed per step, null where
// none has one: {unit, ts, step, values, content}.
const chartData = (name) => page.evaluate((n) => {
    const c = window.scorch.view.functions.chart(n);
    const d = c && c.timeline.data;
    const values = d ? d.ts.map((_, k) => d.lines.reduce((a, l) =>
        (l.values[k] === null ? a : (a ?? 0) + l.values[k]), null)) : null;
    return d ? { unit: c.timeline.unit, ts: d.ts, step: d.step, values, lines: d.lines.length,
                 content: c.row.dataset.content } : null;
}, name);

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

test("the Changes view lists the planted step first, with its time, sparkline and numbers", async () => {
    const t = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: SVC, ...RANGE }));
    await changesLoaded(t);
    const rows = page.locator('[data-testid="change-row"]');
    await rows.first().waitFor();
    assert.equal(await rows.first().getAttribute("data-function"), "main.hot", "the largest change first");
    assert.equal(await rows.first().getAttribute("data-kind"), "step");
    assert.equal(await rows.first().getAttribute("data-group"), "service_name=wwatch");
    const steady = page.locator('[data-testid="change-row"][data-function="main.steady"]');
    assert.equal(await steady.count(), 0, "an unchanged function is not a change");
    const doc = await page.evaluate(() => window.scorch.view.data());
    const f = doc.changes.find((x) => x.function === "main.hot");
    assert.ok(Math.abs(f.at - AT) <= 120, `the step at the deploy: ${f.at} vs ${AT}`);
    assert.equal(f.marker && f.marker.value, "v2", "the deploy beside it");
    assert.equal(await rows.first().getByTestId("change-marker").textContent(), "version=v2");
    assert.ok(f.change_pct > 70 && f.change_pct < 130, `about +100%: ${f.change_pct}`);
    // the row says it in the timeline's unit: samples per second, 100 then 200 a minute
    const ba = await rows.first().getByTestId("before-after").textContent();
    const [b, a] = ba.split("→").map((s) => parseFloat(s));
    assert.ok(Math.abs(b - 100 / 60) < 0.25 && Math.abs(a - 200 / 60) < 0.4, `before → after: ${ba}`);
    assert.match(ba, /\/s → .*\/s$/);
    assert.match(await rows.first().locator("td.change").textContent(), /^\+\d+\.\d%.*… \+/);
    // the sparkline has its points and the change marked inside it
    const spark = rows.first().locator("canvas.spark");
    assert.ok(+(await spark.getAttribute("data-points")) >= 100, "a point per step with profiles");
    const x = +(await spark.getAttribute("data-at"));
    assert.ok(x > 60 && x < 140, `the change halfway along the sparkline: ${x}`);
    // the deploy is listed as a label change
    assert.match(await page.getByTestId("changes-markers").textContent(), /service_name=wwatch: version=v2 from \d\d:\d\d/);
    await shot("w01-changes");

    // one kind at a time: the step is not a trend
    await page.getByTestId("changes-kinds").locator('button[data-value="trend"]').click();
    await until("kind=trend in the URL", () => params().get("kind"), (k) => k === "trend");
    assert.equal(await page.locator('[data-testid="change-row"][data-kind="step"]').count(), 0);
    await page.getByTestId("changes-kinds").locator('button[data-value="trend"]').click();
    await until("every kind again", () => params().get("kind"), (k) => k === null);
    await rows.first().waitFor();
});

test("a change opens the diff of its two sides with the function searched", async () => {
    const t = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: SVC, ...RANGE }));
    await changesLoaded(t);
    const f = await page.evaluate(() => window.scorch.view.data().changes[0]);
    const t2 = Date.now() - 1;
    await page.locator('[data-testid="change-row"]').first().getByTestId("change-diff").click();
    await diffLoaded(t2);
    const p = params();
    assert.equal(p.get("view"), "diff");
    assert.equal(p.get("query"), SVC);
    assert.equal(p.get("base_from"), String(T0));
    assert.equal(+p.get("base_until"), f.at);
    assert.equal(+p.get("from"), f.at);
    assert.equal(p.get("until"), String(END));
    assert.equal(p.get("search"), "^main\\.hot$");
    const row = page.getByTestId("diff-table").locator('tr[data-name="main.hot"]');
    await row.waitFor();
    assert.equal(await row.getAttribute("data-status"), "grew", "the diff agrees: main.hot grew");
    assert.match(await row.getAttribute("class"), /selected/, "and it is the row selected");
    await drawn();
    await shot("w02-diff-of-change");
});

test("Over time: the function drawn on the timeline's steps, before and after the deploy", async () => {
    const t = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: SVC, ...RANGE }));
    await changesLoaded(t);
    const t2 = Date.now() - 1;
    await page.locator('[data-testid="change-row"][data-function="main.hot"]').getByTestId("change-over-time").click();
    await until("explore", () => params().get("view"), (v) => v === null);
    assert.deepEqual(params().getAll("fn"), ["main.hot"]);
    await chartLoaded("main.hot", t2);
    await timelineLoaded();
    const d = await chartData("main.hot");
    assert.equal(d.unit, "count/s");
    assert.equal(d.content, "values");
    assert.equal(d.lines, 2, "a line per series: version v1, then v2");
    const tl = await page.evaluate(() => ({ ts: window.scorch.view.timeline.data.ts }));
    assert.deepEqual(d.ts, tl.ts, "the timeline's steps");
    const side = (lo, hi) => d.values.filter((v, k) => v !== null && d.ts[k] >= lo && d.ts[k] + d.step <= hi);
    const b = mean(side(T0 + 120, AT - 120)), a = mean(side(AT + 120, END - 120));
    assert.ok(Math.abs(b - 100 / 60) < 0.2, `before: ${b}`);
    assert.ok(Math.abs(a - 200 / 60) < 0.3, `after: ${a}`);
    await shot("w03-function-over-time");
});

test("the version change is a marker on the timeline and on the function's chart", async () => {
    const p = new URLSearchParams({ type: TYPE, query: SVC, ...RANGE });
    p.append("fn", "main.hot");
    const t = Date.now() - 1;
    await page.goto(BASE + "?" + p);
    await loaded(t);
    await timelineLoaded();
    await page.waitForFunction(() => +(document.querySelector('[data-testid="timeline"]').dataset.markers || 0) > 0,
                               null, { timeout: 60000 });
    await chartLoaded("main.hot");
    const m = await page.evaluate(() => window.scorch.view.timeline.markerPosition(0));
    assert.ok(m && Math.abs(m.at - AT) <= 60, `the marker at the deploy: ${JSON.stringify(m)}`);
    const onChart = await page.evaluate(() => window.scorch.view.functions.chart("main.hot").timeline.places.length);
    assert.equal(onChart, 1, "the function's chart draws it too");
    await page.mouse.move(m.x, m.y);
    const tip = page.locator(".tl-tip");
    await tip.waitFor();
    const hm = await page.evaluate((at) => {
        const d = new Date(at * 1000);
        return String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
    }, m.at);
    await until("the marker's tooltip", () => tip.textContent(), (s) => s.includes(`version=v2 from ${hm}`));
    await shot("w04-marker");
});

test("functions pinned from the flame graph's menu, self and total, removed one by one", async () => {
    const p = new URLSearchParams({ type: TYPE, query: SVC, ...RANGE });
    p.append("fn", "main.hot");
    const t = Date.now() - 1;
    await page.goto(BASE + "?" + p);
    await loaded(t);
    await timelineLoaded();
    // the pinned chart above the flame graph loads, then the graph stays where it is
    await chartLoaded("main.hot", t);
    await drawn();
    const fr = await frameAt("main.serve");
    assert.ok(fr, "main.serve is drawn");
    const t2 = Date.now() - 1;
    await page.mouse.click(fr.x, fr.y, { button: "right" });
    await page.getByTestId("context-menu").getByText("Show over time").click();
    await until("two functions pinned", () => params().getAll("fn"), (fs) => fs.length === 2);
    assert.deepEqual(params().getAll("fn"), ["main.hot", "main.serve"]);
    await chartLoaded("main.serve", t2);
    // main.serve only calls: no self time, all of it total
    assert.equal((await chartData("main.serve")).content, "zeros");
    assert.match(await page.locator('[data-testid="fn-chart"][data-name="main.serve"] .fn-note').textContent(),
        /not in any profile/);
    const t3 = Date.now() - 1;
    await page.getByTestId("fn-value").locator('button[data-value="total"]').click();
    await until("fnvalue=total", () => params().get("fnvalue"), (v) => v === "total");
    await chartLoaded("main.serve", t3);
    const tot = await chartData("main.serve");
    assert.equal(tot.content, "values");
    const v = mean(tot.values.filter((x, k) => x !== null && tot.ts[k] >= T0 + 120 && tot.ts[k] + tot.step <= AT - 120));
    assert.ok(Math.abs(v - (HOT[0] + STEADY) / 60) < 0.5, `main.serve's total before the deploy: ${v}`);
    // a row's ∿ button pins from the table too
    await page.getByTestId("top-table").locator('tr[data-name="main.gc"] .tt-time').click();
    await until("three pinned", () => params().getAll("fn"), (fs) => fs.length === 3);
    await chartLoaded("main.gc");
    // a version has one colour in every chart, the timeline's
    const colours = await page.evaluate(() => {
        const v = window.scorch.view, key = (l) => JSON.stringify(l.labels);
        const of = (tl) => Object.fromEntries(tl.data.lines.map((l) => [key(l), l.color]));
        return { timeline: of(v.timeline), charts: v.functions.names().map((n) => of(v.functions.chart(n).timeline)) };
    });
    assert.equal(Object.keys(colours.timeline).length, 2);
    for (const c of colours.charts) assert.deepEqual(c, colours.timeline);
    await shot("w05-functions-pinned");
    await page.locator('[data-testid="fn-chart"][data-name="main.hot"]').getByTestId("fn-remove").click();
    await until("main.hot removed", () => params().getAll("fn"), (fs) => fs.join() === "main.serve,main.gc");
    assert.equal(await page.getByTestId("fn-chart").count(), 2);
    await page.goBack();
    await until("back: main.hot again", () => params().getAll("fn"), (fs) => fs.length === 3);
    await until("its chart again", () => page.getByTestId("fn-chart").count(), (n) => n === 3);
});

test("nothing changed: the range is said, not an error; no profiles, a bad selector", async () => {
    allow(/status of 400/);
    const t = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: '{service_name="wsteady"}', ...RANGE }));
    await changesLoaded(t);
    const msg = page.locator(".changes-list .panel-msg.empty");
    await msg.waitFor();
    assert.match(await msg.textContent(), /Nothing changed beyond noise in .* for \{service_name="wsteady"\}/);
    assert.equal(await page.locator('[data-testid="change-row"]').count(), 0);
    assert.equal(await page.getByTestId("changes-markers").textContent(), "", "no deploy in it");
    assert.match(await page.getByTestId("changes-summary").textContent(), /1 group, 3 functions tested/);
    await shot("w06-changes-nothing");
    const t1 = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: SVC, from: String(T0 - 7200), until: String(T0 - 3600) }));
    await changesLoaded(t1);
    await until("no profiles", () => msg.textContent(), (s) => /No cpu:samples profiles for \{service_name="wwatch"\} in .*nothing to test/.test(s));
    const t2 = Date.now() - 1;
    await page.goto(q({ view: "changes", type: TYPE, query: "{service_name=", ...RANGE }));
    await changesLoaded(t2);
    const err = page.locator(".changes-list .panel-msg.error");
    await err.waitFor();
    assert.match(await err.textContent(), /selector/);
    assert.match(await page.getByTestId("query-error").textContent(), /selector/, "said under the query too");
    assert.ok(await page.getByTestId("changes-q").isVisible(), "the controls stay usable");
});
