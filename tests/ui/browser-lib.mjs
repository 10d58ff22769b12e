// browser-lib.mjs - what every browser test file shares: Chromium launched with the flags
// the machine needs, one page whose page errors, console errors and failed requests fail the
// running test (allow() names those a test expects), and the waits on the page's own state
// (loaded, drawn, timelineLoaded) that a loaded machine needs instead of sleeps.
//
// env: SCORCH_URL (the server, ending in '/'), ARTIFACTS (a directory for screenshots),
// CHROMIUM (the browser binary).
import { before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const BASE = process.env.SCORCH_URL;
export const ART = process.env.ARTIFACTS || ".";
export let browser, page;
let problems = [];
let allowed = []; // console errors expected by the running test (regexes)

// Console errors the running test expects (regexes); reset after each test.
export function allow(...res) {
    allowed = res;
}

export const q = (params) => BASE + "?" + new URLSearchParams(params).toString();
export const shot = (name) => page.screenshot({ path: join(ART, name + ".png") });
export const params = () => new URL(page.url()).searchParams;

// Registers the file's before/after hooks: one browser and page for all its tests.
export function setup({ width = 1400, height = 900 } = {}) {
    before(async () => {
        assert.ok(BASE, "set SCORCH_URL");
        browser = await chromium.launch({
            executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
            args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync", "--no-first-run"],
        });
        const context = await browser.newContext({ viewport: { width, height } });
        context.setDefaultTimeout(60000); // every wait: a loaded machine is slow, not wrong
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(BASE).origin });
        page = await context.newPage();
        page.on("pageerror", (e) => problems.push("page error: " + e.message));
        page.on("console", (m) => {
            if (m.type() !== "error") return;
            const text = m.text() + " " + (m.location().url || "");
            if (!allowed.some((re) => re.test(text))) problems.push("console error: " + text);
        });
        page.on("requestfailed", (r) => {
            const f = r.failure();
            if (f && !/ERR_ABORTED/.test(f.errorText)) problems.push("request failed: " + r.url() + " " + f.errorText);
        });
    });

    after(async () => {
        if (browser) await browser.close();
    });

    afterEach(async () => {
        const p = problems;
        problems = [];
        allowed = [];
        assert.deepEqual(p, [], "page or console errors");
    });
}

// Waits until the flame graph and table hold a profile newer than `since` (the element
// testid says when it loaded; busy is what is marked "loading" meanwhile).
export async function loaded(since = 0, testid = "flamegraph", busy = ".split") {
    await page.waitForFunction(([t, id, b]) => {
        const fg = document.querySelector(`[data-testid="${id}"]`);
        const split = document.querySelector(b);
        return fg && +(fg.dataset.loaded || 0) > t && !split.classList.contains("loading");
    }, [since, testid, busy], { timeout: 60000 });
}
export const loadedAt = (testid = "flamegraph") => page.evaluate((id) =>
    +(document.querySelector(`[data-testid="${id}"]`)?.dataset.loaded || 0), testid);

// Waits until the explore view's timeline holds its answer: it loads beside the flame
// graph, so loaded() says nothing about it (data drawn, or its empty / error message).
export async function timelineLoaded() {
    await page.waitForFunction(() => {
        const panel = document.querySelector('[data-testid="timeline"]');
        const tl = window.scorch.view.timeline;
        return panel && tl && !panel.classList.contains("loading") &&
            (tl.data || panel.querySelector(".panel-msg.empty, .panel-msg.error"));
    }, null, { timeout: 60000 });
}

// Waits until the view's flame graphs have drawn what they hold: a new zoom or search is
// drawn in the next animation frame, which a loaded machine delays.
export async function drawn() {
    await page.waitForFunction(() => {
        const v = window.scorch.view, f = v.flame || {}, s = v.sides || {};
        return [f.fg, f.fgCallers, f.fgCallees, s.base?.fg, s.new?.fg].every((fg) => !fg || !fg.pending);
    }, null, { timeout: 60000 });
}

// Polls get() (in the test) until ok(value), for what the page shows only some time after
// a change (a graph laid out again when its box is resized); fails saying what, with the
// last value.
export async function until(what, get, ok = (v) => !!v, ms = 60000) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await get();
        if (ok(v)) return v;
        if (Date.now() > end) assert.fail(`${what} (last: ${JSON.stringify(v)})`);
        await page.waitForTimeout(50);
    }
}

