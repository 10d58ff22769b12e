// targets.test.mjs - the targets view's pure parts: grouping by target, health roll-up,
// relative times, durations and the selector a row opens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ago, targetGroups, targetQuery, took } from "../../ui/js/targets.mjs";

const task = (job, instance, profile, health, labels = {}) => ({
    job, instance, profile, health, labels: { service_name: job, job, instance, ...labels },
});

test("targets group by job and instance, sorted, health rolled up", () => {
    const g = targetGroups([
        task("web", "b:1", "cpu", "up"), task("api", "a:1", "cpu", "unknown"),
        task("web", "b:1", "heap", "down"), task("web", "a:2", "cpu", "up"),
        task("api", "a:1", "heap", "unknown"), task("web", "a:2", "heap", "unknown"),
    ]);
    assert.deepEqual(g.map((x) => [x.job, x.instance, x.health, x.tasks.length]), [
        ["api", "a:1", "unknown", 2], ["web", "a:2", "up", 2], ["web", "b:1", "down", 2]]);
    assert.deepEqual(g[2].tasks.map((t) => t.profile), ["cpu", "heap"]);
    assert.deepEqual(targetGroups([]), []);
    assert.deepEqual(targetGroups(null), []);
});

test("relative times", () => {
    const now = Date.parse("2026-01-01T00:01:00Z");
    assert.equal(ago(null, now), "never");
    assert.equal(ago("", now), "never");
    assert.equal(ago("garbage", now), "?");
    assert.equal(ago("2026-01-01T00:00:57Z", now), "3s ago");
    assert.equal(ago("2026-01-01T00:01:12Z", now), "in 12s");
    assert.equal(ago("2026-01-01T00:01:00.2Z", now), "now");
    assert.equal(ago("2025-12-31T23:58:30Z", now), "2m 30s ago");
});

test("scrape durations", () => {
    assert.equal(took(0.0084), "8 ms");
    assert.equal(took(5.16), "5.2 s");
    assert.equal(took(63), "1m 3s");
    assert.equal(took(undefined), "");
    assert.equal(took(-1), "");
});

test("a row's selector names the service, job and instance, escaped", () => {
    assert.equal(targetQuery(targetGroups([task("web", "h:1", "cpu", "up")])[0]),
                 '{service_name="web",job="web",instance="h:1"}');
    const g = targetGroups([task('we"b', "h:1", "cpu", "up", { service_name: "s\\x" })])[0];
    assert.equal(targetQuery(g), '{service_name="s\\\\x",job="we\\"b",instance="h:1"}');
    const none = { job: "j", instance: "i", labels: {} };
    assert.equal(targetQuery(none), '{job="j",instance="i"}');
});
