// svg_flamegraph.test.mjs - opens a `scorch flamegraph` SVG straight from disk in headless
// Chromium and uses it: hover, click to zoom, search (prompt and Ctrl-F), reset, and the
// view restored from the URL. Fails on any page or console error.
//
// env: SCORCH (the binary, required), CHROMIUM (default /usr/bin/chromium)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

// 100 samples: main 95 (parse 40 > lex 40 > alloc 10; run 55 > alloc 20, compute 35),
// idle 4, a name that needs escaping 1, and a line without samples
const FOLDED = [
  "main;parse;lex 30",
  "main;parse;lex;alloc 10",
  "main;run;alloc 20",
  "main;run;compute 35",
  "idle 4",
  "odd<&>\"'name 1",
  "never 0",
].join("\n") + "\n";

let dir, url, browser, page;
const problems = [];

before(async () => {
  assert.ok(process.env.SCORCH, "set SCORCH to the scorch binary");
  dir = mkdtempSync(join(tmpdir(), "scorch-svg-"));
  writeFileSync(join(dir, "in.folded"), FOLDED);
  const svg = join(dir, "graph.svg");
  execFileSync(process.env.SCORCH, ["flamegraph", "--title", "Browser <test>", "-o", svg,
                                    join(dir, "in.folded")]);
  url = pathToFileURL(svg).href;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  page = await browser.newPage({ viewport: { width: 1300, height: 400 } });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push("console error: " + m.text());
  });
  await page.goto(url);
});

after(async () => {
  if (browser) await browser.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The frame <g> whose title starts with "name (".
function frame(name) {
  return page.locator("#frames > g").filter({
    has: page.locator("title", { hasText: new RegExp("^" + name + " \\(") }),
  }).first();
}

async function rect(name) {
  const r = frame(name).locator("rect");
  return {
    x: parseFloat(await r.getAttribute("x")),
    width: parseFloat(await r.getAttribute("width")),
    fill: await r.getAttribute("fill"),
    cls: (await frame(name).getAttribute("class")) || "",
  };
}

async function matched() {
  const m = page.locator("#matched");
  return { text: await m.textContent(), hidden: ((await m.getAttribute("class")) || "").includes("hide") };
}

// Answers the next prompt with answer, then runs action.
async function withPrompt(answer, action) {
  const seen = [];
  const handler = async (d) => {
    seen.push(d.type());
    await d.accept(answer);
  };
  page.once("dialog", handler);
  await action();
  await page.waitForFunction(() => true);
  assert.deepEqual(seen, ["prompt"]);
}

test("renders the graph", async () => {
  assert.equal(await page.locator("#title").textContent(), "Browser <test>");
  assert.equal(await page.locator("#frames > g").count(), 10);
  const all = await rect("all");
  assert.equal(all.x, 10);
  assert.equal(all.width, 1180);
  const run = await rect("run");
  assert.ok(Math.abs(run.width - 649) < 0.11, "run is 55% wide: " + run.width);
  assert.equal(await frame("run").locator("text").textContent(), "run");
});

test("hover shows the frame's details", async () => {
  await frame("compute").locator("rect").hover();
  assert.equal(await page.locator("#details").textContent(),
               "Function: compute (35 samples, 35.00%)");
  await frame("odd<&>\"'name").locator("rect").hover();
  assert.equal(await page.locator("#details").textContent(),
               "Function: odd<&>\"'name (1 samples, 1.00%)");
});

test("click zooms a frame to the full width", async () => {
  await frame("run").locator("rect").click();
  const run = await rect("run");
  assert.equal(run.x, 10);
  assert.equal(run.width, 1180);
  const compute = await rect("compute");
  assert.ok(Math.abs(compute.width - 1180 * 35 / 55) < 0.11, "compute fills 35/55: " + compute.width);
  assert.ok(Math.abs(compute.x - (10 + 1180 * 20 / 55)) < 0.11, "compute after alloc: " + compute.x);
  // ancestors span the width, dimmed; everything off the path is hidden
  const main = await rect("main");
  assert.ok(main.cls.includes("parent"), "main is dimmed");
  assert.equal(main.width, 1180);
  assert.ok((await rect("parse")).cls.includes("hide"), "parse is hidden");
  assert.ok((await rect("idle")).cls.includes("hide"), "idle is hidden");
  assert.ok(!((await page.locator("#unzoom").getAttribute("class")) || "").includes("hide"));
  assert.match(new URL(page.url()).hash, /^#z=\d+$/);
  // the label of the now wide frame is complete
  assert.equal(await frame("compute").locator("text").textContent(), "compute");
});

test("search highlights and shows the matched share of the zoomed frame", async () => {
  await withPrompt("alloc", () => page.locator("#search").click());
  // zoomed into run (55): alloc has 20 of them
  assert.deepEqual(await matched(), { text: "Matched: 36.4%", hidden: false });
  assert.equal((await rect("alloc")).fill, "rgb(230,0,230)");
  assert.notEqual((await rect("compute")).fill, "rgb(230,0,230)");
  assert.equal(await page.locator("#search").textContent(), "Reset Search");
  assert.match(new URL(page.url()).hash, /s=alloc/);
});

test("reset zoom restores the layout and recounts the search", async () => {
  await page.locator("#unzoom").click();
  const run = await rect("run");
  assert.ok(Math.abs(run.width - 649) < 0.11, "run back to 55%: " + run.width);
  assert.equal((await rect("main")).cls.includes("parent"), false);
  assert.equal((await rect("parse")).cls.includes("hide"), false);
  // alloc under lex (10) and under run (20) of 100
  assert.deepEqual(await matched(), { text: "Matched: 30.0%", hidden: false });
  assert.ok(((await page.locator("#unzoom").getAttribute("class")) || "").includes("hide"));
});

test("nested matches count once; Ctrl-F opens the search", async () => {
  await page.locator("#search").click(); // "Reset Search"
  assert.equal((await matched()).hidden, true);
  assert.notEqual((await rect("alloc")).fill, "rgb(230,0,230)");
  await withPrompt("^(parse|lex|alloc)$", () => page.keyboard.press("Control+f"));
  // parse (40) holds lex and one alloc; the other alloc adds 20
  assert.deepEqual(await matched(), { text: "Matched: 60.0%", hidden: false });
  await withPrompt("a", () => page.keyboard.press("F3"));
  // main (95) holds every other match, plus the odd name (1); idle has no "a"
  assert.equal((await matched()).text, "Matched: 96.0%");
  await page.keyboard.press("Escape");
  assert.equal((await matched()).hidden, true);
});

test("zoom and search come back from the URL", async () => {
  const runIndex = await page.evaluate(() => {
    const gs = [...document.getElementById("frames").children];
    return gs.findIndex((g) => g.querySelector("title").textContent.startsWith("run ("));
  });
  await page.goto(url + "#z=" + runIndex + "&s=" + encodeURIComponent("comp"));
  const run = await rect("run");
  assert.equal(run.width, 1180);
  assert.deepEqual(await matched(), { text: "Matched: 63.6%", hidden: false });
  // clicking a dimmed ancestor zooms out to it
  await frame("all").locator("rect").click();
  assert.ok(Math.abs((await rect("run")).width - 649) < 0.11);
  assert.equal((await matched()).text, "Matched: 35.0%");
});

test("no page or console errors", () => {
  assert.deepEqual(problems, []);
});
