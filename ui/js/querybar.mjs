// querybar.mjs - the query bar: profile type, service picker, label selector with
// autocompletion of label names and values, time range (presets, custom), refresh and
// auto-refresh.

import { h, replace } from "./dom.mjs";
import {
    applyCompletion, completionContext, filterCompletions, SERVICE_LABEL, serviceOf, serviceSelector,
} from "./selector.mjs";
import { displayTime, isRelative, parseTime, presetOf, PRESETS } from "./timespec.mjs";
import { formatDateTime } from "./format.mjs";

// The service picker's values besides the services: every series, and a selector that is
// about no one service (shown, not chosen).
const ALL = "\u0001all", OTHER = "";

// The auto-refresh choices (state.refresh).
export const AUTO_REFRESH = [["", "Auto: off"], ["10s", "Auto: 10 s"], ["30s", "Auto: 30 s"],
    ["1m", "Auto: 1 min"]];

export class QueryBar {
    // form: the <form id="querybar">; opts: api, onQuery(text), onType(id),
    // onRange(from, until), onRefresh(), onAutoRefresh(choice).
    constructor(form, opts) {
        this.opts = opts;
        this.form = form;
        this.typeSelect = form.querySelector("#type-select");
        this.serviceSelect = form.querySelector("#service-select");
        this.autoSelect = form.querySelector("#auto-refresh");
        this.services = [];
        this.input = form.querySelector("#query-input");
        this.list = form.querySelector("#completions");
        this.rangeSelect = form.querySelector("#range-select");
        this.custom = form.querySelector("#custom-range");
        this.fromInput = form.querySelector("#from-input");
        this.untilInput = form.querySelector("#until-input");
        this.error = form.querySelector("#query-error");
        this.names = null; // label names, fetched once per refresh
        this.values = new Map(); // label -> values
        this.items = [];
        this.active = -1;
        this.ctx = null;
        this.seq = 0;
        for (const p of PRESETS) this.rangeSelect.append(h("option", { value: p.from + "|" + p.until }, p.label));
        this.rangeSelect.append(h("option", { value: "custom" }, "Custom range…"));

        form.addEventListener("submit", (e) => {
            e.preventDefault();
            this.hideList();
            this.submit();
        });
        this.typeSelect.addEventListener("change", () => this.opts.onType(this.typeSelect.value));
        this.serviceSelect.addEventListener("change", () => {
            const v = this.serviceSelect.value;
            if (v === OTHER) return;
            this.input.value = v === ALL ? "{}" : serviceSelector(v);
            this.submit();
        });
        for (const [v, label] of AUTO_REFRESH) this.autoSelect.append(h("option", { value: v }, label));
        this.autoSelect.addEventListener("change", () => this.opts.onAutoRefresh(this.autoSelect.value));
        this.rangeSelect.addEventListener("change", () => {
            const v = this.rangeSelect.value;
            if (v === "custom") {
                this.custom.hidden = false;
                this.fromInput.focus();
                return;
            }
            this.custom.hidden = true;
            const [from, until] = v.split("|");
            this.opts.onRange(from, until);
        });
        form.querySelector("#range-apply").addEventListener("click", () => this.applyCustom());
        for (const inp of [this.fromInput, this.untilInput]) {
            inp.addEventListener("keydown", (e) => {
                if (e.key === "Enter") {
                    e.preventDefault();
                    this.applyCustom();
                }
            });
        }
        this.input.addEventListener("input", () => this.complete());
        this.input.addEventListener("click", () => this.complete());
        this.input.addEventListener("focus", () => this.complete());
        this.input.addEventListener("blur", () => setTimeout(() => this.hideList(), 150));
        this.input.addEventListener("keydown", (e) => this.onKey(e));
        this.list.addEventListener("mousedown", (e) => {
            const li = e.target.closest("li[data-i]");
            if (!li) return;
            e.preventDefault();
            this.choose(+li.dataset.i);
        });
    }

    submit() {
        this.opts.onQuery(this.input.value.trim());
    }

    applyCustom() {
        // unchanged inputs keep the URL's spelling of the time
        const keep = (inp, cur) => {
            const v = inp.value.trim();
            return cur && v === displayTime(cur) ? cur : v;
        };
        const from = keep(this.fromInput, this.state && this.state.from) || "now-1h";
        const until = keep(this.untilInput, this.state && this.state.until) || "now";
        const now = Date.now();
        const a = parseTime(from, now), b = parseTime(until, now);
        if (Number.isNaN(a) || Number.isNaN(b)) {
            this.setError("a time is now, now-2h, unix seconds or RFC 3339 (2026-11-30T10:00:00Z)");
            return;
        }
        if (b <= a) {
            this.setError("the range must end after it starts");
            return;
        }
        this.setError("");
        this.opts.onRange(from, until);
    }

    // types: the /api/v1/profile_types answer; grouped by profile, with units.
    setTypes(types) {
        const groups = new Map();
        for (const t of types) {
            if (!groups.has(t.profile)) groups.set(t.profile, []);
            groups.get(t.profile).push(t);
        }
        replace(this.typeSelect, types.length ? [...groups].map(([p, ts]) => h("optgroup", { label: p },
            ts.map((t) => h("option", { value: t.id, title: t.id },
                `${t.profile}: ${t.sample_type} (${t.unit}${t.aggregation === "average" ? ", avg" : ""})`))))
            : h("option", { value: "" }, "no data yet"));
        this.typeSelect.disabled = !types.length;
        if (this.state) this.typeSelect.value = this.state.type;
    }

    // The services (the values of service_name) for the picker: fetched again (new ones
    // come with pushes and uploads).
    async loadServices() {
        this.values.delete(SERVICE_LABEL);
        try {
            this.services = await this.candidates({ kind: "value", label: SERVICE_LABEL });
        } catch {
            this.services = [];
        }
        this.renderServices();
    }

