// diff_model.test.mjs - the diff view's logic without a browser: the diff flame graph laid
// out by one side, its colours by change and significance, the default-normalise rule, the
// URL state of the diff view, the sides picked by a label's values, the table's order.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    autoNormalize, compareWithPatch, defaultLabelPair, diffBase, diffColor, diffParams, diffRows,
    earlierRange, formatChange, formatInterval, formatQ, GONE_COLOR, hiddenFrames, labelOfSides,
    labelSidesPatch, labelValues, layoutDiff, NEUTRAL_COLOR, NEW_COLOR, nodeDiffColor, nodeShares,
    normalizeOf, pickMeasure, plainChange, rangesPatch, rawBaseTotal, swapPatch,
} from "../../ui/js/diff-model.mjs";
import { modelFromJSON, zoomView } from "../../ui/js/flame-model.mjs";
import { compareSearch } from "../../ui/js/heatmap-model.mjs";
import { parseMatchers, withMatcher, withoutMatcher } from "../../ui/js/selector.mjs";
import { baseOf, DEFAULTS, parseState, stateToSearch } from "../../ui/js/state.mjs";
import { flameDiffDoc, rng } from "./helpers.mjs";

const BASE = "main;a 10\nmain;b 10\nmain;gone;deep 5";
const NEW = "main;a 30\nmain;c 10\nmain;b 5";
const changes = { a: 1, gone: -1, deep: -1, c: 1 };
const doc = () => flameDiffDoc(BASE, NEW, (n) => changes[n] || 0);

// The node of a model named name (the first), or -1.
const find = (m, name) => {
    for (let i = 0; i < m.n; i++) if (m.names[m.name[i]] === name) return i;
    return -1;
};

// hex "#rrggbb" -> [r, g, b]
const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const lightness = (hex) => {
    const [r, g, b] = rgb(hex);
    return (Math.max(r, g, b) + Math.min(r, g, b)) / 2;
};

test("a diff document with statistics: seven numbers a node, the change read by its field", () => {
    const d = modelFromJSON(doc());
    assert.equal(d.diff, true);
    assert.equal(d.n, 7);
    const a = find(d, "a");
    assert.equal(d.value[a], 30);
    assert.equal(d.baseTotal[a], 10);
    assert.equal(d.total[a], 40); // combined width
    assert.equal(d.change[a], 1);
    assert.equal(d.change[find(d, "b")], 0);
    assert.equal(d.change[find(d, "deep")], -1);
    // the same document without statistics still reads (six numbers, no change)
    const plain = modelFromJSON(flameDiffDoc(BASE, NEW));
    assert.equal(plain.n, 7);
    assert.equal(plain.value[find(plain, "a")], 30);
    assert.equal(plain.change[find(plain, "a")], 0);
    // fields in another order are read by name
    const j = doc();
    const perm = [6, 5, 4, 3, 2, 1, 0];
    j.fields = perm.map((k) => j.fields[k]);
    j.levels = j.levels.map((l) => {
        const out = [];
        for (let k = 0; k < l.length; k += 7) for (const p of perm) out.push(l[k + p]);
        return out;
    });
    const r = modelFromJSON(j);
    assert.deepEqual([...r.value], [...d.value]);
    assert.deepEqual([...r.change], [...d.change]);
});

test("widths from the new side: vanished frames left out and counted, the rest inside its parent", () => {
    const d = modelFromJSON(doc());
    const m = layoutDiff(d, "new");
    assert.equal(m.rootTotal, 45);
    assert.equal(find(m, "gone"), -1, "a frame without new samples is not drawn");
    assert.equal(find(m, "deep"), -1);
    const h = hiddenFrames(m);
    assert.equal(h.count, 1, "the outermost vanished frame once");
    assert.equal(h.share, 5 / 25);
    for (let i = 0; i < m.n; i++) {
        assert.equal(m.total[i], m.value[i], "width = the new side's value");
        let kids = 0;
        const c0 = m.firstChild[i];
        for (let c = c0; c >= 0 && c < c0 + m.childCount[i]; c++) {
            kids += m.total[c];
            assert.ok(m.x[c] >= m.x[i] && m.x[c] + m.total[c] <= m.x[i] + m.total[i]);
        }
        assert.equal(kids + m.self[i], m.total[i]);
        assert.equal(m.baseTotal[i], d.baseTotal[m.src[i]], "the base's value comes along");
    }
    // children follow each other from the parent's x, in the document's (name) order
    const main = find(m, "main");
    assert.deepEqual([find(m, "a"), find(m, "b"), find(m, "c")].map((i) => m.x[i]), [0, 30, 35]);
    assert.equal(m.parent[find(m, "c")], main);
    assert.equal(m.change[find(m, "a")], 1);
});

