// views.e2e.mjs - the page's views in headless Chromium against the server and data of
// tests/e2e/ui_browser.sh (services "app", "goprog", "synth", "cmp"): where the page opens
// without a query and the service picker, the root frame's total, the completion list after
// Enter, auto-refresh, Back aborting a request under way (its late answer draws nothing), the
// targets page leaving nothing behind, the heatmap's axis, fit and
// colour scale, its Zoom in and its URL, a single profile's exports and every export's file
// name, times with milliseconds in the range inputs. Pushes a long sparse perf capture of
// its own (service "hmlong"). Screenshots go to $ARTIFACTS (v01-...).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    BASE, page, allow, q, shot, params, setup, loaded, loadedAt, timelineLoaded, drawn, until, open, frameAt,
    drag, heatmapBox, cellPoint,
} from "./browser-lib.mjs";

const GOPROG = '{service_name="goprog"}';
const APP = '{service_name="app"}';
const SYNTH = '{service_name="synth"}';
const HMLONG = '{service_name="hmlong"}';

setup();

const api = async (path, p) => (await page.request.get(BASE + path + "?" + new URLSearchParams(p))).json();

test("without a query the page opens on the busiest service", async () => {
    // the busiest service of the default type (cpu:cpu) over the last hour, as the API says
    const busiest = async () => {
        const tl = await api("api/v1/timeline", { type: "cpu:cpu", from: "now-1h", until: "now", group_by: "service_name" });
        return tl.series.map((s) => [s.labels.service_name, s.values.reduce((a, v) => a + (v || 0), 0)])
            .sort((a, b) => b[1] - a[1]);
    };
    // (app, pushed over the hour before the tests started, until the hour moves past its
    // first pushes; the suite takes minutes on a loaded machine)
    const sums = await busiest();
    const top = `{service_name="${sums[0][0]}"}`;
    assert.ok(sums[0][1] > sums[1][1], JSON.stringify(sums));
    const t = Date.now() - 1;
    await page.goto(BASE);
    await loaded(t);
    // the hour slides while the page loads: the busiest just before or just after it
    const later = await busiest();
    const chosen = params().get("query");
    assert.ok(chosen === top || chosen === `{service_name="${later[0][0]}"}`,
        `${chosen}: not the busiest before (${JSON.stringify(sums)}) or after (${JSON.stringify(later)})`);
    assert.equal(params().get("type"), "cpu:cpu");
    assert.equal(await page.getByTestId("query-input").inputValue(), chosen);
    // the flame graph holds that service's profiles only
    const app = await api("api/v1/render", { query: chosen, type: "cpu:cpu", from: "now-1h", until: "now", maxNodes: 10 });
    assert.equal(+(await page.getByTestId("flamegraph").getAttribute("data-total")), app.total);
    await shot("v01-landing");
    // so does explore reached without a query: back from one stored profile
    const p = (await api("api/v1/profiles", { query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" })).profiles[0];
    await open({ view: "profile", series: p.series, time: p.time_ns, type: "cpu:cpu", from: "now-1h", until: "now" });
    const t2 = await loadedAt();
    await page.getByTestId("profile-back").click();
    await loaded(t2);
    // the hour has moved on since the page opened (a loaded machine takes minutes to get
    // here): the busiest service is the API's of now
    const now = (await busiest())[0][0];
    assert.equal(params().get("query"), `{service_name="${now}"}`);
});

test("the service picker: a service, every series, or the selector's own", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    const picker = page.getByTestId("service-select");
    assert.equal(await picker.inputValue(), "app");
    const options = await picker.locator("option:not([hidden])").allTextContents();
    for (const s of ["All services", "app", "goprog", "synth"]) assert.ok(options.includes(s), options.join(","));
    const total = +(await page.getByTestId("flamegraph").getAttribute("data-total"));
    // another service, then every series (written as {}, so a reload keeps it)
    let t2 = await loadedAt();
    await picker.selectOption("goprog");
    await loaded(t2);
    assert.equal(params().get("query"), GOPROG);
    assert.equal(await page.getByTestId("top-table").locator("tbody tr").first().getAttribute("data-name"), "main.burn");
    t2 = await loadedAt();
    await picker.selectOption({ label: "All services" });
    await loaded(t2);
    assert.equal(params().get("query"), "{}");
    assert.ok(+(await page.getByTestId("flamegraph").getAttribute("data-total")) > total);
    t2 = Date.now() - 1;
    await page.reload();
    await loaded(t2);
    assert.equal(params().get("query"), "{}");
    // a selector about no one service: the picker says so
    t2 = await loadedAt();
    await page.getByTestId("query-input").fill('{env="test"}');
    await page.getByTestId("query-input").press("Enter");
    await loaded(t2);
    assert.equal(await picker.locator("option:checked").textContent(), "(selector)");
    // the query run empty is every series
    t2 = await loadedAt();
    await page.getByTestId("query-input").fill("");
    await page.getByTestId("query-input").press("Enter");
    await loaded(t2);
    assert.equal(params().get("query"), "{}");
    assert.equal(await picker.locator("option:checked").textContent(), "All services");
});

test("the root frame says the total", async () => {
    await open({ query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    await drawn();
    const texts = await page.evaluate(() => {
        const fg = window.scorch.view.flame.fg, seen = [];
        const orig = fg.ctx.fillText;
        fg.ctx.fillText = function (s, ...rest) {
            seen.push(s);
            return orig.call(this, s, ...rest);
        };
        fg.draw();
        fg.ctx.fillText = orig;
        return seen;
    });
    assert.ok(texts.some((s) => /^total \(\d+(\.\d+)? (min|s)\)$/.test(s)), texts.slice(0, 5).join("|"));
});

test("the completion list closes when Enter runs the query", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const input = page.getByTestId("query-input");
    const list = page.locator("#completions");
    await input.click();
    await input.fill('{service_name="goprog", env="test"}');
    // the cursor just after '{': label names are offered
    await page.keyboard.press("Home");
    await page.keyboard.press("ArrowRight");
    await list.waitFor();
    assert.ok((await list.locator("li").allTextContents()).some((s) => s.endsWith("service_name")));
    const t = await loadedAt();
    await page.keyboard.press("Enter");
    await loaded(t);
    assert.equal(params().get("query"), '{service_name="goprog", env="test"}');
    assert.ok(await list.isHidden(), "the completion list is closed");
    assert.equal(await input.getAttribute("aria-expanded"), "false");
});

test("the targets page leaves nothing behind when another view opens", async () => {
    await page.goto(q({ view: "targets" }));
    await page.getByTestId("targets").locator(".target").first().waitFor();
    await shot("v02-targets");
    const t = Date.now() - 1;
    await page.locator("#views .tab", { hasText: "Explore" }).click();
    await loaded(t);
    assert.equal(await page.getByTestId("targets").count(), 0, "no targets panel left");
    assert.equal(await page.locator(".targets-table").count(), 0);
    assert.equal(await page.locator("main > .view").count(), 1);
    await shot("v03-after-targets");
});

// Service "hmlong": 5 samples a second for 600 s, starting 7 s past a minute, so the first
// column's second is an odd time and columns hold 2 s each on this window.
async function pushLong() {
    const lines = [];
    for (let i = 0; i < 3000; i++) {
        lines.push(`long  77 [000] ${(2000 + i * 0.2 + 0.013).toFixed(6)}:    1000000 cpu-clock:pppH: `,
                   `\t    5555${(i % 3).toString(16).padStart(8, "0")} ${i % 10 < 2 ? "hot" : "cold"}+0x1 (/opt/long)`,
                   "\t    555500020000 main+0x30 (/opt/long)", "");
    }
    const from = Math.floor(Date.now() / 1000 / 60) * 60 - 1200 + 7;
    const r = await page.request.post(BASE + "ingest?name=hmlong%7Benv%3Dtest%7D&format=perf_script&from=" + from,
                                      { data: lines.join("\n") + "\n" });
    assert.equal(r.status(), 200, await r.text());
    return from;
}
// pushed once, by the first test that needs it
let longPushed = null;
const hmlong = () => (longPushed ||= pushLong());

// The heatmap card's box, and an assertion that box b lies inside it.
async function card() {
    const c = await page.locator(".heatmap-panel").boundingBox();
    return (b, what) => assert.ok(b.x >= c.x && b.x + b.width <= c.x + c.width - 1,
                                  `${what} ${b.x}..${b.x + b.width} outside ${c.x}..${c.x + c.width}`);
}

test("heatmap: its time axis ticks on round times, and every label shows whole", async () => {
    const from = await hmlong();
    await page.goto(q({ view: "heatmap", query: HMLONG, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    assert.equal(hm.start, from);
    assert.ok(hm.secs >= 2, "seconds a column " + hm.secs);
    // ticks: evenly spaced by a round step, on multiples of it
    const ticks = await page.locator(".hm-tick").evaluateAll((ts) => ts.map((t) => +t.dataset.t));
    assert.ok(ticks.length >= 4, ticks.join(","));
    const step = ticks[1] - ticks[0];
    assert.ok([1, 2, 5, 10, 15, 30, 60, 120, 300, 600].includes(step), "step " + step);
    for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i] - ticks[i - 1], step);
    const tz = await page.evaluate((t) => -new Date(t * 1000).getTimezoneOffset() * 60, ticks[0]);
    for (const t of ticks) assert.equal((((t + tz) % step) + step) % step, 0, `tick ${t} on a multiple of ${step}`);
    // the labels shown lie inside the card (the last one's may be left out, not cut)
    const inside = await card();
    const labels = page.locator(".hm-tick-label:not([hidden])");
    assert.ok(await labels.count() >= ticks.length - 1);
    for (const l of await labels.all()) inside(await l.boundingBox(), "label " + await l.textContent());
});

test("heatmap: the canvas stays inside its card; a colour scale says what the colours count", async () => {
    await hmlong();
    await page.goto(q({ view: "heatmap", query: HMLONG, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    const inside = await card();
    inside(hm.box, "the canvas");
    // the colour scale: from one sample to the most in a drawn cell
    const scale = page.getByTestId("heatmap-scale");
    assert.ok(await scale.isVisible());
    inside(await scale.boundingBox(), "the scale");
    const doc = await api("api/v1/heatmap", { query: HMLONG, type: "cpu:cpu-clock", from: "now-1h", until: "now" });
    let max = 0;
    for (let c = 0; c < doc.cols; c += hm.secs) {
        for (let r = 0; r < doc.rows; r++) {
            let v = 0;
            for (let k = c; k < Math.min(doc.cols, c + hm.secs); k++) v += doc.values[k][r];
            max = Math.max(max, v);
        }
    }
    assert.equal(+(await scale.getAttribute("data-max")), max);
    assert.match(await scale.textContent(), new RegExp(`samples per cell \\(${hm.secs} s a column\\):1${max}$`));
    assert.match(await scale.locator(".hm-scale-bar").evaluate((b) => b.style.background), /linear-gradient/);
    await shot("v04-heatmap-scale");
});

test("heatmap: Zoom in keeps the selection and its flame graph", async () => {
    await hmlong();
    await page.goto(q({ view: "heatmap", query: HMLONG, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    await drag(cellPoint(hm, 10, 5), cellPoint(hm, 10, 30));
    await loaded(0);
    const sel = [params().get("sel_from"), params().get("sel_until")];
    assert.match(sel[0], /^\d+\.\d{3}$/);
    const t = await loadedAt();
    await page.getByTestId("zoom-selection").click();
    await page.waitForFunction(() => !/now/.test(new URL(location.href).searchParams.get("from")));
    assert.equal(params().get("from"), String(Math.floor(+sel[0])));
    assert.equal(params().get("until"), String(Math.ceil(+sel[1])));
    assert.deepEqual([params().get("sel_from"), params().get("sel_until")], sel, "the selection stays");
    const z = await until("the zoomed heatmap", () => heatmapBox(), (b) => b.secs === 1);
    assert.ok(z.cols <= 3, "cols " + z.cols);
    assert.ok(await page.getByTestId("flamegraph").isVisible(), "the selection's flame graph stays");
    assert.equal(await loadedAt(), t, "and needs no new request");
    assert.ok(await frameAt("main"));
    await shot("v05-heatmap-zoomed");
});

test("heatmap: a comparison's base does not stay in its URL", async () => {
    // from the diff view to the heatmap (synth: 4 s of samples)
    const s0 = (await api("api/v1/profiles", { query: SYNTH, type: "cpu:cpu-clock", from: "now-1h", until: "now" }))
        .profiles[0].time;
    await page.goto(q({ view: "diff", query: SYNTH, type: "cpu:cpu-clock", base_query: SYNTH,
                        base_from: String(s0), base_until: String(s0 + 2), from: String(s0 + 2), until: String(s0 + 4) }));
    await loaded(0, "diff-flamegraph", ".diff-body");
    await page.locator("#views .tab", { hasText: "Heatmap" }).click();
    await page.waitForFunction(() => new URL(location.href).searchParams.get("view") === "heatmap");
    await heatmapBox();
    const url = new URL(await page.evaluate(() => location.href));
    for (const k of ["base_query", "base_from", "base_until"]) assert.equal(url.searchParams.get(k), null, k);
    assert.equal(params().get("query"), SYNTH);
    assert.equal(params().get("from"), String(s0 + 2));
});

test("times with milliseconds show whole in the range inputs and stay in the URL", async () => {
    const list = await api("api/v1/profiles", { query: SYNTH, type: "cpu:cpu-clock", from: "now-1h", until: "now" });
    const s0 = list.profiles[0].time;
    const from = `${s0}.040`, until = `${s0 + 2}.520`;
    await open({ query: SYNTH, type: "cpu:cpu-clock", from, until });
    const fi = page.locator("#from-input"), ui = page.locator("#until-input");
    assert.match(await fi.inputValue(), /T\d\d:\d\d:\d\d\.040Z$/);
    assert.match(await ui.inputValue(), /T\d\d:\d\d:\d\d\.520Z$/);
    for (const inp of [fi, ui]) {
        const [sw, cw] = await inp.evaluate((e) => [e.scrollWidth, e.clientWidth]);
        assert.ok(sw <= cw, `the text fits: ${sw} > ${cw}`);
    }
    assert.match(await fi.getAttribute("title"), /:\d\d\.040$/);
    await shot("v06-ms-range");
    // another until, typed with milliseconds: the from input, unchanged, keeps its spelling
    const newUntil = new Date((s0 + 3) * 1000 + 250).toISOString();
    const t = await loadedAt();
    await ui.fill(newUntil);
    await ui.press("Enter");
    await loaded(t);
    assert.equal(params().get("from"), from);
    assert.equal(params().get("until"), newUntil);
    assert.match(newUntil, /\.250Z$/);
    const t2 = Date.now() - 1;
    await page.reload();
    await loaded(t2);
    assert.match(await ui.inputValue(), /\.250Z$/);
});

// The export links of the view shown: {format: {href (a URL), download}}.
async function exportLinks() {
    const out = {};
    for (const f of ["pprof", "folded", "svg", "speedscope"]) {
        const a = page.getByTestId("export-" + f);
        await a.waitFor();
        out[f] = { href: new URL(await a.getAttribute("href"), BASE), download: await a.getAttribute("download") };
    }
    return out;
}

const sumFolded = (text) => text.trim().split("\n").reduce((a, l) => a + +l.slice(l.lastIndexOf(" ") + 1), 0);
const EXT = { pprof: "\\.pb\\.gz", folded: "\\.folded", svg: "\\.svg", speedscope: "\\.speedscope\\.json" };
const SECOND = "\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d";
const TIME = SECOND + "(\\.\\d{3})?Z";

test("a single stored profile exports as explore does, exactly that profile, in files named after it", async () => {
    const list = await api("api/v1/profiles", { query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const p = list.profiles[0];
    await open({ view: "profile", series: p.series, time: p.time_ns, type: "cpu:cpu", from: "now-1h", until: "now" });
    const links = await exportLinks();
    for (const [f, l] of Object.entries(links)) {
        assert.equal(l.href.pathname, "/api/v1/render");
        assert.equal(l.href.searchParams.get("format"), f);
        assert.equal(l.href.searchParams.get("from"), p.time_ns);
        assert.equal(l.href.searchParams.get("until"), String(BigInt(p.time_ns) + 1n));
        // exactly the series: its labels, every other label absent
        const query = l.href.searchParams.get("query");
        assert.ok(query.startsWith('{env="test", service_name="goprog", ') && query.includes('bench=""'), query);
        assert.match(l.download, new RegExp(`^goprog_cpu-cpu_${TIME}${EXT[f]}$`));
    }
    // the files hold that profile: its total, its functions
    const folded = await (await page.request.get(links.folded.href.href)).text();
    assert.equal(sumFolded(folded), p.total);
    assert.match(folded, /main\.burn/);
    const pb = await (await page.request.get(links.pprof.href.href)).body();
    assert.deepEqual([pb[0], pb[1]], [0x1f, 0x8b], "gzipped pprof");
    const ss = await (await page.request.get(links.speedscope.href.href)).json();
    assert.ok(ss.profiles && ss.profiles.length, "speedscope profiles");
    const svg = await (await page.request.get(links.svg.href.href)).text();
    const when = new Date(+p.time_ns.slice(0, -6)).toISOString().replace("T", " ").replace(/\.000Z$|Z$/, "");
    assert.match(svg, new RegExp(`<text id="title"[^>]*>goprog · cpu:cpu · ${when} UTC</text>`));
    assert.match(svg, /main\.burn/);
    // a click saves the file under its name
    const [dl] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-folded").click()]);
    assert.equal(dl.suggestedFilename(), links.folded.download);
    await shot("v07-single-exports");
    // a profile whose samples keep their own times: all of them, and no more
    const synth = (await api("api/v1/profiles", { query: SYNTH, type: "cpu:cpu-clock", from: "now-1h", until: "now" })).profiles[0];
    assert.ok(synth.timed);
    await open({ view: "profile", series: synth.series, time: synth.time_ns, type: "cpu:cpu-clock",
                 from: "now-1h", until: "now" });
    const sl = await exportLinks();
    assert.notEqual(sl.folded.href.searchParams.get("until"), String(BigInt(synth.time_ns) + 1n));
    const sf = await (await page.request.get(sl.folded.href.href)).text();
    assert.equal(sumFolded(sf), synth.total);
    assert.match(sl.svg.download, /^synth_cpu-cpu-clock_/);
});

test("explore and the heatmap's selection name their exports after service, type and range", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    let links = await exportLinks();
    for (const [f, l] of Object.entries(links))
        assert.match(l.download, new RegExp(`^goprog_cpu-cpu_${TIME}_${TIME}${EXT[f]}$`));
    assert.match(links.svg.href.searchParams.get("title"), /^goprog · cpu:cpu · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d – /);
    const [dl] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-pprof").click()]);
    assert.match(dl.suggestedFilename(), new RegExp(`^goprog_cpu-cpu_${TIME}_${TIME}\\.pb\\.gz$`));
    // the heatmap's selection: its milliseconds in the name
    await hmlong();
    await page.goto(q({ view: "heatmap", query: HMLONG, type: "cpu:cpu-clock", from: "now-1h", until: "now" }));
    const hm = await heatmapBox();
    await drag(cellPoint(hm, 4, 5), cellPoint(hm, 4, 12));
    await loaded(0);
    links = await exportLinks();
    const ms = (k) => params().get(k).split(".")[1];
    assert.match(links.folded.download, new RegExp(
        `^hmlong_cpu-cpu-clock_${SECOND}\\.${ms("sel_from")}Z_${SECOND}\\.${ms("sel_until")}Z\\.folded$`));
});

test("a single profile's zoom fetches the frame's subtree at full detail", async () => {
    const list = await api("api/v1/profiles", { query: APP, type: "cpu:cpu", from: "now-1h", until: "now" });
    const p = list.profiles.find((x) => x.labels.bench === "regexp");
    await open({ view: "profile", series: p.series, time: p.time_ns, type: "cpu:cpu", maxNodes: "40",
                 from: "now-1h", until: "now" });
    assert.equal(+(await page.getByTestId("flamegraph").getAttribute("data-nodes")), 40);
    const f = await frameAt("regexp.(*machine).match");
    assert.ok(f, "regexp.(*machine).match drawn");
    const reqs = [];
    const onReq = (r) => { if (r.url().includes("/api/v1/")) reqs.push(new URL(r.url())); };
    page.on("request", onReq);
    const t = await loadedAt();
    await page.mouse.click(f.x, f.y);
    await loaded(t);
    page.off("request", onReq);
    assert.deepEqual(reqs.map((u) => u.pathname), ["/api/v1/profile"]);
    assert.equal(reqs[0].searchParams.get("focus"), "^regexp\\.\\(\\*machine\\)\\.match$");
    assert.match(await page.getByTestId("detail-note").textContent(), /subtree (at full|in more) detail/);
});

test("navigation aborts the request under way; its late answer never lands over the newer one", async () => {
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const fg = page.getByTestId("flamegraph");
    const total = await fg.getAttribute("data-total");
    assert.equal(await fg.getAttribute("data-state"), "ready");
    // the page's measures of its last flame graph request: one of each, this one's
    const m = await page.evaluate(() => ({
        fetch: performance.getEntriesByName("scorch:flame:fetch").length,
        draw: performance.getEntriesByName("scorch:flame:draw").map((e) => e.detail.nodes),
    }));
    assert.deepEqual(m, { fetch: 1, draw: [+(await fg.getAttribute("data-nodes"))] });
    // app's flame graph is held back by the test until goprog's is shown again
    const held = [], aborted = [];
    const isApp = (u) => u.pathname.endsWith("/api/v1/render") && u.searchParams.get("query") === APP;
    const hold = (route) => { held.push(route); };
    await page.route((u) => isApp(u), hold);
    const onFailed = (r) => { if (isApp(new URL(r.url()))) aborted.push(r.failure()?.errorText); };
    page.on("requestfailed", onFailed);
    try {
        await page.evaluate((query) => window.scorch.store.set({ query }), APP);
        await until("app's request under way", () => held.length, (n) => n === 1);
        assert.equal(await fg.getAttribute("data-state"), "loading");
        assert.ok(await page.locator(".split.loading").count(), "the loading marks show");
        // Back: goprog again, while app's answer is still to come
        const t = Date.now() - 1;
        await page.goBack();
        await loaded(t);
        assert.equal(params().get("query"), GOPROG);
        await until("app's request aborted", () => aborted.length, (n) => n === 1);
        // app's answer, late: the page dropped the request, nothing of it is drawn
        const late = await held[0].fetch();
        await held[0].fulfill({ response: late }).catch(() => {});
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
        assert.equal(await fg.getAttribute("data-total"), total);
        assert.equal(await fg.getAttribute("data-state"), "ready");
        assert.equal(await page.locator(".split.loading").count(), 0);
    } finally {
        page.off("requestfailed", onFailed);
        await page.unroute((u) => isApp(u), hold);
    }
});

// last: the page's clock is a fake one from here on (it runs, and jumps when told)
test("auto-refresh: off, 10 s, 30 s, 1 min; it loads the view again, quietly", async () => {
    await page.clock.install();
    await open({ query: GOPROG, type: "cpu:cpu", from: "now-1h", until: "now" });
    const sel = page.getByTestId("auto-refresh");
    assert.deepEqual(await sel.locator("option").evaluateAll((os) => os.map((o) => o.value)), ["", "10s", "30s", "1m"]);
    await sel.selectOption("10s");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("refresh") === "10s");
    const runs = () => page.evaluate(() => +(document.body.dataset.autoRefreshes || 0));
    assert.equal(await runs(), 0);
    // the loading marks never show on an auto-refresh
    await page.evaluate(() => {
        window.__marks = 0;
        new MutationObserver(() => {
            if (document.querySelector(".split.loading, .timeline-panel.loading")) window.__marks++;
        }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["class"] });
    });
    const t = await loadedAt();
    await page.clock.fastForward(10500);
    await loaded(t);
    await timelineLoaded();
    assert.equal(await runs(), 1);
    assert.equal(await page.evaluate(() => window.__marks), 0, "no loading marks");
    // a reload keeps the choice; off stops it
    const t2 = Date.now() - 1;
    await page.reload();
    await loaded(t2);
    assert.equal(await sel.inputValue(), "10s");
    await sel.selectOption("");
    await page.waitForFunction(() => !new URL(location.href).searchParams.get("refresh"));
    const before = await runs();
    await page.clock.fastForward(70000);
    assert.equal(await runs(), before, "off: no refresh");
    await sel.selectOption("1m");
    await page.clock.fastForward(30000);
    assert.equal(await runs(), before);
    await page.clock.fastForward(31000);
    await until("a refresh after a minute", runs, (n) => n === before + 1);
});