    renderServices() {
        const cur = this.state ? this.state.query : "";
        const svc = serviceOf(cur);
        const names = svc && !this.services.includes(svc) ? [...this.services, svc] : this.services;
        const all = !cur.trim() || cur.trim() === "{}";
        // rebuilt only when the choices change (a list open in the browser stays open)
        const key = JSON.stringify([names, svc, all]);
        if (key !== this.servicesKey) {
            this.servicesKey = key;
            replace(this.serviceSelect,
                h("option", { value: OTHER, disabled: true, hidden: svc || all }, "(selector)"),
                h("option", { value: ALL }, "All services"),
                names.map((n) => h("option", { value: n }, n)));
        }
        this.serviceSelect.value = svc || (all ? ALL : OTHER);
    }

    // Reflects the state in the inputs (not while the user types in them).
    apply(state) {
        this.state = state;
        this.renderServices();
        this.autoSelect.value = state.refresh;
        if (document.activeElement !== this.input) this.input.value = state.query;
        else if (this.lastQuery !== state.query) this.input.value = state.query;
        this.lastQuery = state.query;
        if ([...this.typeSelect.options].some((o) => o.value === state.type))
            this.typeSelect.value = state.type;
        const p = presetOf(state.from, state.until);
        if (p) {
            this.rangeSelect.value = p.from + "|" + p.until;
            this.custom.hidden = true;
        } else {
            this.rangeSelect.value = "custom";
            this.custom.hidden = false;
        }
        this.fromInput.value = displayTime(state.from);
        this.untilInput.value = displayTime(state.until);
        // as wide as their text: a time with milliseconds shows whole
        for (const inp of [this.fromInput, this.untilInput])
            inp.style.width = Math.max(14, inp.value.length + 3) + "ch";
        this.fromInput.title = describeTime(state.from);
        this.untilInput.title = describeTime(state.until);
    }

    setError(msg) {
        this.error.textContent = msg || "";
        this.error.hidden = !msg;
        this.input.setAttribute("aria-invalid", msg ? "true" : "false");
    }

    // The label names and values: cached; forget() drops them (refresh).
    forget() {
        this.names = null;
        this.values.clear();
    }

    async candidates(ctx) {
        if (ctx.kind === "name") {
            if (!this.names) this.names = await this.opts.api.json("api/v1/labels");
            return this.names;
        }
        if (!this.values.has(ctx.label))
            this.values.set(ctx.label, await this.opts.api.json("api/v1/label_values", { name: ctx.label }));
        return this.values.get(ctx.label);
    }

    async complete() {
        const seq = ++this.seq;
        const ctx = completionContext(this.input.value, this.input.selectionStart ?? this.input.value.length);
        if (!ctx) {
            this.hideList();
            return;
        }
        let all;
        try {
            all = await this.candidates(ctx);
        } catch {
            all = [];
        }
        if (seq !== this.seq || document.activeElement !== this.input) return;
        const items = filterCompletions(all, ctx.prefix);
        if (!items.length || (items.length === 1 && items[0] === ctx.prefix && ctx.kind === "value")) {
            this.hideList();
            return;
        }
        this.ctx = ctx;
        this.items = items;
        this.active = -1;
        replace(this.list, items.map((it, i) => h("li", { role: "option", dataset: { i: String(i) },
                                                           id: "completion-" + i },
            h("span", { class: "kind" }, ctx.kind === "name" ? "label" : ctx.label), it)));
        this.list.hidden = false;
        this.input.setAttribute("aria-expanded", "true");
    }

    hideList() {
        this.seq++; // a completion still being fetched is not shown any more
        this.list.hidden = true;
        this.items = [];
        this.active = -1;
        this.input.setAttribute("aria-expanded", "false");
    }

    setActive(i) {
        this.active = i;
        [...this.list.children].forEach((li, k) => li.classList.toggle("active", k === i));
        const li = this.list.children[i];
        if (li) {
            li.scrollIntoView({ block: "nearest" });
            this.input.setAttribute("aria-activedescendant", li.id);
        }
    }

    choose(i) {
        const it = this.items[i];
        if (it === undefined || !this.ctx) return;
        const r = applyCompletion(this.input.value, this.ctx, it);
        this.input.value = r.text;
        this.input.setSelectionRange(r.cursor, r.cursor);
        this.hideList();
        this.input.focus();
        this.complete();
    }

    onKey(e) {
        const open = !this.list.hidden && this.items.length;
        if (e.key === "ArrowDown" && open) {
            e.preventDefault();
            this.setActive((this.active + 1) % this.items.length);
        } else if (e.key === "ArrowUp" && open) {
            e.preventDefault();
            this.setActive((this.active - 1 + this.items.length) % this.items.length);
        } else if ((e.key === "Enter" && open && this.active >= 0) || (e.key === "Tab" && open)) {
            e.preventDefault();
            this.choose(this.active >= 0 ? this.active : 0);
        } else if (e.key === "Enter") {
            // runs the query (the form's submit, which main.mjs's Refresh button may take
            // over): the list closes here
            this.hideList();
        } else if (e.key === "Escape" && open) {
            e.preventDefault();
            this.hideList();
        } else if (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End") {
            setTimeout(() => this.complete());
        }
    }
}

// A time for the inputs' tooltip: local, with its milliseconds when it has some.
function describeTime(s) {
    if (isRelative(s)) return s;
    const t = parseTime(s, Date.now());
    if (Number.isNaN(t)) return s;
    const ms = Math.floor(t) % 1000;
    return formatDateTime(Math.floor(t / 1000)) + (ms ? "." + String(ms).padStart(3, "0") : "");
}