test("widths from the base side and from both", () => {
    const d = modelFromJSON(doc());
    const b = layoutDiff(d, "base");
    assert.equal(b.rootTotal, 25);
    assert.equal(find(b, "c"), -1, "new frames are not drawn at the base's widths");
    assert.ok(find(b, "deep") >= 0);
    assert.deepEqual(hiddenFrames(b), { count: 1, share: 10 / 45 });
    const both = layoutDiff(d, "both");
    assert.equal(both.n, d.n);
    assert.deepEqual([...both.x], [...d.x], "both: the server's own layout");
    assert.deepEqual([...both.total], [...d.total]);
    assert.equal(hiddenFrames(both), null);
});

test("not normalised, both sides are drawn to one scale: the smaller root is narrower", () => {
    const d = modelFromJSON(flameDiffDoc("main;a 60\nmain;b 40", "main;a 30\nmain;b 20"));
    const one = layoutDiff(d, "new", { oneScale: true });
    assert.equal(one.span, 100);
    assert.deepEqual(zoomView(one, -1), { x0: 0, w: 100, depth: 0, id: -1 });
    const own = layoutDiff(d, "new");
    assert.equal(zoomView(own, -1).w, 50);
    // the larger side fills the width either way
    assert.equal(zoomView(layoutDiff(d, "base", { oneScale: true }), -1).w, 100);
    assert.equal(layoutDiff(d, "both", { oneScale: true }).span, 150);
    // a zoomed frame fills the width whatever the scale
    const a = find(one, "a");
    assert.deepEqual(zoomView(one, a), { x0: one.x[a], w: 30, depth: 2, id: a });
});

test("colours: only significant changes are red or blue, the shade by how far the value moved", () => {
    for (const [b, n] of [[1, 1], [1, 10], [10, 1], [0, 5], [5, 0]]) assert.equal(diffColor(0, b, n), NEUTRAL_COLOR);
    const up = rgb(diffColor(1, 1, 2)), down = rgb(diffColor(-1, 2, 1));
    assert.ok(up[0] > up[2] + 60 && up[0] > up[1], "growth is red: " + up);
    assert.ok(down[2] > down[0] + 60, "shrinkage is blue: " + down);
    // stronger (darker) with the relative change, the same for x2 and /2, capped at x4
    const ls = [1.05, 1.3, 2, 3, 4].map((r) => lightness(diffColor(1, 1, r)));
    for (let i = 1; i < ls.length; i++) assert.ok(ls[i] < ls[i - 1], ls.join(" "));
    assert.equal(lightness(diffColor(-1, 2, 1)), lightness(diffColor(1, 1, 2)));
    assert.equal(diffColor(1, 1, 4), diffColor(1, 1, 40));
    assert.equal(diffColor(1, 0, 5), diffColor(1, 1, 4), "a new frame: the strongest red");
    assert.equal(diffColor(-1, 5, 0), diffColor(-1, 4, 1), "a vanished one: the strongest blue");
    // a path only one side has (the server's 2 and -2): its own colours, whatever the test
    assert.equal(diffColor(2, 0, 2), NEW_COLOR);
    assert.equal(diffColor(-2, 2, 0), GONE_COLOR);
    for (const c of [NEW_COLOR, GONE_COLOR])
        assert.ok(![NEUTRAL_COLOR, diffColor(1, 1, 4), diffColor(-1, 4, 1)].includes(c));
    assert.equal(diffColor(3, 1, 2), NEUTRAL_COLOR);
    // the nodes of a model: by their flag
    const m = layoutDiff(modelFromJSON(doc()), "new");
    assert.equal(nodeDiffColor(m, find(m, "b")), NEUTRAL_COLOR, "b shrank, but not significantly");
    assert.equal(nodeDiffColor(m, find(m, "a")), diffColor(1, 10, 30));
    assert.equal(nodeDiffColor(m, find(m, "c")), diffColor(1, 0, 10));
    const sh = nodeShares(m, find(m, "a"));
    assert.equal(sh.base, 10 / 25);
    assert.equal(sh.new, 30 / 45);
    assert.ok(Math.abs(sh.rel - (30 / 45 / (10 / 25) - 1) * 100) < 1e-9);
    assert.equal(sh.valueRel, 200);
    assert.equal(nodeShares(m, find(m, "c")).rel, Infinity);
});

