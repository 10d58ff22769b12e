// timeline_model.test.mjs - the timeline's scales, ticks, buckets, brush and lines.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    brushRange, bucketAt, limitSeries, linearScale, lineRuns, maxValue, nearestPoint, niceStep,
    seriesNames, timeTicks, valueTicks,
} from "../../ui/js/timeline-model.mjs";

test("linear scales map both ways", () => {
    const x = linearScale(1000, 2000, 64, 1064);
    assert.equal(x.to(1000), 64);
    assert.equal(x.to(1500), 564);
    assert.equal(x.from(564), 1500);
    const y = linearScale(0, 100, 140, 10); // inverted, as on screen
    assert.equal(y.to(0), 140);
    assert.equal(y.to(100), 10);
    assert.equal(y.from(75), 50);
    const flat = linearScale(5, 5, 0, 100);
    assert.equal(flat.to(5), 0);
    assert.equal(flat.from(50), 5);
});

test("nice steps and value ticks in the shown unit", () => {
    assert.equal(niceStep(100, 4), 50);
    assert.equal(niceStep(7, 4), 2);
    assert.equal(niceStep(0.3, 3), 0.1);
    let t = valueTicks(93, "count", 4);
    assert.deepEqual(t.ticks, [0, 50, 100]);
    t = valueTicks(3.3 * 2 ** 20, "bytes", 4);
    assert.deepEqual(t.ticks, [0, 1, 2, 3, 4].map((v) => v * 2 ** 20));
    assert.equal(t.scale.suffix, " MiB");
    t = valueTicks(2.4e9, "nanoseconds", 4);
    assert.deepEqual(t.ticks, [0, 1e9, 2e9, 3e9]);
    assert.ok(valueTicks(0, "count").ticks.length >= 2);
});

test("time ticks land on round local times", () => {
    const t0 = Date.UTC(2026, 10, 30, 5, 31, 10) / 1000;
    const r = timeTicks(t0, t0 + 3600, 1000, 0);
    assert.equal(r.interval, 300);
    assert.equal(r.ticks[0], Date.UTC(2026, 10, 30, 5, 35) / 1000);
    assert.ok(r.ticks.every((t) => t % 300 === 0 && t >= t0 && t <= t0 + 3600));
    // two hours east of UTC: ticks on local hours
    const d = timeTicks(t0, t0 + 7 * 86400, 800, 7200);
    assert.equal(d.interval, 86400);
    assert.ok(d.ticks.every((t) => (t + 7200) % 86400 === 0));
    assert.equal(timeTicks(t0, t0 + 60, 1000, 0).interval, 5);
});

test("buckets under the pointer", () => {
    const ts = [100, 110, 120, 130];
    assert.equal(bucketAt(ts, 10, 100), 0);
    assert.equal(bucketAt(ts, 10, 119.9), 1);
    assert.equal(bucketAt(ts, 10, 135), 3);
    assert.equal(bucketAt(ts, 10, 200), 3);
    assert.equal(bucketAt(ts, 10, 50), 0);
    assert.equal(bucketAt([], 10, 50), -1);
});

test("brushing: ordered, clamped, whole seconds; a click is no range", () => {
    const x = linearScale(1000, 2000, 0, 1000);
    assert.deepEqual(brushRange(300, 100, x, 1000, 2000), [1100, 1300]);
    assert.deepEqual(brushRange(100.4, 300.6, x, 1000, 2000), [1100, 1301]);
    assert.deepEqual(brushRange(-50, 200, x, 1000, 2000), [1000, 1200]);
    assert.deepEqual(brushRange(900, 1200, x, 1000, 2000), [1900, 2000]);
    assert.equal(brushRange(100, 102, x, 1000, 2000), null);
});

test("lines: the heaviest kept, the rest summed; names show what differs", () => {
    const series = [
        { labels: { service_name: "a", env: "prod" }, values: [1, 1] },
        { labels: { service_name: "b", env: "prod" }, values: [5, 5] },
        { labels: { service_name: "c", env: "prod" }, values: [3, 0] },
        { labels: { service_name: "d", env: "prod" }, values: [0, 1] },
    ];
    const l = limitSeries(series, 3);
    assert.equal(l.length, 3);
    assert.equal(l[0].labels.service_name, "b");
    assert.equal(l[1].labels.service_name, "c");
    assert.deepEqual(l[2].values, [1, 2]); // a + d
    assert.ok(l[2].other);
    assert.deepEqual(seriesNames(l), ["service_name=b", "service_name=c", "other (2 series)"]);
    assert.deepEqual(seriesNames([series[0]]), ["env=prod, service_name=a"]);
    assert.deepEqual(seriesNames([{ labels: {}, values: [] }]), ["{}"]);
    assert.equal(limitSeries(series, 10).length, 4);
    assert.equal(maxValue(series), 5);
    assert.equal(maxValue([]), 0);
});

test("gaps: lines join a series' usual spacing and break at longer gaps, never fall to zero", () => {
    // a step without profiles is null; a zero is a value (profiles that hold none of it)
    assert.deepEqual(lineRuns([5, 0, 6]).map((r) => r.slice()), [[0, 1, 2]]);
    // a profile every bucket with a hole of four: two lines
    const runs = lineRuns([5, 6, 7, null, null, null, null, 8, 9]);
    assert.deepEqual(runs.map((r) => r.slice()), [[0, 1, 2], [7, 8]]);
    assert.equal(runs.usual, 1);
    // scraped every 30 s on 10 s steps: points every third bucket, joined over the empty ones
    const sparse = lineRuns([4, null, null, 5, null, null, 6, null, null, 7]);
    assert.deepEqual(sparse.map((r) => r.slice()), [[0, 3, 6, 9]]);
    assert.equal(sparse.usual, 3);
    // ...and a missing scrape (6 buckets) still joins, a missing hour does not
    assert.deepEqual(lineRuns([4, null, null, 5, null, null, null, null, null, 6, null, null, 7]).map((r) => r.slice()), [[0, 3], [9, 12]]);
    assert.deepEqual(lineRuns([1, null, null, 1, null, null, 1, null, null, null, null, 1]).map((r) => r.slice()), [[0, 3, 6, 11]]);
    // lone points are runs of one: dots
    assert.deepEqual(lineRuns([null, null, 3, null, null]).map((r) => r.slice()), [[2]]);
    assert.deepEqual(lineRuns([null, null, null]).map((r) => r.slice()), []);
    assert.deepEqual(lineRuns([]).map((r) => r.slice()), []);
    // negative values (deltas) are points too
    assert.deepEqual(lineRuns([-1, -2, null, -3]).map((r) => r.slice()), [[0, 1, 3]]);
});

test("the point under the pointer: the nearest with a value, within reach", () => {
    const lines = [{ values: [null, 10, null, 30] }, { values: [5, null, null, null] }];
    const xy = (l, k) => [k * 100, 200 - l.values[k]];
    assert.deepEqual(nearestPoint(lines, 4, xy, 102, 188), { line: lines[0], k: 1 });
    assert.deepEqual(nearestPoint(lines, 4, xy, 1, 196), { line: lines[1], k: 0 });
    assert.equal(nearestPoint(lines, 4, xy, 200, 200), null); // no profile in bucket 2
    assert.equal(nearestPoint(lines, 4, xy, 150, 100), null); // too far from any
});
