// browser.e2e.mjs - the web UI in headless Chromium against a running scorch server that
// holds the data tests/e2e/ui_browser.sh pushed: service "app" (Go benchmarks' CPU
// profiles over the last hour, one heap profile) and "goprog" (main.burn is its hot spot).
// Checks CONTRACT.md's hooks, then uses the page: zoom, tooltip, search, context menu
// filters, sandwich, top table, orientation and layout, timeline brush, autocomplete,
// time ranges, history, errors, empty ranges, upload by picker and by drop, exports.
// Any page error or console error fails the test. Screenshots go to $ARTIFACTS.
//
// env: SCORCH_URL (the server, ending in '/'), ARTIFACTS (a directory), CHROMIUM,
// UPLOAD_FILE (a pprof file to upload)
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { join, basename } from "node:path";
import { chromium } from "playwright-core";

const BASE = process.env.SCORCH_URL;
const ART = process.env.ARTIFACTS || ".";
const GOPROG = '{service_name="goprog"}';
const APP = '{service_name="app"}';
let browser, page;
let problems = [];
let allowed = []; // console errors expected by the running test (regexes)

const q = (params) => BASE + "?" + new URLSearchParams(params).toString();
const shot = (name) => page.screenshot({ path: join(ART, name + ".png") });
const params = () => new URL(page.url()).searchParams;

before(async () => {
    assert.ok(BASE, "set SCORCH_URL");
    browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
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

// Waits until the flame graph and table hold a profile newer than `since`.
async function loaded(since = 0) {
    await page.waitForFunction((t) => {
        const fg = document.querySelector('[data-testid="flamegraph"]');
        const split = document.querySelector(".split");
        return fg && +(fg.dataset.loaded || 0) > t && !split.classList.contains("loading");
    }, since, { timeout: 20000 });
}
const loadedAt = () => page.evaluate(() =>
    +(document.querySelector('[data-testid="flamegraph"]').dataset.loaded || 0));

async function open(p) {
    const t = Date.now() - 1;
    await page.goto(q(p));
    await loaded(t);
}

// The client position of the middle of the visible frame named `name` in the main flame
// graph (or a sandwich graph: which = "fgCallers" / "fgCallees"), null when not drawn.
function frameAt(name, which = "fg") {
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

test("every hook of part 1 is there and holds what it should", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    for (const id of ["query-input", "type-select", "timeline", "flamegraph", "top-table", "upload"])
        assert.ok(await page.getByTestId(id).isVisible(), id + " visible");
    assert.equal(await page.getByTestId("query-input").inputValue(), GOPROG);
    // type select: grouped by profile, with units
    const sel = page.getByTestId("type-select");
    assert.equal(await sel.inputValue(), "cpu:cpu");
    const groups = await sel.locator("optgroup").evaluateAll((gs) => gs.map((g) => g.label));
    assert.ok(groups.includes("cpu") && groups.includes("heap"), groups.join(","));
    assert.match(await sel.locator('option[value="cpu:cpu"]').textContent(), /cpu \(nanoseconds\)/);
    // timeline: a canvas with a line per series and a legend
    assert.equal(await page.getByTestId("timeline").locator("canvas").count(), 1);
    assert.match(await page.locator(".tl-legend").textContent(), /env=test/);
    // flame graph: a canvas with the profile; main.burn drawn
    const fg = page.getByTestId("flamegraph");
    assert.ok(+(await fg.getAttribute("data-nodes")) > 5);
    assert.ok(await frameAt("main.burn"), "main.burn is drawn");
    // top table: main.burn has the most self time
    const first = page.getByTestId("top-table").locator("tbody tr").first();
    assert.equal(await first.getAttribute("data-name"), "main.burn");
    assert.match(await first.locator("td").nth(1).textContent(), /\d (ms|s)$/);
    assert.match(await first.locator("td").nth(2).textContent(), /%$/);
    // upload: a file picker
    assert.equal(await page.getByTestId("upload").locator("input[type=file]").count(), 1);
    // exports point at the render API with the same query
    for (const f of ["pprof", "folded", "svg", "speedscope"]) {
        const href = await page.getByTestId("export-" + f).getAttribute("href");
        const u = new URL(href, BASE);
        assert.equal(u.pathname, "/api/v1/render");
        assert.equal(u.searchParams.get("format"), f);
        assert.equal(u.searchParams.get("query"), GOPROG);
    }
    const svg = await page.request.get(new URL(await page.getByTestId("export-svg").getAttribute("href"), BASE).href);
    assert.equal(svg.status(), 200);
    assert.match(await svg.text(), /<svg[\s\S]*main\.burn/);
    await shot("01-explore");
});

test("hover shows self and total with shares; click zooms; breadcrumb, reset, back", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const main = await frameAt("main.main");
    await page.mouse.move(main.x, main.y);
    const tip = page.locator(".tooltip");
    await tip.waitFor({ state: "visible" });
    const text = await tip.textContent();
    assert.match(text, /main\.main/);
    assert.match(text, /Total.*%.*%/s);
    assert.match(text, /Self/);
    assert.match(text, /of parent/);
    await page.mouse.click(main.x, main.y);
    await page.waitForFunction(() => new URL(location.href).searchParams.get("zoom"));
    assert.equal(params().get("zoom"), "runtime.main;main.main");
    const crumbs = await page.locator(".fg-breadcrumb .crumb").allTextContents();
    assert.deepEqual(crumbs, ["all", "runtime.main", "main.main"]);
    // main.main now spans the whole width
    const z = await frameAt("main.main");
    const width = await page.evaluate(() => window.scorch.view.flame.fg.width);
    assert.ok(Math.abs(z.w - width) < 1, `zoomed width ${z.w} of ${width}`);
    await shot("02-zoomed");
    // a deeper frame, then reset
    const burn = await frameAt("main.burn");
    await page.mouse.click(burn.x, burn.y);
    await page.waitForFunction(() => /main\.burn$/.test(new URL(location.href).searchParams.get("zoom") || ""));
    await page.getByTestId("reset-zoom").click();
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("zoom"));
    // back: main.burn zoomed again, from the URL; back again: main.main
    await page.goBack();
    await page.waitForFunction(() => /main\.burn$/.test(new URL(location.href).searchParams.get("zoom") || ""));
    await page.goBack();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("zoom") === "runtime.main;main.main");
    assert.equal((await page.locator(".fg-breadcrumb .crumb.current").textContent()), "main.main");
    // a reload keeps the zoom
    const t = Date.now() - 1;
    await page.reload();
    await loaded(t);
    assert.equal((await page.locator(".fg-breadcrumb .crumb.current").textContent()), "main.main");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("zoom"));
});