test("normalised, the colour's ratio is the share's", () => {
    const d = modelFromJSON(flameDiffDoc("main;a 50\nmain;b 50", "main;a 100\nmain;b 300", () => 1,
        { normalize: true }));
    const m = layoutDiff(d, "new");
    const a = find(m, "a");
    // a: its share went from 50% to 25%; normalised, its base is 200 of 400
    assert.equal(m.baseTotal[a], 200);
    assert.equal(nodeDiffColor(m, a), diffColor(1, 0.5, 0.25));
    assert.equal(rawBaseTotal(flameDiffDoc("main;a 50\nmain;b 50", "main;a 100\nmain;b 300", null,
        { normalize: true })), 100);
    assert.equal(rawBaseTotal({ normalized: false, base_total: 7, total: 9, base_scale: 1 }), 7);
});

test("the default normalisation: on when the totals differ by more than 10% of the base", () => {
    assert.equal(autoNormalize(1000, 1000), false);
    assert.equal(autoNormalize(1000, 1100), false, "10% is not more than 10%");
    assert.equal(autoNormalize(1000, 1101), true);
    assert.equal(autoNormalize(1000, 900), false);
    assert.equal(autoNormalize(1000, 899), true);
    assert.equal(autoNormalize(600, 500), true);
    assert.equal(autoNormalize(0, 500), false, "nothing to scale");
    assert.equal(autoNormalize(500, 0), false);
    // the URL's choice wins over the rule; "" takes it
    assert.equal(normalizeOf({ normalize: "1" }, false), true);
    assert.equal(normalizeOf({ normalize: "0" }, true), false);
    assert.equal(normalizeOf({ normalize: "" }, true), true);
    assert.equal(normalizeOf({ normalize: "" }, null), null);
});

test("the diff view's URL: its parameters round trip, bad ones fall back", () => {
    const s = { ...DEFAULTS, view: "diff", type: "cpu:cpu", query: '{service_name="api",load="high"}',
                base_query: '{service_name="api",load="low"}', from: "1700000600", until: "1700000900",
                base_from: "1700000000.250", base_until: "1700000300.750", normalize: "0", q: "0.01",
                widths: "both", sides: "1", search: "^main\\.grow$", zoom: "main.main;main.grow" };
    const q = stateToSearch(s);
    assert.deepEqual(parseState(q), s);
    for (const k of ["normalize=0", "q=0.01", "widths=both", "sides=1", "base_from=1700000000.250"])
        assert.ok(q.includes(k), k + " in " + q);
    // defaults stay out of the URL: normalize "" (by the totals), widths new
    const d = stateToSearch({ ...DEFAULTS, view: "diff" });
    assert.ok(!/normalize|widths|sides|[?&]q=/.test(d), d);
    const bad = parseState("?view=diff&normalize=yes&widths=wide&sides=2&q=5");
    assert.equal(bad.normalize, "");
    assert.equal(bad.widths, "new");
    assert.equal(bad.sides, "");
    assert.equal(bad.q, "");
    assert.equal(parseState("?q=.1").q, ".1");
    assert.equal(parseState("?q=1").q, "");
    // the API gets the base only where it is set, the choice of normalisation, maxNodes for flame
    const st = parseState("?view=diff&type=cpu:cpu&query={a=\"1\"}&base_from=10&base_until=20&maxNodes=500");
    const p = diffParams(st, "flame", true);
    assert.equal(p.normalize, 1);
    assert.equal(p.base_from, "10");
    assert.equal(p.base_query, "");
    assert.equal(p.maxNodes, "500");
    assert.equal(diffParams(st, "json", false).normalize, 0);
    assert.equal(diffParams(st, "json", false).maxNodes, undefined);
});