// Opens a view and waits for it; explore's timeline too, whose answer may come after the
// flame graph's and move the graph down (a frame's position read before it is stale).
export async function open(p) {
    const t = Date.now() - 1;
    await page.goto(q(p));
    await loaded(t);
    if (!p.view || p.view === "explore") await timelineLoaded();
}

// The client position of the middle of the visible frame named `name` in the main flame
// graph (or a sandwich graph: which = "fgCallers" / "fgCallees"), null when not drawn.
export function frameAt(name, which = "fg") {
    return page.evaluate(([n, w]) => {
        const fg = window.scorch.view.flame[w];
        const m = fg.model;
        if (!m) return null;
        for (let i = 0; i < m.n; i++) {
            if (m.names[m.name[i]] !== n) continue;
            const r = fg.rectOf(i);
            if (!r || r.w < 2) continue;
            const o = fg.overlay.getBoundingClientRect();
            return { x: o.left + r.x + Math.min(r.w / 2, 40), y: o.top + r.y + r.h / 2, w: r.w, id: i };
        }
        return null;
    }, [name, which]);
}

// ---- the diff view ----

export const diffLoaded = (since = 0) => loaded(since, "diff-flamegraph", ".diff-body");
export const diffLoadedAt = () => loadedAt("diff-flamegraph");

// Colour and box of the frame named name in a diff view's graph (which: "main" the diff
// graph, "base" / "new" the side-by-side ones): {rgb: [r, g, b] at the frame's top left,
// x, y (its middle, client px), w} or null. Waits for pending draws first.
export async function diffFrame(name, which = "main") {
    await drawn();
    return page.evaluate(([n, w]) => {
        const v = window.scorch.view;
        const fg = (w === "main" ? v.flame : v.sides[w]).fg;
        const m = fg.model;
        if (!m) return null;
        for (let i = 0; i < m.n; i++) {
            if (m.names[m.name[i]] !== n) continue;
            const r = fg.rectOf(i);
            if (!r || r.w < 4) continue;
            const d = fg.ctx.getImageData(Math.floor((r.x + 2) * fg.dpr), Math.floor((r.y + 2) * fg.dpr), 1, 1).data;
            const o = fg.overlay.getBoundingClientRect();
            return { rgb: [d[0], d[1], d[2]], x: o.left + r.x + Math.min(r.w / 2, 40), y: o.top + r.y + r.h / 2,
                     w: r.w, canvas: fg.width };
        }
        return null;
    }, [name, which]);
}
export const isRed = (c) => c[0] > c[2] + 60 && c[0] > c[1] + 40;
export const isBlue = (c) => c[2] > c[0] + 60;
export const NEUTRAL = [0xd2, 0xd2, 0xd2];

// ---- mouse and heatmap ----

// The heatmap as the page drew it: its attributes and box.
export async function heatmapBox() {
    const hm = page.getByTestId("heatmap");
    await page.waitForFunction(() => +(document.querySelector('[data-testid="heatmap"]')?.dataset.cols || 0) > 0,
                               null, { timeout: 60000 });
    const a = await hm.evaluate((el) => ({ cols: +el.dataset.cols, rows: +el.dataset.rows, row0: el.dataset.row0,
                                           start: +el.dataset.start, secs: +el.dataset.secondsPerCol }));
    return { ...a, box: await hm.boundingBox() };
}

// A drag of the mouse from a to b ({x, y} client px), with shift held when asked.
export async function drag(a, b, { shift = false } = {}) {
    if (shift) await page.keyboard.down("Shift");
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    if (shift) await page.keyboard.up("Shift");
}

// The centre of cell (c, r) on screen, for the grid's orientation (cells fill the box).
export function cellPoint(hm, c, r) {
    const w = hm.box.width / hm.cols, h = hm.box.height / hm.rows;
    const fromTop = hm.row0 === "top" ? r : hm.rows - 1 - r;
    return { x: hm.box.x + (c + 0.5) * w, y: hm.box.y + (fromTop + 0.5) * h };
}
