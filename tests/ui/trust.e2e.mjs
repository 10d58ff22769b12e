// trust.e2e.mjs - what the diff view and the timeline say, in Chromium, on data this file
// pushes itself: a young service (its base range empty), two builds where one side pushes
// two profiles at each instant (two processes under one name) with equal sums, code only
// the new side has, a steady service with a gap. The numbers beside a verdict are the
// ones the test compared; a side without profiles is said, not an error; the timeline
// is a rate whose unit is drawn and whose values do not move with the zoom.
//
// env: as browser-lib.mjs.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import {
    BASE, page, q, shot, params, setup, loaded, timelineLoaded, until, diffLoaded, diffLoadedAt,
    diffFrame, isRed, NEUTRAL,
} from "./browser-lib.mjs";

const NOW = Math.floor(Date.now() / 60000) * 60;
const B0 = NOW - 3 * 3600, N0 = NOW - 2 * 3600, S0 = NOW - 5400, L0 = NOW - 4000;
const YOUNG = '{service_name="tyoung"}', TWIN = '{service_name="ttwin"}', STEADY = '{service_name="tsteady"}';
// the diff-model.mjs colours of paths on one side only
const NEW_RGB = [0xb3, 0x6a, 0xe2];

async function push(name, from, folded, dur = 10) {
    const u = new URL("ingest", BASE);
    u.search = new URLSearchParams({ name, format: "folded", from: String(from), until: String(from + dur) });
    const r = await fetch(u, { method: "POST", body: folded });
    assert.equal(r.status, 200, `push ${name}: ${await r.text()}`);
}

const near = (a, b) => Math.abs(a - b) < 1e-6;
const folded = (o) => Object.entries(o).map(([k, v]) => `main.main;main.${k} ${v}\n`).join("");

before(async () => {
    for (let i = 0; i < 5; i++) await push("tyoung{env=t}", NOW - 1800 + 60 * i, folded({ run: 30 }));
    const work = [100, 110, 95, 105, 98, 102], gb = [20, 22, 18, 21, 19, 20], gn = [60, 58, 63, 61, 59, 62];
    for (let i = 0; i < 6; i++) {
        await push("ttwin{env=t}", B0 + 60 * i, folded({ json: 96, work: work[i], grow: gb[i] }));
        const a = { json: 40, work: work[i] >> 1, grow: gn[i] >> 1 };
        const b = { json: 56, work: work[i] - (work[i] >> 1), grow: gn[i] - (gn[i] >> 1) };
        if (i % 2 === 0) a.fresh = 30 + i;
        await push("ttwin{env=t}", N0 + 60 * i, folded(a));
        await push("ttwin{env=t}", N0 + 60 * i, folded(b));
    }
    // one profile of a minute: the timeline spreads it over its six 10 s steps
    await push("tlong{env=t}", L0, folded({ long: 600 }), 60);
    // 50 samples every 10 s, not in minutes 4 to 6: 5 samples a second
    for (let i = 0; i < 60; i++) if (i < 24 || i >= 36) await push("tsteady{env=t}", S0 + 10 * i, folded({ tick: 50 }));
});

setup();

const twinSides = (extra = {}) => ({ view: "diff", type: "cpu:samples", query: TWIN, from: String(N0),
                                     until: String(N0 + 360), base_from: String(B0), base_until: String(B0 + 360),
                                     ...extra });

test("a young service: the empty base is said with its range, the new side drawn, no query error", async () => {
    await page.goto(q({ view: "diff", type: "cpu:samples", query: YOUNG, from: "now-1h", until: "now",
                        base_from: "now-2h", base_until: "now-1h" }));
    await diffLoaded(0);
    const empty = page.getByTestId("diff-empty");
    await empty.waitFor();
    assert.match(await empty.textContent(), /base has no cpu:samples profiles in .* to /);
    assert.ok(await page.locator(".query-error").evaluateAll((es) => es.every((e) => e.hidden || !e.textContent)),
        "nothing in the query bar's error");
    const run = await diffFrame("main.run");
    assert.ok(run && run.w > run.canvas * 0.9, "the new side's flame graph: " + JSON.stringify(run));
    assert.notDeepEqual(run.rgb, NEW_RGB, "one side alone is not painted as news");
    await shot("t01-diff-empty-base");
});

test("two profiles at one instant: equal values are not significant, the table shows the tested means", async () => {
    await page.goto(q(twinSides({ normalize: "0" })));
    await diffLoaded(0);
    const row = (n) => page.getByTestId("diff-table").locator(`tr[data-name="${n}"]`);
    const js = row("main.json");
    await js.waitFor();
    assert.equal(await js.getAttribute("data-significant"), "false");
    assert.equal(await js.getAttribute("data-status"), "noise");
    const cells = await js.locator("td.num").allTextContents();
    // base and new: 96 samples over 10 s on both sides, shown as the rate the test compared
    assert.match(cells[0], /^9\.6\/s\d/);
    assert.match(cells[1], /^9\.6\/s\d/);
    assert.equal(await js.locator("td.mark").textContent(), "");
    assert.match(await page.locator(".diff-table-panel .tt-count").textContent(),
        /values: means over the replicates, count per second/);
    // the grown function still is found, new code is new
    assert.equal(await row("main.grow").getAttribute("data-status"), "grew");
    assert.equal(await row("main.fresh").getAttribute("data-status"), "new");
    assert.equal(await row("main.fresh").locator("td.mark").textContent(), "new");
    const fresh = await diffFrame("main.fresh");
    assert.deepEqual(fresh.rgb, NEW_RGB, "new code has its own colour");
    assert.deepEqual((await diffFrame("main.json")).rgb, NEUTRAL, "main.json: no change");
    assert.ok(await page.getByTestId("diff-legend").locator('[data-key="new"]').isVisible(), "the legend says new");
    // the tooltip: the means base -> new in their unit, and no verdict of a change
    const f = await diffFrame("main.json");
    await page.mouse.move(f.x, f.y);
    const tip = page.locator(".diff-tip");
    await tip.waitFor();
    await until("main.json's tooltip", () => tip.textContent(), (t) => /main\.json/.test(t));
    const text = await tip.textContent();
    assert.match(text, /Its means, base → new \(count per second\)/);
    assert.match(text, /self9\.6\/s → 9\.6\/s/);
    assert.match(text, /within noise/);
    assert.doesNotMatch(text, /significant (growth|shrinkage)/);
    // the exports are named after what they compare
    const dl = await page.locator('.diff .exports a[data-format="tsv"]').getAttribute("download");
    assert.match(dl, /^diff_ttwin_cpu-samples_\d{4}-\d\d-\d\dT[\d-]+Z_[\dT:-]+Z\.tsv$/);
    await shot("t02-diff-means");
});