test("search highlights matches and shows their share", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    await page.keyboard.press("/");
    await page.keyboard.type("main\\.(burn|spin)");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("search") === "main\\.(burn|spin)");
    const share = page.getByTestId("search-share");
    await page.waitForFunction(() => /%/.test(document.querySelector('[data-testid="search-share"]').textContent));
    const s = await share.textContent();
    assert.match(s, /^2 functions, \d+ frames?: .* · \d+\.\d\d% of total$/);
    const pct = parseFloat(s.match(/([\d.]+)% of total/)[1]);
    assert.ok(pct > 50 && pct <= 100, s);
    // matches keep their colour, others are dimmed
    const colors = await page.evaluate(() => {
        const fg = window.scorch.view.flame.fg;
        const m = fg.model, c = fg.ctx, dpr = fg.dpr;
        const at = (name) => {
            for (let i = 0; i < m.n; i++) {
                if (m.names[m.name[i]] !== name) continue;
                const r = fg.rectOf(i);
                if (!r || r.w < 4) continue;
                const d = c.getImageData(Math.floor((r.x + 2) * dpr), Math.floor((r.y + 2) * dpr), 1, 1).data;
                return [d[0], d[1], d[2]];
            }
            return null;
        };
        return { burn: at("main.burn"), main: at("runtime.main") };
    });
    assert.deepEqual(colors.main, [0xe4, 0xe4, 0xe4], "runtime.main dimmed");
    assert.notDeepEqual(colors.burn, [0xe4, 0xe4, 0xe4], "main.burn coloured");
    await shot("03-search");
    await page.getByTestId("search").fill("");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("search"));
});