test("compare with...: what explore shows is the new side, the period before it the base", () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    const rel = compareWithPatch({ ...DEFAULTS, query: "{a=\"1\"}", from: "now-1h", until: "now" }, now);
    assert.equal(rel.view, "diff");
    assert.deepEqual([rel.from, rel.until, rel.base_from, rel.base_until], ["now-1h", "now", "now-2h", "now-1h"]);
    assert.equal(rel.base_query, "", "the same selector");
    // the timeline's selection is what explore shows: it becomes the new side's range
    const sel = compareWithPatch({ ...DEFAULTS, from: "now-1h", until: "now", sel_from: "1700000600",
                                   sel_until: "1700000900" }, now);
    assert.deepEqual([sel.from, sel.until, sel.base_from, sel.base_until, sel.sel_from],
        ["1700000600", "1700000900", "1700000300", "1700000600", ""]);
    assert.deepEqual(earlierRange("now-90m", "now-30m", now), { from: "now-2h30m", until: "now-1h30m" });
    assert.deepEqual(earlierRange("now-1h", "now", now, 86400e3), { from: "now-1d1h", until: "now-1d" });
    assert.deepEqual(earlierRange("1700000000.5", "1700000001", now), { from: "1700000000", until: "1700000000.500" });
    assert.equal(earlierRange("x", "now", now), null);
    // two ranges brushed on the timeline: the first is the base
    const two = rangesPatch([100, 200], [300, 450]);
    assert.deepEqual([two.base_from, two.base_until, two.from, two.until], ["100", "200", "300", "450"]);
    // the heatmap's Compare link opens the diff view with both spans
    const hm = parseState(compareSearch({ ...DEFAULTS, type: "cpu:cpu", query: "{x=\"y\"}" },
        [1700000000040, 1700000000160], [1700000001400, 1700000001820]));
    assert.equal(hm.view, "diff");
    assert.deepEqual(baseOf(hm), { query: "{x=\"y\"}", from: "1700000000.040", until: "1700000000.160" });
    assert.deepEqual([hm.from, hm.until], ["1700000001.400", "1700000001.820"]);
});

test("swapping the sides twice is the same comparison", () => {
    const s = { ...DEFAULTS, view: "diff", query: "{v=\"2\"}", base_query: "{v=\"1\"}", from: "now-1h",
                until: "now", base_from: "now-2h", base_until: "now-1h" };
    const once = { ...s, ...swapPatch(s) };
    assert.deepEqual([once.query, once.base_query, once.from, once.base_from],
        ["{v=\"1\"}", "{v=\"2\"}", "now-2h", "now-1h"]);
    const twice = { ...once, ...swapPatch(once) };
    for (const k of ["query", "base_query", "from", "until", "base_from", "base_until"]) assert.equal(twice[k], s[k], k);
    // a base that defaults to the new side stays empty
    const same = { ...DEFAULTS, query: "{a=\"1\"}", base_from: "10", base_until: "20", from: "30", until: "40" };
    const sw = swapPatch(same);
    assert.deepEqual([sw.query, sw.base_query, sw.from, sw.base_from], ["{a=\"1\"}", "", "10", "30"]);
});

