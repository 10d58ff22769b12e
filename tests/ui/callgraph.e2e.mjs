// callgraph.e2e.mjs - the call graph of large heap profiles in Chromium, on data this file
// pushes itself: a Go-like heap profile it writes (60,000 samples of 2,000 functions in
// stacks 8 to 64 deep, bench/gen_pprof.py's shape; service "cgheap") and, when
// SCORCH_TESTDATA is set, ../shared/testdata's synthetic-allocs-100k (100,000 samples of
// 64 functions called in random order: a dense graph, dot's slowest; service "cgsynth").
// The node count asked (80, 500) is the count drawn, the line beside it says how much of
// the profile that is, a node's tooltip shows its values, and where the layout budget drew
// less (the lightest calls left out) the line says so and its button asks for all of it.
//
// env: as browser-lib.mjs; SCORCH_TESTDATA (optional).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { BASE, page, q, shot, setup, until } from "./browser-lib.mjs";

const HEAP = '{service_name="cgheap"}', SYNTH = '{service_name="cgsynth"}';
const SYNTH_FILE = process.env.SCORCH_TESTDATA &&
    join(process.env.SCORCH_TESTDATA, "pprof", "synthetic-allocs-100k.pb.gz");
const haveSynth = !!SYNTH_FILE && existsSync(SYNTH_FILE);

// A gzipped Go-like heap profile written on the protobuf wire format by hand: nfuncs
// functions in 80 packages calling 1 to 6 others each, stacks 8 to 64 deep from eight roots
// with Zipf-like popularity, alloc_objects, alloc_space (the default), inuse_objects and
// inuse_space. The same seed gives the same bytes.
function heapProfile(nsamples, nfuncs, seed = 1) {
    let x = seed >>> 0 || 1;
    const rnd = () => {
        x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
        return x / 4294967296;
    };
    const int = (a, b) => a + Math.floor(rnd() * (b - a + 1));
    const pareto = (a) => 1 / Math.pow(1 - rnd(), 1 / a);
    const strings = [""], sidx = new Map([["", 0]]);
    const s = (v) => {
        if (!sidx.has(v)) {
            sidx.set(v, strings.length);
            strings.push(v);
        }
        return sidx.get(v);
    };
    const varint = (v, out) => {
        for (; v >= 128; v = Math.floor(v / 128)) out.push((v % 128) | 128);
        out.push(v);
    };
    const u = (f, v, out) => {
        if (v) {
            varint(f * 8, out);
            varint(v, out);
        }
    };
    const ln = (f, bytes, out) => {
        varint(f * 8 + 2, out);
        varint(bytes.length, out);
        for (const b of bytes) out.push(b);
    };
    const kinds = ["api", "db", "cache", "codec", "net", "util"];
    const verbs = ["Handle", "Get", "Put", "encode", "decode", "run", "loop"];
    const pkgs = Array.from({ length: 80 }, (_, i) => `example.com/svc/${kinds[int(0, 5)]}${i}`);
    const funcs = Array.from({ length: nfuncs }, (_, i) => {
        const pkg = pkgs[int(0, 79)];
        return [s(`${pkg}.(*T${i % 37}).${verbs[int(0, 6)]}${i}`), s(`/src/${pkg}/file${i % 11}.go`), 10 + i % 500];
    });
    const callees = funcs.map((_, i) => Array.from({ length: int(1, 6) }, () => (i + int(1, 300)) % nfuncs));
    const locs = [], locOf = new Map();
    const location = (f, site) => {
        if (!locOf.has(f * 4 + site)) {
            locs.push([f, funcs[f][2] + site]);
            locOf.set(f * 4 + site, locs.length);
        }
        return locOf.get(f * 4 + site);
    };
    const roots = [0, 250, 500, 750, 1000, 1250, 1500, 1750].map((r) => r % nfuncs);
    const body = [];
    for (const [t, unit] of [["alloc_objects", "count"], ["alloc_space", "bytes"],
                             ["inuse_objects", "count"], ["inuse_space", "bytes"]]) {
        const vt = [];
        u(1, s(t), vt);
        u(2, s(unit), vt);
        ln(1, vt, body);
    }
    for (let n = 0; n < nsamples; n++) {
        let f = roots[Math.min(Math.floor(pareto(1.2)) - 1, roots.length - 1)];
        const stack = [];
        for (let d = int(8, 64); d > 0; d--) {
            stack.push(location(f, int(0, 2)));
            const c = callees[f];
            f = c[Math.min(Math.floor(pareto(1.5)) - 1, c.length - 1)];
        }
        stack.reverse(); // leaf first
        const objs = int(1, 64), size = objs * [16, 32, 64, 128, 1024, 4096][int(0, 5)];
        const inuse = rnd() < 0.3 ? objs : 0;
        const packed = [], vals = [], smp = [];
        for (const l of stack) varint(l, packed);
        for (const v of [objs, size, inuse, inuse * size / objs]) varint(v, vals);
        ln(1, packed, smp);
        ln(2, vals, smp);
        ln(2, smp, body);
    }
    const m = [];
    u(1, 1, m);
    u(2, 0x400000, m);
    u(3, 0x400000 + 16 * locs.length + 4096, m);
    u(5, s("/usr/local/bin/svc"), m);
    ln(3, m, body);
    locs.forEach(([f, line], i) => {
        const l = [], li = [];
        u(1, i + 1, l);
        u(2, 1, l);
        u(3, 0x400000 + 16 * i, l);
        u(1, f + 1, li);
        u(2, line, li);
        ln(4, li, l);
        ln(4, l, body);
    });
    funcs.forEach(([name, file, start], i) => {
        const fn = [];
        u(1, i + 1, fn);
        u(2, name, fn);
        u(3, name, fn);
        u(4, file, fn);
        u(5, start, fn);
        ln(5, fn, body);
    });
    const period = [];
    u(1, s("space"), period);
    u(2, s("bytes"), period);
    const def = s("alloc_space");
    for (const str of strings) ln(6, [...Buffer.from(str)], body);
    u(9, Math.floor(Date.now() / 1000) * 1e9, body);
    ln(11, period, body);
    u(12, 524288, body);
    u(14, def, body);
    return gzipSync(Buffer.from(body));
}