test("top table: sort, filter, click selects the frame in the flame graph", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const table = page.getByTestId("top-table");
    await table.locator("th", { hasText: /^Total/ }).first().click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("sort") === "-total");
    const firstName = await table.locator("tbody tr").first().getAttribute("data-name");
    assert.ok(["runtime.main", "main.main"].includes(firstName), firstName);
    await table.locator("th", { hasText: /^Function/ }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("sort") === "name");
    const names = await table.locator("tbody tr").evaluateAll((trs) => trs.map((t) => t.dataset.name));
    assert.deepEqual(names, [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    await page.locator(".tt-filter").fill("main.");
    const filtered = await table.locator("tbody tr[data-name]").evaluateAll((trs) => trs.map((t) => t.dataset.name));
    assert.ok(filtered.length >= 3 && filtered.every((n) => n.includes("main.")), filtered.join(","));
    await table.locator('tr[data-name="main.spin"] td.name').click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("search") === "^main\\.spin$");
    assert.equal(await page.getByTestId("search").inputValue(), "^main\\.spin$");
    assert.match(await page.getByTestId("search-share").textContent(), /^1 function/);
    assert.ok(await table.locator('tr.selected[data-name="main.spin"]').isVisible());
    await shot("04-table-select");
    await page.locator(".tt-filter").fill("");
});

test("right-click: copy, focus, ignore, hide set the query's filters; sandwich", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    let spin = await frameAt("main.spin");
    await page.mouse.click(spin.x, spin.y, { button: "right" });
    const menu = page.getByTestId("context-menu");
    await menu.waitFor();
    const items = await menu.locator("button").allTextContents();
    for (const want of ["Copy name", "Focus on this function", "Ignore stacks with it", "Hide this frame", "Sandwich view"])
        assert.ok(items.includes(want), want + " in " + items.join(","));
    await shot("05-menu");
    await menu.getByText("Copy name").click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "main.spin");
    // focus: only stacks through main.spin remain
    spin = await frameAt("main.spin");
    await page.mouse.click(spin.x, spin.y, { button: "right" });
    let t = await loadedAt();
    await menu.getByText("Focus on this function").click();
    await loaded(t);
    assert.equal(params().get("focus"), "^main\\.spin$");
    assert.ok(await page.locator('.chip[data-filter="focus"]').isVisible());
    assert.equal(await frameAt("main.burn"), null, "main.burn is gone under focus");
    assert.ok(await frameAt("main.spin"));
    // remove the chip, then ignore main.burn
    t = await loadedAt();
    await page.locator('.chip[data-filter="focus"] button').click();
    await loaded(t);
    const burn = await frameAt("main.burn");
    await page.mouse.click(burn.x, burn.y, { button: "right" });
    t = await loadedAt();
    await menu.getByText("Ignore stacks with it").click();
    await loaded(t);
    assert.equal(params().get("ignore"), "^main\\.burn$");
    assert.equal(await frameAt("main.burn"), null);
    // hide main.main: its callees move up to runtime.main
    const mm = await frameAt("main.main");
    await page.mouse.click(mm.x, mm.y, { button: "right" });
    t = await loadedAt();
    await menu.getByText("Hide this frame").click();
    await loaded(t);
    assert.equal(params().get("hide"), "^main\\.main$");
    assert.equal(await frameAt("main.main"), null);
    assert.deepEqual(await page.evaluate(() => {
        const m = window.scorch.view.flame.model;
        const i = m.names.indexOf("main.spin");
        for (let n = 0; n < m.n; n++) if (m.name[n] === i) return m.names[m.name[m.parent[n]]];
        return null;
    }), "runtime.main");
    await shot("06-filters");
    // the filters went to the API: the table agrees
    assert.equal(await page.getByTestId("top-table").locator('tr[data-name="main.burn"]').count(), 0);
    // back to no filters, then the sandwich of main.step (inlined into main.spin)
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    spin = await frameAt("main.spin");
    await page.mouse.click(spin.x, spin.y, { button: "right" });
    await menu.getByText("Sandwich view").click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("sandwich") === "main.spin");
    const sw = page.getByTestId("sandwich");
    await sw.waitFor();
    assert.match(await sw.textContent(), /Sandwich: main\.spin/);
    await page.waitForTimeout(100);
    assert.ok(await frameAt("main.main", "fgCallers"), "callers show main.main");
    assert.ok(await frameAt("main.step", "fgCallees"), "callees show main.step");
    await shot("07-sandwich");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("sandwich"));
});

