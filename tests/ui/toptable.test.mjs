// toptable.test.mjs - the top table's rows, sorting and filtering.
import { test } from "node:test";
import assert from "node:assert/strict";
import { filterRows, nextSort, rowsOf, sortRows } from "../../ui/js/toptable.mjs";

const TOP = {
    sample_type: "cpu", unit: "nanoseconds", total: 100,
    rows: [
        { function: "main.burn", flat: 60, cum: 60 },
        { function: "main.spin", flat: 5, cum: 30 },
        { function: "main.step", flat: 25, cum: 25, inline: "yes" },
        { function: "runtime.main", flat: 0, cum: 95 },
        { function: "neg", flat: -70, cum: -70 },
    ],
};

test("rows of the format=top answer", () => {
    const r = rowsOf(TOP);
    assert.deepEqual(r[2], { name: "main.step", self: 25, total: 25, inline: "yes" });
    assert.equal(rowsOf({}).length, 0);
});

test("sorting by any column, by magnitude, ties by name", () => {
    const r = rowsOf(TOP);
    const names = (rows) => rows.map((x) => x.name);
    assert.deepEqual(names(sortRows(r, "-self")), ["neg", "main.burn", "main.step", "main.spin", "runtime.main"]);
    assert.deepEqual(names(sortRows(r, "self")), ["runtime.main", "main.spin", "main.step", "main.burn", "neg"]);
    assert.deepEqual(names(sortRows(r, "-total")), ["runtime.main", "neg", "main.burn", "main.spin", "main.step"]);
    assert.deepEqual(names(sortRows(r, "-total_pct")), names(sortRows(r, "-total")));
    assert.deepEqual(names(sortRows(r, "name")), ["main.burn", "main.spin", "main.step", "neg", "runtime.main"]);
    assert.deepEqual(names(sortRows(r, "-name")), ["runtime.main", "neg", "main.step", "main.spin", "main.burn"]);
    // ties: main.burn and main.step... equal totals resolve by name
    const tie = [{ name: "b", self: 1, total: 1 }, { name: "a", self: 1, total: 1 }];
    assert.deepEqual(names(sortRows(tie, "-self")), ["a", "b"]);
    assert.equal(r[0].name, "main.burn"); // the input is left alone
});

test("filtering and the sort a header click gives", () => {
    const r = rowsOf(TOP);
    assert.deepEqual(filterRows(r, "MAIN.S").map((x) => x.name), ["main.spin", "main.step"]);
    assert.equal(filterRows(r, "").length, 5);
    assert.equal(filterRows(r, "  ").length, 5);
    assert.equal(nextSort("-self", "self"), "self");
    assert.equal(nextSort("self", "self"), "-self");
    assert.equal(nextSort("-self", "total"), "-total");
    assert.equal(nextSort("-self", "name"), "name");
    assert.equal(nextSort("name", "name"), "-name");
});