async function push(name, body) {
    const from = Math.floor(Date.now() / 1000) - 120;
    const r = await fetch(`${BASE}ingest?name=${encodeURIComponent(name)}&format=pprof&from=${from}`,
                          { method: "POST", body });
    assert.equal(r.status, 200, `push ${name}: ${await r.text()}`);
}

before(async () => {
    await push("cgheap{env=test}", heapProfile(60000, 2000));
    if (haveSynth) await push("cgsynth{env=test}", readFileSync(SYNTH_FILE));
});

setup();

const graph = (query, nodecount) => ({ view: "callgraph", query, type: "heap:alloc_space", from: "now-1h",
                                       until: "now", nodecount: String(nodecount) });
const loadedAt = () => page.evaluate(() => +(document.querySelector('[data-testid="callgraph"]')?.dataset.loaded || 0));

// Waits until the view holds an answer newer than `since` (a large graph's layout takes
// seconds, more on a loaded machine).
async function cgLoaded(since) {
    await page.waitForFunction((t) => {
        const box = document.querySelector('[data-testid="callgraph"]');
        return box && +(box.dataset.loaded || 0) > t &&
            !document.querySelector(".callgraph-panel").classList.contains("loading");
    }, since, { timeout: 120000 });
}

async function openGraph(query, nodecount) {
    const t = Date.now() - 1;
    await page.goto(q(graph(query, nodecount)));
    await cgLoaded(t);
}

// What is drawn: the SVG root's data attributes, its function boxes (the DOT names them
// N1, N2...; the legend's box and tag boxes are not functions), the legend's share, the
// line beside the node count and its button.
function drawn() {
    return page.evaluate(() => {
        const svg = document.querySelector('[data-testid="callgraph"] svg');
        if (!svg) return { error: document.querySelector(".callgraph-panel .panel-msg")?.textContent };
        const a = (n) => svg.getAttribute("data-" + n);
        const legend = /Showing nodes accounting for [^,]+, ([0-9.]+)% of/.exec(svg.textContent);
        const more = document.querySelector('[data-testid="callgraph-all"]');
        return {
            nodes: +a("nodes"), asked: +a("nodes-asked"), total: +a("nodes-total"), cut: a("nodes-cut"),
            thinned: +a("edges-thinned"), share: +a("share"), layout: a("layout"),
            boxes: [...svg.querySelectorAll("g.node > title")].filter((t) => /^N[0-9]+$/.test(t.textContent)).length,
            edges: svg.querySelectorAll("g.edge").length,
            legendShare: legend ? +legend[1] : null,
            line: document.querySelector('[data-testid="callgraph-shown"]').firstChild?.textContent || "",
            more: more ? more.textContent : null,
        };
    });
}

