// ui_bench.mjs - the web UI's speed on a big profile, in headless Chromium: time to the first
// flame graph (navigation to drawn, with fetch / model / draw split out), redraw and zoom
// times, and frame times while hovering. bench/ui.sh starts the server and loads the data.
//
// env: SCORCH_URL (server, ending in '/'), QUERY, TYPE, MAXNODES (default 100000), CHROMIUM,
// PLAYWRIGHT (path of tests/ui/package.json, whose node_modules holds playwright-core),
// RUNS (page loads to time, default 5)
import { createRequire } from "node:module";

const require = createRequire(process.env.PLAYWRIGHT);
const { chromium } = require("playwright-core");

const BASE = process.env.SCORCH_URL;
const params = new URLSearchParams({
    query: process.env.QUERY, type: process.env.TYPE, from: "now-1h", until: "now",
    maxNodes: process.env.MAXNODES || "100000", layout: "flame",
});
const RUNS = +(process.env.RUNS || 5);

const pct = (a, p) => {
    const s = [...a].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (v) => v.toFixed(1).padStart(7) + " ms";

const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

const loads = [];
for (let i = 0; i < RUNS; i++) {
    await page.goto(BASE + "?" + params);
    await page.waitForFunction(() => {
        const fg = document.querySelector('[data-testid="flamegraph"]');
        return fg && fg.dataset.state === "ready" && performance.getEntriesByName("scorch:flame:draw").length;
    }, null, { timeout: 60000 });
    loads.push(await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const fg = document.querySelector('[data-testid="flamegraph"]');
        // the page's own measures of its last flame graph request (ui/js/loader.mjs)
        const fetch = performance.getEntriesByName("scorch:flame:fetch")[0];
        const draw = performance.getEntriesByName("scorch:flame:draw")[0];
        const res = performance.getEntriesByType("resource")
            .filter((r) => r.name.includes("format=json"));
        return {
            first: +fg.dataset.loaded - performance.timeOrigin - nav.startTime,
            fetch: fetch.duration, render: draw.duration, draw: draw.detail.paintMs, nodes: draw.detail.nodes,
            server: res.length ? res[res.length - 1].responseStart - res[res.length - 1].requestStart : NaN,
            bytes: res.length ? res[res.length - 1].encodedBodySize : NaN,
        };
    }));
}
const last = loads[loads.length - 1];
console.log(`profile: ${last.nodes} nodes, flame JSON ${(last.bytes / 1e6).toFixed(2)} MB`);
console.log(`time to first flame graph (navigation to drawn), median of ${RUNS}: ` +
    ms(pct(loads.map((l) => l.first), 50)).trim());
console.log(`  fetch of flame JSON + top table: ${ms(pct(loads.map((l) => l.fetch), 50))}` +
    `  (server to first byte ${pct(loads.map((l) => l.server), 50).toFixed(1)} ms)`);
console.log(`  parse, model, first draw, table: ${ms(pct(loads.map((l) => l.render), 50))}`);
console.log(`  first draw of the canvas:        ${ms(pct(loads.map((l) => l.draw), 50))}`);

// redraws: the whole graph, and zoomed into each of the root's children
const draws = await page.evaluate(() => {
    const fg = window.scorch.view.flame.fg, m = fg.model;
    const full = [];
    for (let i = 0; i < 20; i++) {
        fg.draw();
        full.push(fg.lastDrawMs);
    }
    // the 30 heaviest frames below the root's children
    const ids = [];
    for (let i = 0; i < m.n; i++) if (m.depth[i] >= 2) ids.push(i);
    ids.sort((a, b) => m.total[b] - m.total[a]);
    const zoom = [];
    for (const c of ids.slice(0, 30)) {
        const t0 = performance.now();
        fg.setZoom(c);
        fg.draw();
        zoom.push(performance.now() - t0);
    }
    fg.setZoom(-1);
    fg.draw();
    return { full, zoom };
});
console.log(`redraw, whole graph: median ${ms(pct(draws.full, 50))}, max ${ms(Math.max(...draws.full))}`);
console.log(`zoom into a frame and redraw (30 frames): median ${ms(pct(draws.zoom, 50))}, max ${ms(Math.max(...draws.zoom))}`);

// hovering: the handler's cost per event (hit test, outline, tooltip), and the frame
// intervals the page achieves while the mouse moves across the graph
const box = await page.locator(".fg-overlay").first().boundingBox();
const handler = await page.evaluate(({ x, y, width: w, height: h }) => {
    const o = document.querySelector(".fg-overlay");
    const out = [];
    for (let i = 0; i < 2000; i++) {
        const ev = new MouseEvent("mousemove", {
            clientX: x + ((i * 7.3) % w), clientY: y + ((i * 3.1) % Math.min(h, 400)), bubbles: true,
        });
        const t0 = performance.now();
        o.dispatchEvent(ev);
        out.push(performance.now() - t0);
    }
    return out;
}, box);
console.log(`hover handler per mousemove: median ${ms(pct(handler, 50))}, p95 ${ms(pct(handler, 95))}, ` +
    `max ${ms(Math.max(...handler))}`);
await page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    const tick = (t) => {
        window.__frames.push(t - last);
        last = t;
        if (window.__frames.length < 100000) window.__raf = requestAnimationFrame(tick);
    };
    window.__raf = requestAnimationFrame(tick);
});
const rows = Math.min(box.height, 400);
for (let i = 0; i < 300; i++) {
    await page.mouse.move(box.x + ((i * 13.7) % box.width), box.y + 5 + ((i * 5.3) % (rows - 10)));
}
const frames = await page.evaluate(() => {
    cancelAnimationFrame(window.__raf);
    return window.__frames.slice(2);
});
console.log(`frames while hovering (${frames.length}): median ${ms(pct(frames, 50))}, ` +
    `p95 ${ms(pct(frames, 95))}, max ${ms(Math.max(...frames))}` +
    `  (60 fps = 16.7 ms; headless Chromium paces frames itself)`);
await browser.close();
if (errors.length) {
    console.error("page errors:\n" + errors.join("\n"));
    process.exit(1);
}