test("orientation and layout", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    const before = await frameAt("testing.(*B).runN");
    await page.locator('.seg[aria-label="orient"] button', { hasText: "Flame" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("orient") === "flame");
    await page.waitForTimeout(100);
    const flipped = await frameAt("testing.(*B).runN");
    assert.ok(flipped && flipped.y > before.y, `root at the bottom: ${before.y} -> ${flipped && flipped.y}`);
    await shot("08-flame-orientation");
    await page.locator('.seg[aria-label="layout"] button', { hasText: "Table" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("layout") === "table");
    assert.ok(!(await page.getByTestId("flamegraph").isVisible()));
    assert.ok(await page.getByTestId("top-table").isVisible());
    await page.locator('.seg[aria-label="layout"] button', { hasText: "Flame graph" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("layout") === "flame");
    assert.ok(await page.getByTestId("flamegraph").isVisible());
    assert.ok(!(await page.getByTestId("top-table").isVisible()));
    await page.goBack();
    await page.goBack();
    await page.goBack();
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("orient"));
});

test("brushing the timeline selects the range the flame graph and table show", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    const box = await page.getByTestId("timeline").locator("canvas").boundingBox();
    const renders = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/render")) renders.push(new URL(r.url())); };
    page.on("request", onReq);
    const t = await loadedAt();
    // the last third of the hour
    await page.mouse.move(box.x + box.width * 0.62, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.97, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await loaded(t);
    page.off("request", onReq);
    const from = +params().get("sel_from"), until = +params().get("sel_until");
    const now = Date.now() / 1000;
    assert.ok(until > from && from > now - 1800 && until <= now + 60, `${from}..${until}`);
    assert.ok(renders.length >= 2);
    for (const u of renders) {
        assert.equal(u.searchParams.get("from"), String(from));
        assert.equal(u.searchParams.get("until"), String(until));
    }
    assert.match(await page.locator(".sel-info").textContent(), /Selected/);
    // fewer samples than the whole hour
    const all = await page.request.get(BASE + "api/v1/render?" + new URLSearchParams({
        query: APP, type: "cpu:cpu", from: "now-1h", until: "now", format: "top" }));
    const total = (await all.json()).total;
    const shown = +(await page.getByTestId("flamegraph").getAttribute("data-total"));
    assert.ok(shown > 0 && shown < total, `selection ${shown} of ${total}`);
    // hover: a tooltip with the time and values
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.locator(".tl-tip").waitFor();
    assert.match(await page.locator(".tl-tip").textContent(), /\d\d:\d\d:\d\d.*bench=/s);
    await shot("09-brushed");
    // zoom in: the selection becomes the range
    const t2 = await loadedAt();
    await page.getByTestId("zoom-selection").click();
    await loaded(t2);
    assert.equal(params().get("from"), String(from));
    assert.equal(params().get("sel_from"), null);
    await page.goBack();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("from") === "now-1h");
});

test("timeline lines per label value; flame graph detail", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    assert.equal(await page.locator(".tl-legend .tl-key").count(), 3);
    await page.locator(".group-by").selectOption("env");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("group_by") === "env");
    await page.waitForFunction(() => document.querySelectorAll(".tl-legend .tl-key").length === 1);
    assert.equal(await page.locator(".tl-legend").textContent(), "env=test");
    const before = +(await page.getByTestId("flamegraph").getAttribute("data-nodes"));
    const renders = [];
    const onReq = (r) => { if (r.url().includes("format=json")) renders.push(new URL(r.url())); };
    page.on("request", onReq);
    const t = await loadedAt();
    await page.getByTestId("max-nodes").selectOption("100000");
    await loaded(t);
    page.off("request", onReq);
    assert.equal(params().get("maxNodes"), "100000");
    assert.equal(renders[0].searchParams.get("maxNodes"), "100000");
    const nodes = +(await page.getByTestId("flamegraph").getAttribute("data-nodes"));
    assert.ok(nodes >= before && before > 100, `${before} -> ${nodes} nodes`);
});