const shareOf = (line) => +(/ · ([0-9.]+)% of the total/.exec(line) || [])[1];

test("80 and 500 functions asked of a large heap profile are drawn, with how much of it they are", async () => {
    await openGraph(HEAP, 80);
    let d = await drawn();
    assert.equal(d.error, undefined);
    assert.equal(d.nodes, 80, JSON.stringify(d));
    assert.equal(d.boxes, 80);
    assert.equal(d.cut, "0");
    assert.ok(d.total > 1000, JSON.stringify(d)); // of the profile's 1,389
    assert.match(d.line, /^80 of 1,[0-9]{3} functions · [0-9.]+% of the total$/);
    assert.equal(d.more, null);
    // the share beside the count is the legend's (pprof's "Showing nodes accounting for")
    assert.ok(Math.abs(shareOf(d.line) - d.legendShare) < 0.1, JSON.stringify(d));
    await shot("cg01-heap-80");
    // 500 from the node count select
    const t = await loadedAt();
    await page.getByTestId("nodecount").selectOption("500");
    await cgLoaded(t);
    d = await drawn();
    assert.equal(new URL(page.url()).searchParams.get("nodecount"), "500");
    assert.equal(d.nodes, 500, JSON.stringify(d));
    assert.equal(d.boxes, 500);
    assert.equal(d.thinned, 0);
    assert.match(d.line, /^500 of 1,[0-9]{3} functions · [0-9.]+% of the total$/);
    assert.ok(shareOf(d.line) > 50 && Math.abs(shareOf(d.line) - d.legendShare) < 0.1, JSON.stringify(d));
    assert.equal(d.more, null);
    await shot("cg02-heap-500");
});

test("a function's tooltip shows its flat and cum with their units and shares", async () => {
    await openGraph(HEAP, 80);
    const node = page.getByTestId("callgraph").locator("g.node", { has: page.locator("title", { hasText: /^N2$/ }) });
    const lines = (await node.locator("text").allTextContents()).map((s) => s.trim());
    const bb = await node.boundingBox();
    await page.mouse.move(bb.x + bb.width / 2, bb.y + bb.height / 2);
    const tip = page.locator(".tooltip");
    await until("the tooltip of a function", () => tip.isVisible());
    const rows = await tip.locator("tr").evaluateAll((trs) => trs.map((tr) =>
        [...tr.children].map((c) => c.textContent.trim())));
    const title = await tip.locator(".tip-title").textContent();
    assert.match(title, /^example\.com\/svc\/[a-z]+[0-9]+\.\(\*T[0-9]+\)\.[A-Za-z]+[0-9]+$/);
    assert.ok(lines.some((l) => title.endsWith("." + l)), `${title} / ${lines.join("|")}`);
    const self = rows.find((r) => r[0] === "Self (flat)"), total = rows.find((r) => r[0] === "Total (cum)");
    assert.ok(self && total, JSON.stringify(rows));
    for (const [, value, share] of [self, total]) {
        assert.match(value, /^[0-9.]+(B|kB|MB|GB)$/, JSON.stringify(rows));
        assert.match(share, /^[0-9.]+%$/, JSON.stringify(rows));
    }
    // the same values as the box (pprof's label: "0 of cum" without flat, flat alone when
    // cum is the same)
    const box = self[1] === "0" ? [`0 of ${total[1]} (${total[2]})`]
        : self[1] === total[1] ? [`${self[1]} (${self[2]})`]
        : [`${self[1]} (${self[2]})`, `of ${total[1]} (${total[2]})`];
    assert.deepEqual(lines.slice(-box.length), box);
    await shot("cg03-tooltip");
    await page.mouse.move(1, 1);
});

