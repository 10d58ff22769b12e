// ui_heatmap.mjs - the heatmap view's first draw in headless Chromium: navigation to the
// grid drawn, the heatmap fetch (server time to first byte) and the canvas draw. bench/ui.sh
// loads an hour of perf samples first.
//
// env: SCORCH_URL (ending in '/'), QUERY, TYPE, FROM, UNTIL, CHROMIUM, PLAYWRIGHT (path of
// tests/ui/package.json), RUNS (default 3)
import { createRequire } from "node:module";

const require = createRequire(process.env.PLAYWRIGHT);
const { chromium } = require("playwright-core");

const params = new URLSearchParams({ view: "heatmap", query: process.env.QUERY, type: process.env.TYPE,
                                     from: process.env.FROM, until: process.env.UNTIL });
const RUNS = +(process.env.RUNS || 3);
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
const runs = [];
for (let i = 0; i < RUNS; i++) {
    await page.goto(process.env.SCORCH_URL + "?" + params);
    await page.waitForFunction(() => performance.getEntriesByName("scorch:heatmap:draw").length &&
        document.querySelector(".heatmap-panel").dataset.loaded, null, { timeout: 120000 });
    runs.push(await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const res = performance.getEntriesByType("resource").filter((r) => r.name.includes("/api/v1/heatmap"));
        const r = res[res.length - 1];
        // the page's own measures of its heatmap request (ui/js/loader.mjs)
        const f = performance.getEntriesByName("scorch:heatmap:fetch")[0];
        const d = performance.getEntriesByName("scorch:heatmap:draw")[0];
        const t = { fetchMs: f.duration, drawMs: d.detail.paintMs, cols: d.detail.cols, rows: d.detail.rows };
        const hm = document.querySelector('[data-testid="heatmap"]');
        return { first: +document.querySelector(".heatmap-panel").dataset.loaded - performance.timeOrigin - nav.startTime,
                 server: r.responseStart - r.requestStart, bytes: r.encodedBodySize, fetch: t.fetchMs,
                 draw: t.drawMs, cols: t.cols, rows: t.rows, drawn: +hm.dataset.cols, secs: +hm.dataset.secondsPerCol };
    }));
}
const l = runs[runs.length - 1];
console.log(`heatmap: ${l.cols} seconds x ${l.rows} rows (${(l.bytes / 1e6).toFixed(2)} MB of JSON), ` +
    `drawn as ${l.drawn} columns of ${l.secs} s`);
console.log(`  time to first draw (navigation to drawn), median of ${RUNS}: ${med(runs.map((r) => r.first)).toFixed(0)} ms`);
console.log(`  server (request to first byte): ${med(runs.map((r) => r.server)).toFixed(0)} ms; ` +
    `fetch + parse ${med(runs.map((r) => r.fetch)).toFixed(0)} ms; canvas draw ${med(runs.map((r) => r.draw)).toFixed(1)} ms`);
await browser.close();
if (errors.length) {
    console.error("page errors:\n" + errors.join("\n"));
    process.exit(1);
}