test("sides by a label's values: load=low against load=high in one step", () => {
    const p = labelSidesPatch('{service_name="api"}', "load", "low", "high");
    assert.equal(p.view, "diff");
    assert.equal(p.base_query, '{service_name="api", load="low"}');
    assert.equal(p.query, '{service_name="api", load="high"}');
    assert.equal(p.base_from, "", "the same range");
    // a selector that already names the label gets the value replaced
    assert.equal(labelSidesPatch('{load="x", service_name="api"}', "load", "a", "b").query,
        '{load="b", service_name="api"}');
    assert.equal(labelSidesPatch("", "load", "a", "b").query, '{load="b"}');
    // and the label two selectors differ in is found again
    assert.deepEqual(labelOfSides(p.base_query, p.query), { label: "load", base: "low", new: "high" });
    assert.equal(labelOfSides('{a="1"}', '{a="1"}'), null, "no difference");
    assert.equal(labelOfSides('{a="1", b="1"}', '{a="2", b="2"}'), null, "two differences");
    assert.equal(labelOfSides('{a="1"}', '{a=~"1|2"}'), null, "not a value of =");
    assert.equal(labelOfSides('{a="1"}', '{a="1", b="2"}'), null);
    assert.equal(labelOfSides('{a="1"', '{a="2"}'), null, "malformed");
    // the values offered: those of the selection's series, sorted
    const series = [{ labels: { load: "low", pod: "a" } }, { labels: { load: "high" } }, { labels: { load: "low" } },
        { labels: { pod: "b" } }];
    assert.deepEqual(labelValues(series, "load"), ["high", "low"]);
    assert.deepEqual(labelValues([], "load"), []);
    // the one-click pair of a grouped timeline: the lighter of the two heaviest is the base
    const lines = [{ labels: { load: "low" }, sum: 10 }, { labels: { load: "high" }, sum: 40 },
        { labels: { load: "mid" }, sum: 20 }, { labels: { "": "other" }, sum: 99, other: true }];
    assert.deepEqual(defaultLabelPair(lines, "load"), { base: "mid", new: "high" });
    assert.equal(defaultLabelPair(lines.slice(0, 1), "load"), null);
});

test("selectors as matchers: parse, add, remove", () => {
    assert.deepEqual(parseMatchers('{a="1", b!~"x|y", c=`raw\\`}'), [
        { name: "a", op: "=", value: "1" }, { name: "b", op: "!~", value: "x|y" }, { name: "c", op: "=", value: "raw\\" }]);
    assert.deepEqual(parseMatchers('{a="say \\"hi\\""}'), [{ name: "a", op: "=", value: 'say "hi"' }]);
    assert.deepEqual(parseMatchers(""), []);
    assert.deepEqual(parseMatchers("{}"), []);
    for (const bad of ["{a=1}", '{a="1" b="2"}', '{a="1"', "a", '{="1"}']) assert.equal(parseMatchers(bad), null, bad);
    assert.equal(withoutMatcher('{service_name="api", load="low"}', "load"), '{service_name="api"}');
    assert.equal(withoutMatcher('{load="low"}', "load"), "");
    assert.equal(withoutMatcher('{a="1"}', "load"), '{a="1"}');
    // round trip with withMatcher, whatever the value holds
    const r = rng(3);
    for (let i = 0; i < 50; i++) {
        const v = Array.from({ length: 1 + Math.floor(r() * 8) }, () => 'a"\\,} ='[Math.floor(r() * 8)]).join("");
        const t = withMatcher('{service_name="api"}', "load", v);
        assert.deepEqual(parseMatchers(t), [{ name: "service_name", op: "=", value: "api" }, { name: "load", op: "=", value: v }], t);
        assert.equal(withoutMatcher(t, "load"), '{service_name="api"}');
    }
});

// A row of the diff JSON with the fields the table reads.
const row = (name, o) => ({
    function: name, base_flat: 0, flat: 0, base_cum: 0, cum: 0, significant: false, flat_q: null, cum_q: null,
    delta_pct: null, delta_pct_lo: null, delta_pct_hi: null, cum_delta_pct: null, cum_delta_pct_lo: null,
    cum_delta_pct_hi: null, base_mean: null, mean: null, base_cum_mean: null, cum_mean: null, direction: 0, ...o,
});