test("the dense 100,000-sample heap profile: all of its 66 functions for 80 and 500 asked", { skip: !haveSynth &&
    "SCORCH_TESTDATA has no pprof/synthetic-allocs-100k.pb.gz" }, async () => {
    for (const asked of [80, 500]) {
        await openGraph(SYNTH, asked);
        const d = await drawn();
        assert.equal(d.error, undefined);
        // 15 were drawn before, whatever was asked
        assert.equal(d.nodes, 66, JSON.stringify(d));
        assert.equal(d.total, 66);
        assert.equal(d.boxes, 66);
        assert.equal(d.layout, "large");
        assert.match(d.line, new RegExp(`^all 66 functions \\(${asked} asked\\) · 100% of the total`));
        await shot(`cg04-synth-${asked}`);
    }
});

test("where the budget leaves calls out the line says how many, and its button draws them all", async () => {
    // every function of the profile: more calls than lay out in the budget
    await openGraph(HEAP, 0);
    let d = await drawn();
    assert.equal(d.nodes, d.total, JSON.stringify(d));
    assert.ok(d.thinned > 0, JSON.stringify(d));
    assert.equal(d.edges, +(await page.evaluate(() =>
        document.querySelector('[data-testid="callgraph"] svg').getAttribute("data-edges"))));
    assert.ok(d.line.includes(` · ${d.thinned.toLocaleString("en-US")} lightest calls left out to lay out in time`),
              d.line);
    assert.equal(d.more, "Draw every call");
    await shot("cg05-heap-all-thinned");

    // fewer nodes than asked: the server draws that only for graphs far larger than a test
    // can lay out in time, so its first answer here is made to say so (the graph itself is
    // the server's); the button must ask the server for the whole graph, and draw it
    let asked = [];
    await page.route(/\/api\/v1\/callgraph\?/, async (route) => {
        const url = route.request().url();
        asked.push(url);
        const r = await route.fetch();
        let body = await r.text();
        if (!/[?&]fit=0/.test(url))
            body = body.replace(/data-nodes="80" data-nodes-total="([0-9]+)" data-nodes-cut="0"/,
                                'data-nodes="40" data-nodes-total="$1" data-nodes-cut="1"')
                .replace(/data-full-seconds="[0-9.]+"/, 'data-full-seconds="0.40"');
        await route.fulfill({ response: r, body });
    });
    try {
        await openGraph(HEAP, 80);
        d = await drawn();
        assert.equal(d.cut, "1");
        assert.match(d.line, /^40 of 1,[0-9]{3} functions · [0-9.]+% of the total · 80 asked: more take too long to lay out$/);
        assert.equal(d.more, "Draw all 80");
        const button = page.getByTestId("callgraph-all");
        assert.match(await button.getAttribute("title"), /about 0\.4 s$/);
        await shot("cg06-fewer-than-asked");
        const t = await loadedAt();
        asked = [];
        await button.click();
        await cgLoaded(t);
        assert.equal(asked.length, 1);
        assert.match(asked[0], /[?&]fit=0(&|$)/);
        assert.match(asked[0], /[?&]nodecount=80(&|$)/);
        d = await drawn();
        assert.equal(d.nodes, 80, JSON.stringify(d));
        assert.equal(d.boxes, 80);
        assert.equal(d.cut, "0");
        assert.equal(d.more, null);
        // the SVG link is what is drawn
        assert.match(await page.getByTestId("callgraph-svg").getAttribute("href"), /[?&]fit=0(&|$)/);
        // another query starts within the budget again
        const t2 = await loadedAt();
        await page.getByTestId("nodecount").selectOption("40");
        await cgLoaded(t2);
        assert.ok(!/[?&]fit=0/.test(asked[asked.length - 1]), asked.join(" "));
    } finally {
        await page.unroute(/\/api\/v1\/callgraph\?/);
    }
    // the server's fit=0 draws every call, and refuses what is neither 0 nor 1
    const base = new URLSearchParams({ query: HEAP, type: "heap:alloc_space", from: "now-1h", until: "now",
                                       nodecount: "80" });
    const r = await fetch(`${BASE}api/v1/callgraph?${base}&fit=2`);
    assert.equal(r.status, 400);
    assert.match(await r.text(), /'fit' must be one of 1, 0, not '2'/);
});
