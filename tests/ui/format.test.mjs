// format.test.mjs - values in their units, percentages, times and durations.
process.env.TZ = "UTC";
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    formatDateTime, formatDuration, formatInteger, formatMetric, formatPercent, formatTick,
    formatValue, metricView, sig3, unitKind, unitScale,
} from "../../ui/js/format.mjs";

test("unit kinds", () => {
    assert.equal(unitKind("nanoseconds"), "time");
    assert.equal(unitKind("seconds"), "time");
    assert.equal(unitKind("bytes"), "bytes");
    assert.equal(unitKind("count"), "count");
    assert.equal(unitKind("objects"), "count");
    assert.equal(unitKind(undefined), "count");
});

test("nanoseconds become µs, ms, s, min, h", () => {
    assert.equal(formatValue(0, "nanoseconds"), "0");
    assert.equal(formatValue(0, "nanoseconds", unitScale("nanoseconds", 0)), "0 ns");
    assert.equal(formatValue(950, "nanoseconds"), "950 ns");
    assert.equal(formatValue(1500, "nanoseconds"), "1.50 µs");
    assert.equal(formatValue(1500000, "nanoseconds"), "1.50 ms");
    assert.equal(formatValue(12345678, "nanoseconds"), "12.3 ms");
    assert.equal(formatValue(1e9, "nanoseconds"), "1.00 s");
    assert.equal(formatValue(90e9, "nanoseconds"), "90.0 s");
    assert.equal(formatValue(150e9, "nanoseconds"), "2.50 min");
    assert.equal(formatValue(7200e9, "nanoseconds"), "2.00 h");
    assert.equal(formatValue(-2e6, "nanoseconds"), "-2.00 ms");
    assert.equal(formatValue(1500, "microseconds"), "1.50 ms");
    assert.equal(formatValue(2, "seconds"), "2.00 s");
});

test("bytes become KiB, MiB, GiB", () => {
    assert.equal(formatValue(512, "bytes"), "512 B");
    assert.equal(formatValue(1024, "bytes"), "1.00 KiB");
    assert.equal(formatValue(1536, "bytes"), "1.50 KiB");
    assert.equal(formatValue(3 * 1024 * 1024, "bytes"), "3.00 MiB");
    assert.equal(formatValue(5474744, "bytes"), "5.22 MiB");
    assert.equal(formatValue(1.5 * 2 ** 30, "bytes"), "1.50 GiB");
    assert.equal(formatValue(2 ** 50, "bytes"), "1.00 PiB");
});

test("counts: exact when small, k/M/G above", () => {
    assert.equal(formatValue(0, "count"), "0");
    assert.equal(formatValue(42, "count"), "42");
    assert.equal(formatValue(999, "count"), "999");
    assert.equal(formatValue(2.5, "count"), "2.5");
    assert.equal(formatValue(1000, "count"), "1.00k");
    assert.equal(formatValue(12345, "count"), "12.3k");
    assert.equal(formatValue(7.2e6, "count"), "7.20M");
    assert.equal(formatValue(3e9, "goroutines"), "3.00G");
    assert.equal(formatValue(NaN, "count"), "–");
});

test("a shared scale formats every tick of an axis in one unit", () => {
    const s = unitScale("bytes", 3 * 2 ** 20);
    assert.deepEqual(s, { factor: 2 ** 20, suffix: " MiB" });
    assert.equal(formatValue(0, "bytes", s), "0 MiB");
    assert.equal(formatValue(2 ** 19, "bytes", s), "0.50 MiB");
    const t = unitScale("nanoseconds", 5e9);
    assert.equal(formatValue(2.5e9, "nanoseconds", t), "2.50 s");
    assert.equal(formatValue(0, "count", unitScale("count", 50)), "0");
});

test("sig3", () => {
    assert.equal(sig3(1.234), "1.23");
    assert.equal(sig3(12.34), "12.3");
    assert.equal(sig3(123.4), "123");
    assert.equal(sig3(0), "0");
});

test("percentages", () => {
    assert.equal(formatPercent(1, 3), "33.33%");
    assert.equal(formatPercent(5, 5), "100.00%");
    assert.equal(formatPercent(0, 5), "0.00%");
    assert.equal(formatPercent(1, 0), "0%");
    assert.equal(formatPercent(1, 1e6), "<0.01%");
    assert.equal(formatPercent(-1, 1e6), "-<0.01%");
});

test("integers, times, ticks, durations", () => {
    assert.equal(formatInteger(1234567), "1,234,567");
    assert.equal(formatInteger(12), "12");
    const at = (h, m, s) => Date.UTC(2026, 10, 30, h, m, s) / 1000;
    assert.equal(formatDateTime(at(6, 11, 10)), "2026-11-30 06:11:10");
    assert.equal(formatDateTime(at(6, 11, 10), false), "2026-11-30 06:11");
    assert.equal(formatTick(at(6, 10, 0), 300), "06:10");
    assert.equal(formatTick(at(6, 10, 30), 30), "06:10:30");
    assert.equal(formatTick(at(0, 0, 0), 3600), "11-30 00:00");
    assert.equal(formatTick(at(0, 0, 0), 86400), "11-30");
    assert.equal(formatDuration(45), "45s");
    assert.equal(formatDuration(90), "1m 30s");
    assert.equal(formatDuration(3600), "1h");
    assert.equal(formatDuration(93784), "1d 2h 3m");
});

test("metrics: rates, averages and shares in their units, null as no value", () => {
    assert.equal(formatMetric(5e7, "nanoseconds/s"), "0.05 cores");
    assert.equal(formatMetric(2.5e9, "nanoseconds/s"), "2.5 cores");
    assert.equal(formatMetric(1234, "milliseconds/s"), "1.23 cores");
    assert.equal(formatMetric(2048, "bytes/s"), "2.00 KiB/s");
    assert.equal(formatMetric(12.5, "count/s"), "12.5/s");
    assert.equal(formatMetric(3e8, "nanoseconds/profile"), "300 ms/profile");
    assert.equal(formatMetric(4096, "bytes"), "4.00 KiB");
    assert.equal(formatMetric(0.1234, "share"), "12.34%");
    assert.equal(formatMetric(null, "bytes"), "–");
    assert.equal(metricView("nanoseconds/s").title, "CPU cores");
    assert.equal(metricView("bytes").title, "bytes (average)");
    assert.equal(metricView("bytes/s").title, "bytes per second");
});
