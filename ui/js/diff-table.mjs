// diff-table.mjs - the diff view's table: per function the measure shown (self or total),
// its base and new values with their shares, the change with its 95% interval and the
// q-value, significant changes first (diff-model.mjs diffRows); a click selects the
// function in the flame graph.

import { diffRows, formatChange, formatInterval, formatQ } from "./diff-model.mjs";
import { h, replace } from "./dom.mjs";
import { formatPercent, formatValue } from "./format.mjs";
import { filterRows } from "./toptable.mjs";

const PAGE = 300; // rows drawn at first; the rest on demand

export class DiffTable {
    // host: element to fill; opts.onSelect(name).
    constructor(host, opts = {}) {
        this.opts = opts;
        this.rows = [];
        this.doc = null;
        this.filter = "";
        this.selected = "";
        this.limit = PAGE;
        this.filterInput = h("input", {
            type: "search", class: "tt-filter", placeholder: "Filter functions",
            "aria-label": "filter functions",
            oninput: () => {
                this.filter = this.filterInput.value;
                this.limit = PAGE;
                this.render();
            },
        });
        this.count = h("span", { class: "tt-count" });
        this.tbody = h("tbody");
        const th = (label, cls, title) => h("th", { class: cls, title }, label);
        this.table = h("table", { class: "top-table diff-table", dataset: { testid: "diff-table" } },
            h("thead", null, h("tr", null,
                th("", "mark", "significant change: ▲ grew, ▼ shrank"),
                th("Function", "name"),
                th("", "measure", "the measure tested: self (flat) or total (cum)"),
                th("Base", "num", "the base side's value and its share of the base total"),
                th("New", "num", "the new side's value and its share of the new total"),
                th("Change", "num", "the relative change of the measure's mean over the replicates"),
                th("95% interval", "num interval", "the change's 95% confidence interval"),
                th("q", "num q", "the q-value (false discovery rate) of the test; – not tested"))),
            this.tbody);
        this.scroll = h("div", { class: "tt-scroll" }, this.table);
        host.append(h("div", { class: "tt-head" }, this.filterInput, this.count), this.scroll);
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

    setSelected(name) {
        if (name === this.selected) return;
        this.selected = name;
        for (const tr of this.tbody.querySelectorAll("tr.selected")) tr.classList.remove("selected");
        const tr = name ? [...this.tbody.children].find((r) => r.dataset.name === name) : null;
        if (tr) {
            tr.classList.add("selected");
            tr.scrollIntoView({ block: "nearest" });
        }
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
        if (rows.length > this.limit) {
            this.tbody.append(h("tr", { class: "more" }, h("td", { colspan: 8 },
                h("button", { type: "button", onclick: () => {
                    this.limit = Infinity;
                    this.render();
                } }, `Show all ${rows.length} rows`))));
        }
        if (!rows.length) {
            this.tbody.append(h("tr", { class: "empty" }, h("td", { colspan: 8 },
                this.rows.length ? "No function matches the filter." : "No data.")));
        }
    }
}