test("autocomplete of label names and values; Enter runs the query", async () => {
    await open({ query: "", type: "cpu:cpu", from: "now-1h", until: "now" });
    const input = page.getByTestId("query-input");
    await input.click();
    await input.fill("");
    await input.type("{serv");
    const list = page.locator("#completions");
    await list.waitFor();
    assert.deepEqual(await list.locator("li").allTextContents(), ["labelservice_name"]);
    await page.keyboard.press("Tab");
    assert.equal(await input.inputValue(), '{service_name=""}');
    await page.waitForFunction(() => /goprog/.test(document.querySelector("#completions").textContent));
    const values = await list.locator("li").allTextContents();
    assert.ok(values.some((v) => v.endsWith("app")) && values.some((v) => v.endsWith("goprog")), values.join(","));
    await shot("10-autocomplete");
    await page.keyboard.type("gop");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(await input.inputValue(), '{service_name="goprog"}');
    const t = await loadedAt();
    await page.keyboard.press("Enter");
    await loaded(t);
    assert.equal(params().get("query"), GOPROG);
    assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.burn");
});

test("profile type and time range; relative ranges stay relative", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    let t = await loadedAt();
    await page.getByTestId("type-select").selectOption("heap:alloc_space");
    await loaded(t);
    assert.equal(params().get("type"), "heap:alloc_space");
    assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.grow");
    assert.match(await page.getByTestId("top-table").locator("tbody tr td").nth(1).textContent(), /(KiB|MiB|GiB)$/);
    t = await loadedAt();
    await page.locator("#range-select").selectOption({ label: "Last 6 hours" });
    await loaded(t);
    assert.equal(params().get("from"), "now-6h");
    assert.equal(params().get("until"), "now");
    t = await loadedAt();
    await page.reload();
    await loaded(t);
    assert.equal(params().get("from"), "now-6h");
    assert.equal(await page.locator("#range-select").inputValue(), "now-6h|now");
    // custom range
    t = await loadedAt();
    await page.locator("#range-select").selectOption("custom");
    await page.locator("#from-input").fill("now-3h");
    await page.locator("#until-input").fill("now-1m");
    await page.locator("#range-apply").click();
    await loaded(t);
    assert.equal(params().get("from"), "now-3h");
    assert.equal(params().get("until"), "now-1m");
});

test("a bad selector shows the parser's message; an empty range says what to do", async () => {
    allowed = [/status of 400/];
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const input = page.getByTestId("query-input");
    await input.fill("{service_name=}");
    await input.press("Enter");
    const err = page.getByTestId("query-error");
    await err.waitFor();
    assert.match(await err.textContent(), /bad selector at offset \d+/);
    assert.match(await page.locator(".flame-panel .panel-msg.error").textContent(), /bad selector/);
    await shot("11-bad-selector");
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-7d", until: "now-6d" });
    const msg = page.locator(".flame-panel .panel-msg.empty");
    await msg.waitFor();
    assert.match(await msg.textContent(), /No cpu samples for \{service_name="goprog"\} in this time range/);
    assert.match(await msg.textContent(), /Widen the time range/);
    assert.match(await page.locator(".timeline-panel .panel-msg.empty").textContent(), /No cpu profiles/);
    await shot("12-empty");
});