test("the measure a row shows is the one scorch compare reports", () => {
    assert.equal(pickMeasure(row("a", { flat_q: 0.01, cum_q: 0.2, flat: 1 })), "flat");
    assert.equal(pickMeasure(row("a", { flat_q: 0.3, cum_q: 0.01, flat: 1 })), "cum");
    assert.equal(pickMeasure(row("a", { flat_q: 0.02, cum_q: 0.01, flat: 1 })), "cum", "both: the smaller q");
    assert.equal(pickMeasure(row("a", { flat_q: 0.01, cum_q: 0.02, flat: 1 })), "flat");
    assert.equal(pickMeasure(row("a", { flat_q: 0.01, cum_q: 0.01, flat: 1 })), "flat", "a tie: self");
    assert.equal(pickMeasure(row("a", { flat_q: 0.5, cum_q: 0.3 })), "cum", "none significant: the smaller q");
    assert.equal(pickMeasure(row("a", { cum_q: 0.3 })), "cum", "only a total tested (a caller)");
    assert.equal(pickMeasure(row("a", { flat: 5 })), "flat", "untested with self");
    assert.equal(pickMeasure(row("a", { cum: 5 })), "cum", "untested caller");
    assert.equal(pickMeasure(row("a", { flat_q: 0.7, cum_q: 0.7, flat: 1 })), "flat", "a leaf: self");
});

test("table order: significant first, by the size of the change; then within noise; then not tested", () => {
    const doc = {
        base_total: 1000, total: 1000, q: 0.05, rows: [
            row("quiet", { flat: 100, base_flat: 100, flat_q: 0.9, cum_q: 0.9, base_mean: 0.1, mean: 0.1, delta_pct: 0 }),
            row("big", { flat: 400, base_flat: 200, flat_q: 0.001, cum_q: 0.001, base_mean: 0.2, mean: 0.4,
                         delta_pct: 100, delta_pct_lo: 60, delta_pct_hi: 140, significant: true, direction: 1 }),
            row("tiny", { flat: 1, base_flat: 0 }),
            row("small", { flat: 50, base_flat: 100, flat_q: 0.01, cum_q: 0.01, base_mean: 0.1, mean: 0.05,
                           delta_pct: -50, significant: true, direction: -1 }),
            row("caller", { cum: 600, base_cum: 400, cum_q: 0.002, base_cum_mean: 0.4, cum_mean: 0.6,
                            cum_delta_pct: 50, cum_delta_pct_lo: 20, cum_delta_pct_hi: 80, significant: true, direction: 1 }),
            row("wobbly", { flat: 300, base_flat: 200, flat_q: 0.2, cum_q: 0.2, base_mean: 0.2, mean: 0.3, delta_pct: 50 }),
            row("gone", { flat: 0, base_flat: 30 }),
        ],
    };
    const rs = diffRows(doc);
    assert.deepEqual(rs.map((r) => r.name), ["big", "caller", "small", "wobbly", "quiet", "gone", "tiny"]);
    const big = rs[0];
    assert.equal(big.measure, "self");
    assert.equal(big.significant, true);
    assert.equal(big.direction, 1);
    assert.deepEqual([big.base, big.new, big.baseShare, big.newShare, big.pct, big.lo, big.hi, big.q],
        [200, 400, 0.2, 0.4, 100, 60, 140, 0.001]);
    const caller = rs[1];
    assert.equal(caller.measure, "total");
    assert.deepEqual([caller.base, caller.new, caller.pct], [400, 600, 50]);
    assert.equal(rs[2].direction, -1);
    assert.equal(rs.find((r) => r.name === "wobbly").significant, false);
    assert.equal(rs.find((r) => r.name === "tiny").pct, Infinity, "new on the new side");
    assert.equal(rs.find((r) => r.name === "tiny").q, null);
    // a stricter level: what is not below it is not significant
    const strict = diffRows(doc, 0.005);
    assert.deepEqual(strict.filter((r) => r.significant).map((r) => r.name), ["big", "caller"]);
    assert.deepEqual(diffRows(null), []);
});

