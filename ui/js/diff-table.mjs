// diff-table.mjs - the diff view's table: per function the measure shown (self or total),
// its base and new values with their shares, the change with its 95% interval and the
// q-value, significant changes first (diff-model.mjs diffRows); a click selects the
// function in the flame graph.

import { diffRows, formatChange, formatInterval, formatQ } from "./diff-model.mjs";
import { h, replace } from "./dom.mjs";
import { formatPercent, formatValue } from "./format.mjs";
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
            th("Base", "num", "the base side's value and its share of the base total"),
            th("New", "num", "the new side's value and its share of the new total"),
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
        this.count.textContent = (this.filter ? `${rows.length} of ${this.rows.length}`
            : `${this.rows.length} functions`) + `, ${sig} significant`;
        const u = this.doc ? this.doc.unit : "";
        const cell = (v, share) => h("td", { class: "num" }, formatValue(v, u),
            h("span", { class: "share-of" }, formatPercent(share, 1)));
        const trs = rows.slice(0, this.limit).map((r) => h("tr", {
            dataset: { name: r.name, significant: String(r.significant), direction: String(r.direction),
                       measure: r.measure },
            class: [r.significant ? (r.direction > 0 ? "sig-up" : "sig-down") : "",
                r.name === this.selected ? "selected" : ""].join(" ").trim() || null,
        },
        h("td", { class: "mark", title: r.significant ? "significant" : r.tested ? "within noise" : "not tested" },
            r.significant ? (r.direction > 0 ? "▲" : "▼") : ""),
        h("td", { class: "name", title: r.name }, r.name),
        h("td", { class: "measure" }, r.measure),
        cell(r.base, r.baseShare), cell(r.new, r.newShare),
        h("td", { class: "num change" }, formatChange(r.pct)),
        h("td", { class: "num interval" }, formatInterval(r.lo, r.hi)),
        h("td", { class: "num q" }, formatQ(r.q))));
        replace(this.tbody, trs);
        this.renderTail(trs.length, rows.length, this.rows.length > 0, 8);
    }
}