test("the plain diff colours every change without a test, and says so", async () => {
    await page.goto(q(twinSides({ normalize: "0" })));
    await diffLoaded(0);
    const t = await diffLoadedAt();
    await page.getByTestId("diffmode").locator("button", { hasText: "Plain" }).click();
    await diffLoaded(t);
    assert.equal(params().get("diffmode"), "plain");
    assert.ok(isRed((await diffFrame("main.grow")).rgb), "main.grow grew");
    assert.deepEqual((await diffFrame("main.json")).rgb, NEUTRAL, "main.json: equal sums, no change");
    assert.deepEqual((await diffFrame("main.fresh")).rgb, NEW_RGB);
    assert.match(await page.getByTestId("diff-method").textContent(), /the plain difference: no test/);
    assert.equal(await page.getByTestId("diff-table").locator('tr[data-name="main.grow"]').getAttribute("data-significant"),
        "false", "nothing tested");
    await shot("t03-diff-plain");
});

test("a diff without a base range compares with the period just before and says so", async () => {
    await page.goto(q({ view: "diff", type: "cpu:samples", query: TWIN, from: String(N0 + 360), until: String(N0 + 720) }));
    await diffLoaded(0);
    await page.getByTestId("base-default").waitFor();
    const { json } = await page.evaluate(() => window.scorch.view.data());
    assert.equal(json.base_profiles, 6, "the six minutes before");
    assert.equal(json.empty, "new");
    assert.equal(await page.locator('input[aria-label="base from"]').inputValue() !== "", true);
    assert.doesNotMatch(await page.getByTestId("diff-verdict").textContent(), /no significant change/);
});

test("the timeline: a rate in its unit whatever the zoom, no value and no line in a gap", async () => {
    const open1 = async (from, until) => {
        const t = Date.now() - 1;
        await page.goto(q({ query: STEADY, type: "cpu:samples", from: String(from), until: String(until) }));
        await loaded(t);
        await timelineLoaded();
        return page.evaluate(() => {
            const tl = window.scorch.view.timeline;
            return { unit: tl.unit, ts: tl.data.ts, step: tl.data.step, values: tl.data.lines[0].values };
        });
    };
    const wide = await open1(S0 - 1800, S0 + 2400);
    const narrow = await open1(S0, S0 + 600);
    for (const d of [wide, narrow]) {
        assert.equal(d.unit, "count/s");
        const vals = d.values.filter((v) => v !== null);
        assert.ok(vals.length && vals.every((v) => near(v, 5)), `5 samples a second at step ${d.step}: ${vals}`);
    }
    assert.notEqual(wide.step, narrow.step, "two zooms");
    // the gap: null steps, and the tooltip says there is no profile
    const k = narrow.ts.findIndex((t) => t >= S0 + 300);
    assert.equal(narrow.values[k], null);
    const pos = await page.evaluate((t) => {
        const tl = window.scorch.view.timeline;
        const r = tl.canvas.getBoundingClientRect();
        return { x: r.left + tl.geometry().x.to(t), y: r.top + r.height / 2 };
    }, narrow.ts[k] + narrow.step / 2);
    await page.mouse.move(pos.x, pos.y);
    const tip = page.locator(".tl-tip");
    await tip.waitFor();
    assert.match(await tip.textContent(), /no profile/);
    await page.mouse.move(pos.x - 200, pos.y);
    await until("a value before the gap", () => tip.textContent(), (t) => /5\/s/.test(t));
    await shot("t04-timeline-rate");
});

test("a point in the middle of a long profile opens that profile", async () => {
    const t = Date.now() - 1;
    await page.goto(q({ query: '{service_name="tlong"}', type: "cpu:samples", from: String(L0 - 60),
                        until: String(L0 + 120) }));
    await loaded(t);
    await timelineLoaded();
    const d = await page.evaluate(() => {
        const tl = window.scorch.view.timeline;
        return { ts: tl.data.ts, values: tl.data.lines[0].values };
    });
    const k = d.ts.indexOf(L0 + 30);
    assert.ok(k > 0 && near(d.values[k], 10), `the minute's rate in its fourth step: ${d.values}`);
    const pos = await page.evaluate((i) => window.scorch.view.timeline.pointPosition(0, i), k);
    await page.mouse.click(pos.x, pos.y);
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "profile");
    assert.equal(params().get("time"), String(L0) + "000000000");
});