test("changes, intervals and q-values as text", () => {
    assert.equal(formatChange(12.345), "+12.3%");
    assert.equal(formatChange(-4), "-4.0%");
    assert.equal(formatChange(0), "+0.0%");
    assert.equal(formatChange(Infinity), "new");
    assert.equal(formatChange(-100), "gone");
    assert.equal(formatChange(null), "–");
    assert.equal(formatChange(2500), "+2500%");
    assert.equal(formatInterval(28.8, 106.4), "+28.8% … +106.4%");
    assert.equal(formatInterval(null, 3), "–");
    assert.equal(formatQ(0.01466), "0.0147");
    assert.equal(formatQ(1e-8), "<0.0001");
    assert.equal(formatQ(null), "–");
});

test("plain diff: red and blue by the change, no test; new and gone paths their own", () => {
    assert.equal(plainChange(1, 2), 1);
    assert.equal(plainChange(2, 1), -1);
    assert.equal(plainChange(2, 2), 0);
    assert.equal(plainChange(0, 2), 2);
    assert.equal(plainChange(2, 0), -2);
    const m = layoutDiff(modelFromJSON(doc()), "both");
    m.plain = true;
    assert.equal(nodeDiffColor(m, find(m, "b")), diffColor(-1, 10, 5), "b shrank: blue without a test");
    assert.equal(nodeDiffColor(m, find(m, "c")), NEW_COLOR, "c: only on the new side");
    assert.equal(nodeDiffColor(m, find(m, "deep")), GONE_COLOR, "deep: only on the base side");
    const p = diffParams({ type: "cpu:cpu", query: "{}", from: "100", until: "200", base_query: "",
                           base_from: "", base_until: "", diffmode: "plain" }, "json", false, 1e6);
    assert.equal(p.stats, 0);
});

test("the base: the period before unless a base range or another selector is given", () => {
    const st = { query: '{service_name="a"}', from: "1000", until: "1600", base_query: "",
                 base_from: "", base_until: "" };
    assert.deepEqual(diffBase(st, 2e6), { query: st.query, from: "400", until: "1000", before: true });
    assert.equal(diffParams(st, "json", false, 2e6).base_from, "400");
    // another selector (two label values): the same range
    const lab = { ...st, base_query: '{service_name="a",load="low"}' };
    assert.deepEqual(diffBase(lab, 2e6), { query: lab.base_query, from: "1000", until: "1600", before: false });
    // an explicit range wins
    assert.equal(diffBase({ ...st, base_from: "10", base_until: "20" }).from, "10");
});

test("the table shows the tested means in their unit; new and gone come first with the significant", () => {
    const d = { q: 0.05, base_total: 100, total: 100, metric_unit: "nanoseconds/s", rows: [
        { function: "eq", base_flat: 50, flat: 50, base_cum: 50, cum: 50, flat_q: 1, cum_q: 1, significant: false,
          base_mean: 5e6, mean: 5e6, base_cum_mean: 5e6, cum_mean: 5e6, status: "noise" },
        { function: "fresh", base_flat: 0, flat: 10, base_cum: 0, cum: 10, flat_q: null, cum_q: null,
          significant: false, base_mean: 0, mean: 1e6, base_cum_mean: 0, cum_mean: 1e6, status: "new" },
    ] };
    const rows = diffRows(d);
    assert.deepEqual(rows.map((r) => r.name), ["fresh", "eq"]);
    assert.equal(rows[1].baseMean, 5e6);
    assert.equal(rows[1].newMean, rows[1].baseMean);
    assert.equal(rows[1].unit, "nanoseconds/s");
    assert.equal(rows[0].status, "new");
    // without statistics: no means, the sums are shown
    const plain = diffRows({ ...d, metric_unit: undefined });
    assert.equal(plain[0].unit, null);
});
