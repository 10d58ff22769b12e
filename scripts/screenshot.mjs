// screenshot.mjs - opens scorch's UI at URL in Debian's Chromium (playwright-core, launched
// as tests/ui/browser-lib.mjs launches it) on the explore view of the demo's CPU over the last
// minutes, waits until the timeline and the flame graph are drawn, and writes a PNG to OUT.
// scripts/screenshot.sh starts the server and feeds it first.
//
// usage: node scripts/screenshot.mjs URL OUT
import { createRequire } from "node:module";

// playwright-core is installed for the browser tests, in tests/ui
const require = createRequire(new URL("../tests/ui/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const [url, out] = process.argv.slice(2);
if (!url || !out) {
    console.error("usage: node scripts/screenshot.mjs URL OUT");
    process.exit(2);
}
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(60000);
    const params = new URLSearchParams({ query: '{service_name="demo"}', type: "cpu:cpu", from: "now-1m" });
    await page.goto(url + "?" + params);
    // the flame graph and the timeline hold their answers (the hooks the browser tests wait on)
    await page.waitForFunction(() => {
        const fg = document.querySelector('[data-testid="flamegraph"]');
        const tl = document.querySelector('[data-testid="timeline"]');
        const split = document.querySelector(".split");
        const v = window.scorch && window.scorch.view;
        return fg && +(fg.dataset.loaded || 0) > 0 && split && !split.classList.contains("loading") &&
            tl && !tl.classList.contains("loading") && v.timeline && v.timeline.data &&
            v.flame && v.flame.fg && !v.flame.fg.pending;
    });
    await page.waitForTimeout(300); // the last animation frame
    await page.screenshot({ path: out });
} finally {
    await browser.close();
}
