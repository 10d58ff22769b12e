// browser.e2e.mjs - the web UI in headless Chromium against a running scorch server that
// holds the data tests/e2e/ui_browser.sh pushed: service "app" (Go benchmarks' CPU
// profiles over the last hour, one heap profile) and "goprog" (main.burn is its hot spot).
// Checks the page's data-testid hooks, then uses the page: zoom, tooltip, search, context menu
// filters, sandwich, top table, orientation and layout, timeline brush, autocomplete,
// time ranges, history, errors, empty ranges, upload by picker and by drop, exports.
// Any page error or console error fails the test. Screenshots go to $ARTIFACTS.
//
// env: SCORCH_URL (the server, ending in '/'), ARTIFACTS (a directory), CHROMIUM,
// UPLOAD_FILE (a pprof file to upload), BURSTS ("yes" when service "bursts" holds a perf
// capture of tests/data/bursts: 200 ms of burst_compute at the start of every second)
import { test } from "node:test";
import assert from "node:assert/strict";
import { basename } from "node:path";
import {
    BASE, page, allow, q, shot, params, setup, loaded, loadedAt, timelineLoaded, drawn, until, open, frameAt,
    diffLoaded, diffLoadedAt, diffFrame, isRed, isBlue, NEUTRAL, drag, heatmapBox, cellPoint,
} from "./browser-lib.mjs";

const GOPROG = '{service_name="goprog"}';
const APP = '{service_name="app"}';

setup();

test("every explore hook is there and holds what it should", async () => {
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
    await timelineLoaded();
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
    await drawn();
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
    // the two graphs are laid out when their box shows
    await until("callers show main.main", () => frameAt("main.main", "fgCallers"));
    // the callees: main.spin's heaviest callee in the main graph (main.step when the samples
    // caught the inlined helper; a profile of ~30 samples in main.spin may not)
    const callee = await page.evaluate(() => {
        const m = window.scorch.view.flame.fg.model;
        let best = null, w = 0;
        for (let i = 0; i < m.n; i++)
            if (m.parent[i] >= 0 && m.names[m.name[m.parent[i]]] === "main.spin" && m.total[i] > w)
                best = m.names[m.name[i]], w = m.total[i];
        return best;
    });
    if (callee) await until(`callees show ${callee}`, () => frameAt(callee, "fgCallees"));
    else await until("callees show main.spin", () => frameAt("main.spin", "fgCallees"));
    await shot("07-sandwich");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("sandwich"));
});

test("orientation and layout", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    const before = await frameAt("testing.(*B).runN");
    await page.locator('.seg[aria-label="orient"] button', { hasText: "Flame" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("orient") === "flame");
    await until(`root at the bottom (it was at y ${before.y})`, () => frameAt("testing.(*B).runN"),
                (f) => f && f.y > before.y);
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
    await timelineLoaded(); // a brush needs the timeline's data
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
    // one merge per load: the flame graph and the table come in one answer
    assert.equal(renders.length, 1, renders.map(String).join(" "));
    assert.equal(renders[0].searchParams.get("top"), "1");
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
    await timelineLoaded();
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
    allow(/status of 400/);
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
    await timelineLoaded();
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
    allow(/status of 401/);
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
    }), [ok, bad, down], { timeout: 60000 });
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

// ---- part 2: one merge per load, heatmap, call graph, source, single profiles ----

test("a view load asks the server once for the flame graph and the table", async () => {
    const reqs = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/render")) reqs.push(new URL(r.url())); };
    page.on("request", onReq);
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    // both of the view's requests answered: a second render would have been asked for by now
    await timelineLoaded();
    page.off("request", onReq);
    assert.equal(reqs.length, 1, reqs.map(String).join(" "));
    assert.equal(reqs[0].searchParams.get("format"), "json");
    assert.equal(reqs[0].searchParams.get("top"), "1");
    // the table came with it
    assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.burn");
});

const BURSTS = '{service_name="bursts"}';

