// diff-table.mjs - the diff view's table: per function the measure shown (self or total),
// its base and new values with their shares, the change with its 95% interval and the
// q-value, significant changes first (diff-model.mjs diffRows); a click selects the
// function in the flame graph.

import { diffRows, formatChange, formatInterval, formatQ } from "./diff-model.mjs";
import { h, replace } from "./dom.mjs";
import { formatMetric, formatPercent, formatValue, metricView } from "./format.mjs";
import { filterRows, PAGE, RowTable } from "./toptable.mjs";

export class DiffTable extends RowTable {
    // host: element to fill; opts.onSelect(name).
    constructor(host, opts = {}) {
        super(host, { testid: "diff-table", className: "top-table diff-table" });
        this.opts = opts;
        this.rows = [];
        this.doc = null;
        const th = (label, cls, title) => h("th", { class: cls, title }, label);
        replace(this.thead, h("tr", null,
            th("", "mark", "significant change: ▲ grew, ▼ shrank"),
            th("Function", "name"),
            th("", "measure", "the measure tested: self (flat) or total (cum)"),
            (this.thBase = th("Base", "num", "the base side's value and its share of the base total")),
            (this.thNew = th("New", "num", "the new side's value and its share of the new total")),
            th("Change", "num", "the relative change of the measure's mean over the replicates"),
            th("95% interval", "num interval", "the change's 95% confidence interval"),
            th("q", "num q", "the q-value (false discovery rate) of the test; – not tested")));
        this.tbody.addEventListener("click", (e) => {
            const tr = e.target.closest("tr[data-name]");
            if (tr && this.opts.onSelect) this.opts.onSelect(tr.dataset.name);
        });
    }

    // doc: the format=json diff answer (null clears)
    setData(doc) {
        this.doc = doc;
        this.rows = diffRows(doc);
        this.limit = PAGE;
        this.render();
    }

    render() {
        const rows = filterRows(this.rows, this.filter);
        const sig = this.rows.filter((r) => r.significant).length;
        const fresh = this.rows.filter((r) => r.status === "new").length;
        const gone = this.rows.filter((r) => r.status === "gone").length;
        const mu = this.doc && this.doc.metric_unit;
        // the columns show what the test compared: the means over the replicates, in their
        // unit (without statistics, the plain sums)
        const what = mu ? `means over the replicates, ${metricView(mu).title}` : "sums over each side";
        this.count.textContent = (this.filter ? `${rows.length} of ${this.rows.length}`
            : `${this.rows.length} functions`) + (mu ? `, ${sig} significant` : "") +
            (fresh ? `, ${fresh} new` : "") + (gone ? `, ${gone} gone` : "") + ` · values: ${what}`;
        for (const [th, side] of [[this.thBase, "base"], [this.thNew, "new"]])
            th.title = mu ? `the ${side} side's mean of the tested quantity (${metricView(mu).title}), ` +
                `and the function's share of the ${side} side's total` : `the ${side} side's value and its share of its total`;
        const u = this.doc ? this.doc.unit : "";
        const cell = (v, share, mean, unit) => h("td", { class: "num" },
            unit ? formatMetric(mean, unit) : formatValue(v, u),
            unit === "share" ? null : h("span", { class: "share-of" }, formatPercent(share, 1)));
        const mark = (r) => r.status === "new" ? "new" : r.status === "gone" ? "gone"
            : r.significant ? (r.direction > 0 ? "▲" : "▼") : "";
        const markTitle = (r) => r.status === "new" ? "absent from every base profile: new"
            : r.status === "gone" ? "absent from every new profile: gone"
                : r.significant ? "significant" : r.tested ? "within noise" : "not tested";
        const trs = rows.slice(0, this.limit).map((r) => h("tr", {
            dataset: { name: r.name, significant: String(r.significant), direction: String(r.direction),
                       measure: r.measure, status: r.status },
            class: [r.status === "new" ? "st-new" : r.status === "gone" ? "st-gone"
                : r.significant ? (r.direction > 0 ? "sig-up" : "sig-down") : "",
            r.name === this.selected ? "selected" : ""].join(" ").trim() || null,
        },
        h("td", { class: "mark", title: markTitle(r) }, mark(r)),
        h("td", { class: "name", title: r.name }, r.name),
        h("td", { class: "measure" }, r.measure),
        cell(r.base, r.baseShare, r.baseMean, r.unit), cell(r.new, r.newShare, r.newMean, r.unit),
        h("td", { class: "num change" }, formatChange(r.pct)),
        h("td", { class: "num interval" }, formatInterval(r.lo, r.hi)),
        h("td", { class: "num q" }, formatQ(r.q))));
        replace(this.tbody, trs);
        this.renderTail(trs.length, rows.length, this.rows.length > 0, 8);
    }
}
