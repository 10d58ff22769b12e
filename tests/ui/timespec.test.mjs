// timespec.test.mjs - times and durations read as the server reads them.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    displayTime, isRelative, parseDuration, parseTime, presetOf, PRESETS, toUnixSeconds,
} from "../../ui/js/timespec.mjs";

const NOW = Date.UTC(2026, 10, 30, 6, 0, 0); // 2026-11-30T06:00:00Z

test("durations", () => {
    assert.equal(parseDuration("15m"), 15 * 60e3);
    assert.equal(parseDuration("1h30m"), 90 * 60e3);
    assert.equal(parseDuration("500ms"), 500);
    assert.equal(parseDuration("1.5h"), 1.5 * 3600e3);
    assert.equal(parseDuration("7d"), 7 * 86400e3);
    assert.equal(parseDuration("1w"), 7 * 86400e3);
    assert.equal(parseDuration("90"), 90e3);
    assert.ok(Number.isNaN(parseDuration("1x")));
    assert.ok(Number.isNaN(parseDuration("")));
    assert.ok(Number.isNaN(parseDuration("h")));
});

test("times: now, relative, unix by magnitude, RFC 3339", () => {
    assert.equal(parseTime("now", NOW), NOW);
    assert.equal(parseTime("now-1h", NOW), NOW - 3600e3);
    assert.equal(parseTime("now+5s", NOW), NOW + 5e3);
    assert.equal(parseTime("now-1h30m", NOW), NOW - 5400e3);
    assert.equal(parseTime("1700000000", NOW), 1700000000e3);
    assert.equal(parseTime("1700000000.25", NOW), 1700000000250);
    assert.equal(parseTime("1700000000123", NOW), 1700000000123);
    assert.equal(parseTime("1700000000123456", NOW), 1700000000123.456);
    assert.equal(parseTime("1700000000123456789", NOW), 1700000000123.4568);
    assert.equal(parseTime("2026-11-30T04:05:06Z", NOW), Date.UTC(2026, 10, 30, 4, 5, 6));
    assert.equal(parseTime("2026-11-30T04:05:06.5Z", NOW), Date.UTC(2026, 10, 30, 4, 5, 6, 500));
    assert.equal(parseTime("2026-11-30T04:05:06+02:00", NOW), Date.UTC(2026, 10, 30, 2, 5, 6));
    assert.equal(parseTime("2026-11-30 04:05:06-01:30", NOW), Date.UTC(2026, 10, 30, 5, 35, 6));
    assert.equal(parseTime("2026-11-30", NOW), Date.UTC(2026, 10, 30));
    assert.ok(Number.isNaN(parseTime("yesterday", NOW)));
    assert.ok(Number.isNaN(parseTime("now-", NOW)));
});

test("relative ranges and presets", () => {
    assert.ok(isRelative("now"));
    assert.ok(isRelative("now-1h"));
    assert.ok(!isRelative("1700000000"));
    assert.ok(!isRelative("nowhere"));
    assert.deepEqual(PRESETS.map((p) => p.from), ["now-15m", "now-1h", "now-6h", "now-24h", "now-7d"]);
    assert.equal(presetOf("now-6h", "now").label, "Last 6 hours");
    assert.equal(presetOf("now-6h", "now-1h"), null);
    assert.equal(toUnixSeconds(1700000000999), "1700000000");
    assert.equal(displayTime("1700000000"), "2023-11-14T22:13:20Z");
    assert.equal(displayTime("1700000000123"), "2023-11-14T22:13:20.123Z");
    assert.equal(displayTime("now-1h"), "now-1h");
    assert.equal(parseTime(displayTime("1796021114"), 0), 1796021114000);
});