test("heatmap: the bursts are a band; a drag over it in one column selects that second's burst", async (t) => {
    if (process.env.BURSTS !== "yes") {
        t.skip("no perf capture (perf events unavailable here; see the test's log)");
        return;
    }
    await page.goto(q({ view: "heatmap", query: BURSTS, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    assert.equal(hm.rows, 50);
    assert.equal(hm.row0, "bottom");
    assert.equal(hm.secs, 1);
    assert.ok(hm.cols >= 5 && hm.cols <= 7, `cols ${hm.cols}`);
    // the server's counts: the first 10 rows (200 ms) of every full second hold the burst
    const doc = await (await page.request.get(BASE + "api/v1/heatmap?" + new URLSearchParams({
        query: BURSTS, type: "cpu:cpu-clock", from: "now-1h", until: "now" }))).json();
    // (on a loaded machine the program does not always get its CPU: the full second with
    // the clearest burst is the one dragged over)
    const avg = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    let mid = 1;
    for (let c = 1; c < doc.cols - 1; c++)
        if (avg(doc.values[c].slice(1, 9)) > avg(doc.values[mid].slice(1, 9))) mid = c;
    const band = doc.values[mid].slice(1, 9), rest = doc.values[mid].slice(12);
    assert.ok(avg(band) >= 2 && avg(band) > 3 * Math.max(0.25, avg(rest)), `band ${band} vs ${rest}`);
    // drawn as a band: the band's cells darker than the rest of the second
    const lum = await page.getByTestId("heatmap").evaluate((cv, args) => {
        const { col, cols, rows } = args;
        const c = cv.getContext("2d");
        const row = (r) => {
            const x = Math.floor(((col + 0.5) * cv.width) / cols);
            const y = Math.floor(((rows - 1 - r + 0.5) * cv.height) / rows);
            const d = c.getImageData(x, y, 1, 1).data;
            return 0.3 * d[0] + 0.59 * d[1] + 0.11 * d[2];
        };
        const mean = (a, b) => {
            let s = 0;
            for (let r = a; r < b; r++) s += row(r);
            return s / (b - a);
        };
        return { band: mean(1, 9), rest: mean(12, rows) };
    }, { col: mid, cols: hm.cols, rows: hm.rows });
    assert.ok(lum.band < lum.rest - 30, `band ${lum.band} vs rest ${lum.rest}`);
    // hover: the cell's time and count
    const p = cellPoint(hm, mid, 5);
    await page.mouse.move(p.x, p.y);
    await page.locator(".hm-tip").waitFor();
    assert.match(await page.locator(".hm-tip").textContent(), /\d\d:\d\d:\d\d \+100–120 ms.*\d+ samples?/s);
    await shot("16-heatmap");
    // drag from 40 ms to 160 ms of the middle column
    const a = cellPoint(hm, mid, 2), b = cellPoint(hm, mid, 7);
    const renders = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/render")) renders.push(new URL(r.url())); };
    page.on("request", onReq);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(a.x, (a.y + b.y) / 2, { steps: 4 });
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    await loaded(0);
    page.off("request", onReq);
    const sec = Math.floor(doc.start) + mid;
    const from = params().get("sel_from"), until = params().get("sel_until");
    assert.match(from, /^\d+\.\d{3}$/);
    assert.equal(from, `${sec}.040`);
    assert.equal(until, `${sec}.160`);
    assert.equal(renders.length, 1);
    assert.equal(renders[0].searchParams.get("from"), from);
    assert.equal(renders[0].searchParams.get("until"), until);
    // the flame graph of that span: the burst's functions, nothing of the rest of the second
    const names = await page.evaluate(() => {
        const m = window.scorch.view.flame.model;
        return m ? [...new Set(Array.from(m.name, (i) => m.names[i]))] : [];
    });
    assert.ok(names.includes("burst_compute"), names.join(","));
    assert.ok(!names.includes("idle_work"), names.join(","));
    const top = await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name");
    assert.equal(top, "burst_compute");
    // the samples of the selected cells: each a cpu-clock period of about 2 ms (499 Hz)
    const counted = doc.values[mid].slice(2, 8).reduce((x, y) => x + y, 0);
    const total = +(await page.getByTestId("flamegraph").getAttribute("data-total"));
    assert.ok(counted >= 3 && total / counted > 1.6e6 && total / counted < 2.4e6,
              `${total} ns for ${counted} samples`);
    await shot("17-heatmap-selected");
    // a second span (shift-drag) in the next column's quiet part, and compare
    await drag(cellPoint(hm, mid + 1, 20), cellPoint(hm, mid + 1, 40), { shift: true });
    const cmp = page.getByTestId("heatmap-compare");
    await cmp.waitFor();
    const u = new URL(await cmp.getAttribute("href"), BASE);
    assert.equal(u.searchParams.get("view"), "diff");
    assert.equal(u.searchParams.get("base_from"), from);
    assert.equal(u.searchParams.get("base_until"), until);
    assert.equal(u.searchParams.get("from"), `${sec + 1}.400`);
    assert.equal(u.searchParams.get("until"), `${sec + 1}.820`);
    assert.equal(u.searchParams.get("query"), BURSTS);
    await shot("18-heatmap-two-spans");
    // the other orientation: row 0 at the top, the same cells under the pointer
    await page.getByTestId("heatmap-row0").click();
    await page.waitForFunction(() => document.querySelector('[data-testid="heatmap"]').dataset.row0 === "top");
    const top0 = await heatmapBox();
    const p2 = cellPoint(top0, mid, 5);
    await page.mouse.move(p2.x, p2.y);
    await page.waitForFunction(() => /\+100–120 ms/.test(document.querySelector(".hm-tip")?.textContent || ""));
});

test("call graph: the server's graph, pan and zoom, node count, a click focuses", async () => {
    await page.goto(q({ view: "callgraph", query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" }));
    const box = page.getByTestId("callgraph");
    await page.waitForFunction(() => +(document.querySelector('[data-testid="callgraph"]')?.dataset.loaded || 0) > 0,
                               null, { timeout: 60000 });
    const titles = await box.locator("g.node title").allTextContents();
    assert.ok(titles.length > 3, titles.join(","));
    const tips = await box.locator("g.node a").evaluateAll((as) => as.map((a) =>
        a.getAttribute("xlink:title") || a.getAttributeNS("http://www.w3.org/1999/xlink", "title")));
    assert.ok(tips.some((t) => /^main\.burn \(/.test(t)), tips.join("|"));
    assert.ok(tips.some((t) => /^main\.spin \(/.test(t)), tips.join("|"));
    await shot("19-callgraph");
    // zoom with the wheel around the pointer, pan by dragging
    const bb = await box.boundingBox();
    const t0 = await page.evaluate(() => window.scorch.view.transform());
    await page.mouse.move(bb.x + bb.width / 2, bb.y + bb.height / 2);
    await page.mouse.wheel(0, -400); // (does not wait for the page to handle it)
    const t1 = await until(`the wheel zooms in from ${t0.k}`,
                           () => page.evaluate(() => window.scorch.view.transform()), (t) => t.k > t0.k * 1.5);
    await page.mouse.move(bb.x + 40, bb.y + 40);
    await page.mouse.down();
    await page.mouse.move(bb.x + 140, bb.y + 90, { steps: 5 });
    await page.mouse.up();
    const t2 = await page.evaluate(() => window.scorch.view.transform());
    assert.ok(Math.abs(t2.x - t1.x - 100) < 2 && Math.abs(t2.y - t1.y - 50) < 2, JSON.stringify([t1, t2]));
    // node count: fewer nodes
    await page.getByTestId("nodecount").selectOption("20");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("nodecount") === "20");
    await page.waitForFunction(() => !document.querySelector(".callgraph-panel").classList.contains("loading"));
    // a click on main.burn focuses on it
    await page.getByTestId("callgraph").locator("g.node").filter({ hasText: "burn" }).first().click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("focus") === "^main\\.burn$");
    await page.waitForFunction(() => !document.querySelector(".callgraph-panel").classList.contains("loading") &&
        document.querySelector('.filters [data-filter="focus"]'));
    const after = await box.locator("g.node a").evaluateAll((as) => as.map((a) =>
        a.getAttribute("xlink:title") || a.getAttributeNS("http://www.w3.org/1999/xlink", "title")));
    assert.ok(after.some((t) => /^main\.burn \(/.test(t)), after.join("|"));
    assert.ok(!after.some((t) => /^main\.spin \(/.test(t)), "focus drops the other branch: " + after.join("|"));
    await shot("20-callgraph-focused");
});

test("source view from a frame and from a table row: lines with values, the hottest in view", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    // from the top table's row
    const row = page.getByTestId("top-table").locator('tbody tr[data-name="main.burn"]');
    await row.hover();
    await row.locator(".tt-source").click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "source");
    assert.equal(params().get("function"), "main.burn");
    const sv = page.getByTestId("source-view");
    await page.waitForFunction(() => +(document.querySelector('[data-testid="source-view"]')?.dataset.loaded || 0) > 0);
    const hot = sv.locator("tr.hottest");
    assert.equal(await hot.count(), 1);
    assert.match(await hot.locator("td.code").textContent(), /acc = acc\*2862933555777941757/);
    assert.notEqual((await hot.locator("td.num").first().textContent()).trim(), ".");
    assert.ok(await sv.locator("tr.src-line").count() > 5, "the text around the sampled lines");
    assert.match(await sv.locator(".routine-head").first().textContent(), /main\.burn.*main\.go/s);
    assert.equal(await sv.getByTestId("source-missing").count(), 0);
    // scrolled so the hottest line is visible
    const hb = await hot.boundingBox(), body = await sv.locator(".src-body").boundingBox();
    assert.ok(hb.y >= body.y && hb.y + hb.height <= body.y + body.height, "hottest line in view");
    await shot("21-source");
    // from a frame's menu, for a function whose file is not under the source root
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const f = await frameAt("main.main");
    await page.mouse.click(f.x, f.y, { button: "right" });
    await page.getByTestId("context-menu").getByText("Show source").click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("function") === "main.main");
    await page.waitForFunction(() => document.querySelector('[data-testid="source-view"] tr.src-line'));
    // main.go is there too: same file; a runtime function is not under the root
    await page.goto(q({ view: "source", function: "runtime.main", query: GOPROG, type: "cpu:cpu",
                        from: "now-1h", until: "now" }));
    await page.getByTestId("source-missing").waitFor();
    assert.match(await page.getByTestId("source-missing").textContent(), /could not find file|not found/);
    assert.ok(await sv.locator("tr.src-line").count() >= 1, "the sampled lines without text");
    await shot("22-source-missing");
});

test("a point on the timeline opens that one stored profile", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const list = await (await page.request.get(BASE + "api/v1/profiles?" + new URLSearchParams({
        query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" }))).json();
    assert.equal(list.profiles.length, 1);
    await timelineLoaded();
    // the point of the bucket with a value, where the timeline has drawn it (after an
    // animation frame)
    const pt = await until("the timeline's point", () => page.evaluate(() => new Promise((done) =>
        requestAnimationFrame(() => {
            const tl = window.scorch.view.timeline;
            const d = tl.data;
            const i = d && d.lines.length ? d.lines[0].values.findIndex((x) => x > 0) : -1;
            done(i < 0 || !tl.yScale ? null : tl.pointPosition(0, i));
        }))));
    await page.mouse.click(pt.x, pt.y);
    // the profile opens; a menu instead means the step's listing did not find it alone
    // (CI caught steps that started on a fraction of a second: the timeline's now-1h)
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "profile" ||
        document.querySelector('[data-testid="context-menu"]:not([hidden])'), null, { timeout: 60000 });
    assert.equal(params().get("view"), "profile", "the click opened a menu: " +
        await page.evaluate(() => document.querySelector('[data-testid="context-menu"]')?.textContent));
    assert.equal(params().get("time"), list.profiles[0].time_ns);
    assert.equal(params().get("series"), list.profiles[0].series);
    await loaded(0);
    assert.equal(+(await page.getByTestId("flamegraph").getAttribute("data-total")), list.profiles[0].total);
    assert.match(await page.getByTestId("profile-info").textContent(), /service_name=goprog/);
    assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.burn");
    await shot("23-single-profile");
    await page.getByTestId("profile-back").click();
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("view"));
});

test("a truncated flame graph: zooming into a frame fetches its subtree at full detail", async () => {
    // a tiny maxNodes makes the app's graph truncated
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now", maxNodes: "40" });
    assert.equal(+(await page.getByTestId("flamegraph").getAttribute("data-nodes")), 40);
    assert.match(await page.getByTestId("detail-note").textContent(), /40 heaviest frames/);
    // frames under regexp.(*machine).match, in the graph shown
    const under = () => page.evaluate(() => {
        const m = window.scorch.view.flame.model;
        let n = 0;
        for (let i = 0; i < m.n; i++)
            for (let p = m.parent[i]; p > 0; p = m.parent[p])
                if (m.names[m.name[p]] === "regexp.(*machine).match") {
                    n++;
                    break;
                }
        return n;
    });
    const before = await under();
    const reqs = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/render")) reqs.push(new URL(r.url())); };
    page.on("request", onReq);
    const f = await frameAt("regexp.(*machine).match");
    const t = await loadedAt();
    await page.mouse.click(f.x, f.y);
    await loaded(t);
    page.off("request", onReq);
    assert.equal(reqs.length, 1);
    assert.equal(reqs[0].searchParams.get("focus"), "^regexp\\.\\(\\*machine\\)\\.match$");
    assert.match(params().get("zoom"), /regexp\.\(\*machine\)\.match$/);
    assert.match(await page.getByTestId("detail-note").textContent(), /subtree (at full|in more) detail/);
    // the zoomed frame's subtree has more frames than the truncated graph had under it
    const after = await under();
    assert.ok(after > before, `${before} -> ${after} frames under regexp.(*machine).match`);
    await shot("24-detail");
    // Escape: back to the whole (truncated) graph
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("zoom"));
    await page.waitForFunction(() => /40 heaviest/.test(document.querySelector('[data-testid="detail-note"]').textContent));
});

// ---- the diff view ----

// Service "cmp" (ui_browser.sh): six pushes a side, load="low" 50 to 45 minutes before
// CMP_NOW, load="high" 25 to 20 minutes before; main.grow's share grows, main.steady's not.
const CMP = '{service_name="cmp"}';
const CMP_NOW = +process.env.CMP_NOW;
const cmpSides = () => ({ view: "diff", type: "cpu:samples", query: CMP,
                          base_from: String(CMP_NOW - 3100), base_until: String(CMP_NOW - 2600),
                          from: String(CMP_NOW - 1600), until: String(CMP_NOW - 1100) });

// Waits until the diff view has shown data newer than `since`.

test("diff view from a URL: what is compared and how, the grown function red, a steady one grey, the table", async () => {
    const reqs = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/diff")) reqs.push(new URL(r.url())); };
    page.on("request", onReq);
    const t = Date.now() - 1;
    await page.goto(q(cmpSides()));
    await diffLoaded(t);
    await page.waitForTimeout(200);
    page.off("request", onReq);
    // one request for the graph, one for the table; the totals differ by a sixth, so the
    // default normalises, and the first guess (normalised) needed no second try
    assert.deepEqual(reqs.map((u) => u.searchParams.get("format")).sort(), ["flame", "json"]);
    for (const u of reqs) {
        assert.equal(u.searchParams.get("normalize"), "1");
        assert.equal(u.searchParams.get("base_from"), String(CMP_NOW - 3100));
        assert.equal(u.searchParams.get("from"), String(CMP_NOW - 1600));
    }
    assert.equal(params().get("normalize"), null, "the default is not written into the URL");
    const g = page.getByTestId("diff-flamegraph");
    assert.ok(await g.isVisible());
    assert.equal(await g.getAttribute("data-normalized"), "1");
    assert.equal(await g.getAttribute("data-method"), "replicates");
    // the header: both sides with their replicates, the method, the metric, the level
    const summary = await page.getByTestId("diff-summary").textContent();
    assert.match(summary, /Base\{service_name="cmp"\}.*6 replicates.*New\{service_name="cmp"\}.*6 replicates/s);
    const method = await page.getByTestId("diff-method").textContent();
    assert.match(method, /Welch's t-test on the spread between the profiles of each side/);
    assert.match(method, /share of each replicate's total \(the table's values: share \(%\)\)/);
    assert.match(method, /q < 0\.05/);
    assert.match(method, /normalised: base values ×0\.8\d/);
    assert.match(method, /the default: the totals differ by more than 10%/);
    // colours: main.grow red, main.steady neutral, main.fade blue
    const grow = await diffFrame("main.grow"), steady = await diffFrame("main.steady");
    const fade = await diffFrame("main.fade");
    assert.ok(isRed(grow.rgb), "main.grow red: " + grow.rgb);
    assert.deepEqual(steady.rgb, NEUTRAL, "main.steady neutral");
    assert.ok(isBlue(fade.rgb), "main.fade blue: " + fade.rgb);
    // widths from the new side: main.grow's share of the new total (about 36%)
    const share = grow.w / grow.canvas;
    assert.ok(share > 0.3 && share < 0.42, `main.grow is ${share} of the width`);
    // the table: the grown function first, marked significant; the steady one not
    const rows = page.getByTestId("diff-table").locator("tbody tr[data-name]");
    const first = rows.first();
    assert.equal(await first.getAttribute("data-name"), "main.grow");
    assert.equal(await first.getAttribute("data-significant"), "true");
    assert.equal(await first.getAttribute("data-direction"), "1");
    assert.match(await first.textContent(), /▲main\.growself.*\+\d+\.\d%\+\d+\.\d% … \+\d+\.\d%/);
    const st = page.getByTestId("diff-table").locator('tr[data-name="main.steady"]');
    assert.equal(await st.getAttribute("data-significant"), "false");
    // significant rows come before the others
    const sig = await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.significant));
    assert.ok(sig.indexOf("false") > 0 && !sig.slice(sig.indexOf("false")).includes("true"), sig.join(","));
    // the tooltip: both values and shares, the change, its interval, the verdict
    await page.mouse.move(grow.x, grow.y);
    const tip = page.locator(".diff-tip");
    await tip.waitFor();
    const text = await tip.textContent();
    assert.match(text, /main\.grow/);
    assert.match(text, /Base \(×0\.8\d+\).*%.*New.*%/s);
    assert.match(text, /self\+\d+\.\d%\+\d+\.\d% … \+\d+\.\d%q /);
    assert.match(text, /significant growth/);
    await page.mouse.move(steady.x, steady.y);
    await page.waitForFunction(() => /main\.steady/.test(document.querySelector(".diff-tip")?.textContent || ""));
    assert.match(await tip.textContent(), /within noise/);
    await shot("25-diff");
    // a click on a table row selects the function in the graph: the others dimmed
    await st.locator("td.name").click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("search") === "^main\\.steady$");
    assert.deepEqual((await diffFrame("main.grow")).rgb, [0xf1, 0xf1, 0xf1], "main.grow dimmed");
    assert.deepEqual((await diffFrame("main.steady")).rgb, NEUTRAL, "main.steady as it was");
    assert.match(await page.getByTestId("search-share").textContent(), /^1 function/);
    assert.ok(await st.evaluate((tr) => tr.classList.contains("selected")));
});

test("diff view: switching normalisation changes the drawn widths and what is compared", async () => {
    await page.goto(q(cmpSides()));
    await diffLoaded(0);
    const before = await diffFrame("main.grow");
    const rootBefore = await diffFrame("total");
    assert.ok(Math.abs(rootBefore.w - rootBefore.canvas) < 1, "normalised: the root fills the width");
    const t = await diffLoadedAt();
    await page.getByTestId("normalize").locator("button", { hasText: "Amounts" }).click();
    await diffLoaded(t);
    assert.equal(params().get("normalize"), "0");
    assert.equal(await page.getByTestId("diff-flamegraph").getAttribute("data-normalized"), "0");
    // amounts: both sides drawn to one scale, the new side (the smaller total) narrower
    const { flame } = await page.evaluate(() => window.scorch.view.data());
    const ratio = flame.total / flame.base_total;
    assert.ok(ratio > 0.75 && ratio < 0.92, "new / base total " + ratio);
    const root = await diffFrame("total"), after = await diffFrame("main.grow");
    assert.ok(Math.abs(root.w / root.canvas - ratio) < 0.01, `root ${root.w} of ${root.canvas}, ratio ${ratio}`);
    assert.ok(Math.abs(after.w / before.w - ratio) < 0.01, `main.grow ${before.w} -> ${after.w}`);
    assert.match(await page.getByTestId("diff-method").textContent(), /value per (second of profile|profile)/, "amounts: a rate, not a share");
    assert.match(await page.getByTestId("diff-method").textContent(), /not normalised/);
    await shot("26-diff-amounts");
    // and back: the widths again
    const t2 = await diffLoadedAt();
    await page.getByTestId("normalize").locator("button", { hasText: "Shares" }).click();
    await diffLoaded(t2);
    assert.equal(params().get("normalize"), "1");
    assert.ok(Math.abs((await diffFrame("main.grow")).w - before.w) < 0.5);
});

test("diff view: side by side in the same function colours; base widths; both widths", async () => {
    await page.goto(q({ ...cmpSides(), sides: "1" }));
    await diffLoaded(0);
    await until("main.fade on both sides", async () => [await diffFrame("main.fade", "base"),
                                                        await diffFrame("main.fade", "new")], ([x, y]) => x && y);
    const b = await diffFrame("main.fade", "base"), n = await diffFrame("main.fade", "new");
    assert.deepEqual(b.rgb, n.rgb, "one function, one colour on both sides");
    assert.notDeepEqual((await diffFrame("main.grow", "new")).rgb, n.rgb, "another function, another colour");
    assert.ok(b.w > 2 * n.w, `main.fade shrank: ${b.w} -> ${n.w}`);
    assert.ok(await page.getByTestId("diff-flamegraph").locator(".diff-sides").isVisible());
    await shot("27-diff-side-by-side");
    // one graph again, at the base's widths: main.fade as wide as it was
    await page.getByTestId("sides").locator("button", { hasText: "Diff" }).click();
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("sides"));
    await page.getByTestId("widths").locator("button", { hasText: "Base" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("widths") === "base");
    const atBase = await diffFrame("main.fade");
    assert.ok(Math.abs(atBase.w / atBase.canvas - b.w / b.canvas) < 0.01, "base widths");
    assert.ok(isBlue(atBase.rgb), "still coloured by the change");
    await page.getByTestId("widths").locator("button", { hasText: "Both" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("widths") === "both");
    const both = await diffFrame("main.fade");
    assert.ok(both.w < atBase.w && both.w > (await diffFrame("main.fade")).canvas * 0.05, "both sides' widths");
    // a graph cut by maxNodes says so
    const t = await diffLoadedAt();
    await page.goto(q({ ...cmpSides(), maxNodes: "4" }));
    await diffLoaded(t);
    assert.equal(+(await page.getByTestId("diff-flamegraph").getAttribute("data-nodes")), 4);
    assert.match(await page.getByTestId("diff-note").textContent(), /The 4 heaviest frames of both sides together/);
});

test("load levels: the timeline grouped by a label compares two of its values in one click", async () => {
    await open({ query: CMP, type: "cpu:samples", from: "now-1h", until: "now", group_by: "load" });
    await page.waitForFunction(() => document.querySelectorAll(".tl-legend .tl-key").length === 2);
    const ctl = page.getByTestId("group-compare");
    await ctl.waitFor();
    await ctl.getByTestId("group-base").selectOption("low");
    await ctl.getByTestId("group-new").selectOption("high");
    await shot("28-grouped-timeline");
    const t = Date.now() - 1;
    await ctl.getByTestId("group-compare-go").click();
    await diffLoaded(t);
    assert.equal(params().get("view"), "diff");
    assert.equal(params().get("base_query"), '{service_name="cmp", load="low"}');
    assert.equal(params().get("query"), '{service_name="cmp", load="high"}');
    assert.equal(params().get("base_from"), null, "both over the same range");
    assert.ok(isRed((await diffFrame("main.grow")).rgb));
    assert.deepEqual((await diffFrame("main.steady")).rgb, NEUTRAL);
    assert.equal(await page.getByTestId("diff-table").locator("tbody tr").first().getAttribute("data-name"), "main.grow");
    // the diff view's own picker knows the label and its two values; swapping them swaps the sides
    await page.getByTestId("label-sides").click();
    const picker = page.getByTestId("label-picker");
    await page.waitForFunction(() => !document.querySelector('[data-testid="label-compare"]')?.disabled);
    assert.equal(await picker.getByTestId("label-name").inputValue(), "load");
    assert.equal(await picker.getByTestId("label-base").inputValue(), "low");
    assert.equal(await picker.getByTestId("label-new").inputValue(), "high");
    await shot("29-diff-by-label");
    await picker.getByTestId("label-base").selectOption("high");
    await picker.getByTestId("label-new").selectOption("low");
    const t2 = await diffLoadedAt();
    await picker.getByTestId("label-compare").click();
    await diffLoaded(t2);
    assert.equal(params().get("base_query"), '{service_name="cmp", load="high"}');
    assert.equal(params().get("query"), '{service_name="cmp", load="low"}');
    assert.ok(isBlue((await diffFrame("main.grow")).rgb), "the other way round, main.grow shrank");
});

test("explore: two brushed ranges compare; Compare with... opens the period before", async () => {
    await open({ query: CMP, type: "cpu:samples", from: String(CMP_NOW - 3600), until: String(CMP_NOW) });
    await timelineLoaded(); // a brush needs the timeline's data
    const box = await page.getByTestId("timeline").locator("canvas").boundingBox();
    // the timeline's axis: what the canvas shows of the hour (64 px left, 12 px right)
    const xAt = (t) => box.x + 64 + ((t - (CMP_NOW - 3600)) / 3600) * (box.width - 76);
    const y = box.y + box.height / 2;
    let t = await loadedAt();
    await drag({ x: xAt(CMP_NOW - 3050), y }, { x: xAt(CMP_NOW - 2650), y });
    await loaded(t);
    await drag({ x: xAt(CMP_NOW - 1550), y }, { x: xAt(CMP_NOW - 1150), y }, { shift: true });
    const go = page.getByTestId("compare-ranges");
    await go.waitFor();
    await shot("30-two-ranges");
    const sel = [params().get("sel_from"), params().get("sel_until")];
    t = Date.now() - 1;
    await go.click();
    await diffLoaded(t);
    assert.equal(params().get("view"), "diff");
    assert.deepEqual([params().get("base_from"), params().get("base_until")], sel, "the first range is the base");
    const from = +params().get("from"), until = +params().get("until");
    assert.ok(Math.abs(from - (CMP_NOW - 1550)) < 60 && Math.abs(until - (CMP_NOW - 1150)) < 60, `${from}..${until}`);
    assert.ok(isRed((await diffFrame("main.grow")).rgb));
    // Compare with...: what explore shows against the period before it
    await open({ query: CMP, type: "cpu:samples", from: "now-1h", until: "now" });
    t = Date.now() - 1;
    await page.getByTestId("compare-with").click();
    await diffLoaded(t);
    assert.deepEqual(["view", "from", "until", "base_from", "base_until"].map((k) => params().get(k)),
        ["diff", "now-1h", "now", "now-2h", "now-1h"]);
    // the base side is set here: its range by a preset, its selector by typing
    await page.getByTestId("base-query").fill(CMP);
    t = await diffLoadedAt();
    await page.locator(".diff-base .presets button", { hasText: "same range" }).click();
    await diffLoaded(t);
    assert.deepEqual([params().get("base_from"), params().get("base_until")], ["now-1h", "now"],
        "the same range, said: without a range the base is the period before");
    assert.equal(params().get("base_query"), null, "the same selector as the new side is the default");
});

test("the heatmap's Compare link lands in a working diff view", async () => {
    const SYNTH = '{service_name="synth"}';
    await page.goto(q({ view: "heatmap", query: SYNTH, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    assert.ok(hm.cols >= 4, "cols " + hm.cols);
    // the first 200 ms of the second column, then shift: 400-820 ms of the third
    await drag(cellPoint(hm, 1, 0), cellPoint(hm, 1, 9));
    await loaded(0);
    await drag(cellPoint(hm, 2, 20), cellPoint(hm, 2, 40), { shift: true });
    const cmp = page.getByTestId("heatmap-compare");
    await cmp.waitFor();
    // what the heatmap's request left: its state, and the page's measures of it
    assert.equal(await page.locator(".heatmap-panel").getAttribute("data-state"), "ready");
    const m = await page.evaluate(() => {
        const d = performance.getEntriesByName("scorch:heatmap:draw");
        return { draws: d.length, cols: d[0]?.detail?.cols, fetches: performance.getEntriesByName("scorch:heatmap:fetch").length };
    });
    assert.deepEqual([m.draws, m.fetches], [1, 1]);
    assert.ok(m.cols >= hm.cols, JSON.stringify(m));
    // the diff view through the page's own history: no page load (a page load would lose
    // this window's marker)
    await page.evaluate(() => { window.loadedOnce = "heatmap"; });
    const t = Date.now() - 1;
    await cmp.click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "diff");
    await diffLoaded(t);
    assert.equal(await page.evaluate(() => window.loadedOnce), "heatmap", "the Compare link reloaded the page");
    // and Back is the heatmap again, with its selection
    await page.goBack();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "heatmap");
    assert.equal(params().get("sel_until") !== null, true);
    await page.goForward();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "diff");
    await diffLoaded(t);
    assert.equal(await page.evaluate(() => window.loadedOnce), "heatmap");
    assert.match(params().get("base_from"), /^\d+\.000$/);
    assert.match(params().get("base_until"), /^\d+\.200$/);
    assert.match(params().get("until"), /^\d+\.820$/);
    // the graph at the new side's widths: idle_wait only; hot_loop vanished, said above it
    assert.ok(+(await page.getByTestId("diff-flamegraph").getAttribute("data-nodes")) >= 4);
    assert.ok(await diffFrame("idle_wait"), "idle_wait drawn");
    assert.equal(await diffFrame("hot_loop"), null);
    assert.match(await page.getByTestId("diff-note").textContent(), /1 call path that vanished \(100\.00% of the base side\)/);
    const names = await page.getByTestId("diff-table").locator("tbody tr[data-name]")
        .evaluateAll((trs) => trs.map((tr) => tr.dataset.name));
    assert.ok(names.includes("hot_loop") && names.includes("idle_wait"), names.join(","));
    assert.match(await page.getByTestId("diff-method").textContent(), /Method: /);
    assert.match(await page.getByTestId("diff-summary").textContent(), /\(200 ms\).*\(420 ms\)/s);
    await shot("31-heatmap-compare");
});

test("diff view: a bad base selector is the base side's error, and fixing it there loads", async () => {
    allow(/status of 400/);
    await page.goto(q({ ...cmpSides(), base_query: "{load=}" }));
    const err = page.getByTestId("base-error");
    await err.waitFor();
    assert.match(await err.textContent(), /^'base_query': bad selector at offset \d+/);
    assert.equal(await page.getByTestId("base-query").getAttribute("aria-invalid"), "true");
    assert.ok(await page.getByTestId("query-error").isHidden(), "the query bar's selector is fine");
    assert.match(await page.locator(".diff-graph .panel-msg.error").textContent(), /bad selector/);
    await shot("32-diff-bad-base");
    const t = await diffLoadedAt();
    await page.getByTestId("base-query").fill('{service_name="cmp", load="low"}');
    await page.getByTestId("base-query").press("Enter");
    await diffLoaded(t);
    assert.ok(await err.isHidden());
    assert.equal(params().get("base_query"), '{service_name="cmp", load="low"}');
    assert.ok(isRed((await diffFrame("main.grow")).rgb));
});
