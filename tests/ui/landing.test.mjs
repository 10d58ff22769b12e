// landing.test.mjs - where the page opens without a query: the busiest service of the
// timeline grouped by service_name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { busiestValue, landingQuery } from "../../ui/js/landing.mjs";
import { DEFAULTS } from "../../ui/js/state.mjs";

const line = (labels, values) => ({ labels, values });

test("the busiest value is the line with the largest total; gaps count nothing", () => {
    const tl = { timestamps: [0, 10, 20], step: 10, series: [
        line({ service_name: "api" }, [5, null, 5]),
        line({ service_name: "db" }, [null, 11, null]),
        line({}, [100, 100, 100]), // series without the label
        line({ service_name: "idle" }, [0, 0, 0]),
    ] };
    assert.equal(busiestValue(tl), "db");
    assert.equal(busiestValue(tl, "env"), "");
    assert.equal(busiestValue({ series: [line({ service_name: "idle" }, [0, null])] }), "");
    assert.equal(busiestValue(null), "");
    assert.equal(busiestValue({ series: [] }), "");
});

test("the landing query asks the timeline by service over the state's range", async () => {
    const asked = [];
    const api = { json: async (path, p) => {
        asked.push([path, p]);
        return { series: [line({ service_name: 'a"b' }, [1]), line({ service_name: "c" }, [0.5])] };
    } };
    const st = { ...DEFAULTS, type: "cpu:cpu", from: "now-6h" };
    assert.equal(await landingQuery(api, st), '{service_name="a\\"b"}');
    assert.deepEqual(asked, [["api/v1/timeline",
        { type: "cpu:cpu", from: "now-6h", until: "now", group_by: "service_name" }]]);
    // no type yet, no data, or a failed request: no service to open on
    assert.equal(await landingQuery(api, { ...st, type: "" }), "");
    assert.equal(await landingQuery({ json: async () => ({ series: [] }) }, st), "");
    assert.equal(await landingQuery({ json: async () => { throw new Error("down"); } }, st), "");
});
