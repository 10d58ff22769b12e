// toptable.mjs - the top table: self and total per function with their shares, sortable,
// filterable; a click selects the function in the flame graph.

import { formatPercent, formatValue } from "./format.mjs";
import { h, replace } from "./dom.mjs";

export const PAGE = 300; // rows drawn at first; the rest on demand

export const COLUMNS = [
    { key: "name", label: "Function" },
    { key: "self", label: "Self" },
    { key: "self_pct", label: "Self %" },
    { key: "total", label: "Total" },
    { key: "total_pct", label: "Total %" },
];

// Rows of the /api/v1/render?format=top answer: {name, self, total, inline}.
export function rowsOf(top) {
    return (top.rows || []).map((r) => ({ name: r.function, self: r.flat, total: r.cum,
                                          inline: r.inline || "" }));
}

// Sorted copy: sort is a column key with '-' for descending ("-self"); ties by name.
export function sortRows(rows, sort) {
    const desc = sort.startsWith("-");
    const key = { self_pct: "self", total_pct: "total" }[sort.replace(/^-/, "")] ||
        sort.replace(/^-/, "");
    const dir = desc ? -1 : 1;
    return rows.slice().sort((a, b) => {
        let c;
        if (key === "name") c = a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
        else c = Math.abs(a[key]) - Math.abs(b[key]);
        if (c) return c * dir;
        return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
}

// The rows whose name contains text (case-insensitive), all for an empty text.
export function filterRows(rows, text) {
    const t = String(text || "").trim().toLowerCase();
    if (!t) return rows;
    return rows.filter((r) => r.name.toLowerCase().includes(t));
}

// The next sort when a column header is clicked: numbers start descending, names
// ascending; clicking the sorted column flips it.
export function nextSort(current, key) {
    const cur = current.replace(/^-/, "");
    if (cur === key) return current.startsWith("-") ? key : "-" + key;
    return key === "name" ? key : "-" + key;
}

// What the top table and the diff table share: a filter box and a count above a table
// with a sticky header, rows drawn a page at a time, one selected row (by data-name).
export class RowTable {
    // host: element to fill; testid, className: the table's.
    constructor(host, { testid, className }) {
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
        this.thead = h("thead");
        this.tbody = h("tbody");
        this.table = h("table", { class: className, dataset: { testid } }, this.thead, this.tbody);
        this.scroll = h("div", { class: "tt-scroll" }, this.table);
        host.append(h("div", { class: "tt-head" }, this.filterInput, this.count), this.scroll);
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

    // The rows after the drawn ones: "Show all N rows" when the page cut them, a line when
    // there are none (any: whether there are rows before the filter). cols: the columns.
    renderTail(shown, count, any, cols) {
        if (count > shown) {
            this.tbody.append(h("tr", { class: "more" }, h("td", { colspan: cols },
                h("button", { type: "button", onclick: () => {
                    this.limit = Infinity;
                    this.render();
                } }, `Show all ${count} rows`))));
        }
        if (!count) {
            this.tbody.append(h("tr", { class: "empty" }, h("td", { colspan: cols },
                any ? "No function matches the filter." : "No data.")));
        }
    }
}

export class TopTable extends RowTable {
    // host: element to fill. opts: onSort(sort), onSelect(name), onSandwich(name),
    // onSource(name) (optional: a "src" button per row), onOverTime(name) (optional: a "∿"
    // button per row, the function over time), onContext(name, event).
    constructor(host, opts = {}) {
        super(host, { testid: "top-table", className: "top-table" });
        this.opts = opts;
        this.rows = [];
        this.total = 0;
        this.unit = "";
        this.sort = "-self";
        this.tbody.addEventListener("click", (e) => {
            const tr = e.target.closest("tr[data-name]");
            if (!tr) return;
            if (e.target.closest(".tt-sandwich")) {
                this.opts.onSandwich && this.opts.onSandwich(tr.dataset.name);
                return;
            }
            if (e.target.closest(".tt-source")) {
                this.opts.onSource && this.opts.onSource(tr.dataset.name);
                return;
            }
            if (e.target.closest(".tt-time")) {
                this.opts.onOverTime && this.opts.onOverTime(tr.dataset.name);
                return;
            }
            this.opts.onSelect && this.opts.onSelect(tr.dataset.name);
        });
        this.tbody.addEventListener("contextmenu", (e) => {
            const tr = e.target.closest("tr[data-name]");
            if (!tr || !this.opts.onContext) return;
            e.preventDefault();
            this.opts.onContext(tr.dataset.name, e);
        });
    }

    // top: the format=top answer (null clears)
    setData(top) {
        this.rows = top ? rowsOf(top) : [];
        this.total = top ? top.total : 0;
        this.unit = top ? top.unit : "";
        this.limit = PAGE;
        this.render();
    }

    setSort(sort) {
        if (sort === this.sort) return;
        this.sort = sort;
        this.render();
    }

    render() {
        const cur = this.sort.replace(/^-/, ""), desc = this.sort.startsWith("-");
        replace(this.thead, h("tr", null, COLUMNS.map((c) => h("th", {
            class: (c.key === "name" ? "name" : "num") + (c.key === cur ? " sorted" : ""),
            "aria-sort": c.key === cur ? (desc ? "descending" : "ascending") : "none",
            title: "Sort by " + c.label.toLowerCase(),
            onclick: () => this.opts.onSort && this.opts.onSort(nextSort(this.sort, c.key)),
        }, c.label, c.key === cur ? h("span", { class: "arrow" }, desc ? " ▼" : " ▲") : null))));
        const rows = sortRows(filterRows(this.rows, this.filter), this.sort);
        this.count.textContent = this.filter ? `${rows.length} of ${this.rows.length}`
            : `${this.rows.length} functions`;
        const shown = rows.slice(0, this.limit);
        const u = this.unit, t = this.total;
        const trs = shown.map((r) => h("tr", {
            dataset: { name: r.name }, class: r.name === this.selected ? "selected" : null,
        },
        h("td", { class: "name", title: r.name },
            h("button", { type: "button", class: "tt-sandwich", title: "Sandwich: callers and callees",
                          "aria-label": "sandwich view of " + r.name }, "⇅"),
            this.opts.onSource ? h("button", { type: "button", class: "tt-source",
                                               title: "Source: its lines with their values",
                                               "aria-label": "source of " + r.name }, "src") : null,
            this.opts.onOverTime ? h("button", { type: "button", class: "tt-time",
                                                 title: "Over time: its value over the range, under the timeline",
                                                 "aria-label": "over time: " + r.name }, "∿") : null,
            r.name, r.inline ? h("span", { class: "inline" }, " (inline)") : null),
        h("td", { class: "num" }, formatValue(r.self, u)),
        h("td", { class: "num pct" }, bar(r.self, t), h("span", null, formatPercent(r.self, t))),
        h("td", { class: "num" }, formatValue(r.total, u)),
        h("td", { class: "num pct" }, bar(r.total, t), h("span", null, formatPercent(r.total, t)))));
        replace(this.tbody, trs);
        this.renderTail(shown.length, rows.length, this.rows.length > 0, COLUMNS.length);
    }
}

function bar(v, total) {
    const p = total ? Math.max(0, Math.min(100, (Math.abs(v) / total) * 100)) : 0;
    return h("span", { class: "bar", style: { width: p.toFixed(1) + "%" } });
}
