// single.test.mjs - single profiles: the series of a timeline line as a selector, exact
// label matches, the patch that opens one, the render parameters of one profile; the
// source view's hottest line and heat.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    exactSelector, labelsOf, lineQuery, profilePatch, profileSpan, sameLabels, seriesSelector,
} from "../../ui/js/single.mjs";
import { heat, hottest } from "../../ui/js/source-view.mjs";
import { DEFAULTS, parseState, stateToSearch } from "../../ui/js/state.mjs";

test("a line's profiles: exactly its series, or every series of a group_by value", () => {
    const labels = { service_name: "api", env: "prod", "otel.scope": 'a"b' };
    assert.equal(seriesSelector(labels), '{env="prod", otel.scope="a\\"b", service_name="api"}');
    assert.equal(seriesSelector({}), "{}");
    const st = { ...DEFAULTS, query: '{service_name="api"}' };
    assert.deepEqual(lineQuery(st, { labels }), { query: seriesSelector(labels), exact: labels });
    const grouped = { ...st, group_by: "env" };
    assert.deepEqual(lineQuery(grouped, { labels: { env: "prod" } }),
                     { query: '{service_name="api", env="prod"}', exact: null });
    assert.ok(sameLabels({ a: "1", b: "2" }, { b: "2", a: "1" }));
    assert.ok(!sameLabels({ a: "1" }, { a: "1", b: "2" }));
    assert.ok(!sameLabels({ a: "1" }, { a: "2" }));
});

test("opening a listed profile: its series and exact time in the URL", () => {
    const p = { series: '{env="prod",service_name="api"}', time_ns: "1796020197123456789" };
    const s = { ...DEFAULTS, type: "cpu:cpu", zoom: "a;b", ...profilePatch(p) };
    assert.equal(s.view, "profile");
    assert.equal(s.zoom, "");
    const back = parseState(stateToSearch(s));
    assert.equal(back.series, p.series);
    assert.equal(back.time, p.time_ns); // nanoseconds as text: no float rounding
});

test("source: the hottest line is the most flat, then the most cum; heat by cum", () => {
    const fn = { lines: [{ line: 10, flat: 0, cum: 0 }, { line: 11, flat: 40, cum: 700 },
                         { line: 12, flat: 490, cum: 720 }, { line: 13, flat: 490, cum: 500 }] };
    assert.equal(hottest(fn).line, 12);
    assert.equal(hottest({ lines: [{ line: 1, flat: 0, cum: 0 }] }), null);
    assert.equal(hottest({ lines: [{ line: 3, flat: 0, cum: 5 }, { line: 4, flat: 0, cum: 9 }] }).line, 4);
    assert.equal(heat(fn.lines[2], fn), 1);
    assert.equal(heat(fn.lines[0], fn), 0);
    assert.ok(Math.abs(heat(fn.lines[1], fn) - 700 / 720) < 1e-12);
});

test("one stored profile through render: exactly its series, exactly its range", () => {
    const labels = { service_name: "shop", env: "prod" };
    assert.equal(exactSelector(labels, ["env", "pod", "service_name", "bench", "pod"]),
                 '{env="prod", service_name="shop", bench="", pod=""}');
    assert.equal(exactSelector(labels, []), '{env="prod", service_name="shop"}');
    assert.equal(exactSelector({}, ["a"]), '{a=""}');
    assert.deepEqual(labelsOf('{env="prod",service_name="a\\"b"}'), { env: "prod", service_name: 'a"b' });
    assert.equal(labelsOf('{env=~"p"}'), null);
    assert.equal(labelsOf("x"), null);
    // the nanoseconds stay exact (a float would lose them)
    assert.deepEqual(profileSpan("1796020197123456789", false),
                     { from: "1796020197123456789", until: "1796020197123456790" });
    // samples with their own times: up to the series' next profile, else an hour on
    assert.deepEqual(profileSpan("1796020197000000000", true, "1796020257000000000"),
                     { from: "1796020197000000000", until: "1796020257000000000" });
    assert.deepEqual(profileSpan("1796020197000000000", true),
                     { from: "1796020197000000000", until: "1796023797000000000" });
});