test("upload by the picker and by dropping a file", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const file = process.env.UPLOAD_FILE;
    let t = await loadedAt();
    await page.getByTestId("upload").locator("input[type=file]").setInputFiles(file);
    await loaded(t);
    const name = basename(file);
    assert.equal(params().get("query"), `{service_name="upload", file="${name}"}`);
    assert.match(params().get("type"), /^heap:/);
    assert.ok(+(await page.getByTestId("flamegraph").getAttribute("data-nodes")) > 5);
    assert.match(await page.locator("#status").textContent(), /Uploaded/);
    // shown around the upload's time: an absolute range, readable in the custom inputs
    assert.match(params().get("from"), /^\d{10}$/);
    assert.match(await page.locator("#from-input").inputValue(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(await page.getByTestId("top-table").locator("tbody tr").count() > 3);
    await shot("13-uploaded");
    // drop folded stacks on the page
    t = await loadedAt();
    await page.evaluate(() => {
        const dt = new DataTransfer();
        dt.items.add(new File(["main;parse;lex 30\nmain;run;compute 70\n"], "dropped.folded"));
        for (const type of ["dragenter", "dragover", "drop"])
            window.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await loaded(t);
    assert.equal(params().get("query"), '{service_name="upload", file="dropped.folded"}');
    assert.ok(await frameAt("compute"));
    const top = await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name");
    assert.equal(top, "compute");
    assert.ok(await page.locator("#drop").isHidden());
    await shot("14-dropped");
});

test("the token: asked for on 401, then sent as a bearer header", async () => {
    // the server here has no token: fake its 401 for requests without the header
    allowed = [/status of 401/];
    await page.route("**/api/v1/**", (route) => {
        const auth = route.request().headers().authorization;
        if (auth === "Bearer t0ken") return route.continue();
        return route.fulfill({ status: 401, contentType: "application/json",
                               body: '{"error":"missing or wrong bearer token"}' });
    });
    try {
        await page.goto(q({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" }));
        const box = page.locator("#auth");
        await box.waitFor();
        assert.match(await box.textContent(), /needs an API token/);
        const t = await loadedAt();
        await page.locator("#token-input").fill("t0ken");
        await page.locator("#token-input").press("Enter");
        await loaded(t);
        assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.burn");
        assert.equal(await page.evaluate(() => localStorage.getItem("scorch_token")), "t0ken");
        assert.match(await page.evaluate(() => document.cookie), /scorch_token=t0ken/);
    } finally {
        await page.unroute("**/api/v1/**");
        await page.evaluate(() => window.scorch.api.setToken(""));
    }
});

test("targets page: health per target and profile, the scraper's errors, a row opens explore", async () => {
    const ok = process.env.TARGET_OK, bad = process.env.TARGET_BAD, down = process.env.TARGET_DOWN;
    assert.ok(ok && bad && down, "set TARGET_OK, TARGET_BAD, TARGET_DOWN");
    await page.goto(q({ view: "targets" }));
    const panel = page.getByTestId("targets");
    await panel.waitFor();
    assert.ok(await page.locator("#querybar").isHidden(), "no query bar on the targets page");
    // every target has been scraped once (interval 2 s; the page refreshes every 5 s)
    const target = (i) => panel.locator(`.target[data-instance="${i}"]`);
    await page.waitForFunction(([a, b, c]) => [a, b, c].every((i) => {
        const t = document.querySelector(`.target[data-instance="${i}"] h3 .health`);
        return t && t.textContent !== "unknown";
    }), [ok, bad, down], { timeout: 20000 });
    assert.equal(await target(ok).locator("h3 .health").textContent(), "up");
    assert.equal(await target(bad).locator("h3 .health").textContent(), "down");
    assert.equal(await target(down).locator("h3 .health").textContent(), "down");
    assert.match(await target(ok).locator("h3").textContent(), /fakejob/);
    assert.match(await target(ok).locator("h3 .labels").textContent(), /team=ui/);
    // one row per configured profile type, in the configured set only
    const profiles = await target(ok).locator("tbody tr").evaluateAll((rs) => rs.map((r) => r.dataset.profile));
    assert.deepEqual(profiles.sort(), ["goroutine", "threadcreate"]);
    assert.equal(await target(ok).locator("td.err").first().textContent(), "");
    // the reasons are the scraper's own: a profile that does not decode, a refused connection
    assert.match(await target(bad).locator("td.err").first().textContent(), /\S/);
    assert.match(await target(down).locator("td.err").first().textContent(), /refused|connect/i);
    assert.notEqual(await target(bad).locator("td.err").first().textContent(),
                    await target(down).locator("td.err").first().textContent());
    await shot("15-targets");
    // the goroutine row opens explore on that target's series
    await target(ok).locator('tr[data-profile="goroutine"] a').click();
    await loaded(0);
    assert.equal(params().get("view"), null); // explore is the default
    assert.equal(params().get("type"), "goroutine:goroutine");
    assert.equal(params().get("query"), `{service_name="fakejob",job="fakejob",instance="${ok}"}`);
    assert.ok(await frameAt("main.fake"), "the scraped stack is drawn");
    assert.ok(await page.locator("#querybar").isVisible());
});
