// flame-panel.mjs - the flame graph view: the canvas with its breadcrumb, tooltip, context
// menu (copy, focus, ignore, hide, sandwich) and the sandwich of a function.

import { copyText, h, hideMenu, hideTooltip, replace, showMenu, showTooltip } from "./dom.mjs";
import { FlameGraph } from "./flamegraph.mjs";
import {
    ancestry, findPath, matchNodes, pathOf, sandwich, searchRegex, searchShare,
} from "./flame-model.mjs";
import { formatPercent, formatValue } from "./format.mjs";

export class FlamePanel {
    // host: the panel element (data-testid="flamegraph"). opts: onZoom(path: string[]),
    // onFilter(kind: "focus"|"ignore"|"hide", name), onSandwich(name | ""),
    // onSelect(name), onShare(share | null), maxHeight(), onSource(name) (optional: the
    // menu's "Show source"), onOverTime(name) (optional: "Show over time"). A comparison's panel also passes: nodeColor(model, id) and
    // dimColor (FlameGraph's), tooltip(model, id) (the tooltip's content), sandwich: false
    // (no sandwich view), selectLabel (the menu item that calls onSelect), label.
    constructor(host, opts) {
        this.opts = opts;
        this.host = host;
        this.model = null;
        this.state = {};
        this.sw = null; // sandwich models
        this.breadcrumb = h("nav", { class: "fg-breadcrumb", "aria-label": "zoom path" });
        this.mainHost = h("div", { class: "fg-host fg-main" });
        this.swTitle = h("span", { class: "sw-title" });
        this.swCallers = h("div", { class: "fg-host sw-callers" });
        this.swCallees = h("div", { class: "fg-host sw-callees" });
        this.swBox = h("div", { class: "sandwich", hidden: true, dataset: { testid: "sandwich" } },
            h("div", { class: "sw-head" }, this.swTitle,
                h("button", { type: "button", class: "small", title: "Close the sandwich view",
                              onclick: () => this.opts.onSandwich("") }, "Close")),
            h("div", { class: "sw-label" }, "Callers (who calls it, bottom up)"), this.swCallers,
            h("div", { class: "sw-label" }, "Callees (what it calls)"), this.swCallees);
        host.append(this.breadcrumb, this.mainHost, this.swBox);
        const half = () => Math.max(120, (opts.maxHeight() - 60) / 2);
        // root at the bottom: the graph fits the window below its top, so the root shows
        // without scrolling the page (deep stacks scroll inside)
        const mainHeight = () => {
            if (this.state.orient !== "flame") return opts.maxHeight();
            const top = this.mainHost.getBoundingClientRect().top + window.scrollY;
            return Math.max(280, Math.min(opts.maxHeight(), window.innerHeight - top - 20));
        };
        this.fg = new FlameGraph(this.mainHost, {
            maxHeight: mainHeight, label: opts.label || "flame graph", rootTotal: true,
            nodeColor: opts.nodeColor, dimColor: opts.dimColor,
            onHover: (id, e) => this.tooltip(this.fg, id, e),
            onClick: (id) => this.opts.onZoom(id <= 0 ? [] : pathOf(this.model, id)),
            onContext: (id, e) => this.menu(this.fg, id, e),
        });
        this.fgCallers = new FlameGraph(this.swCallers, {
            maxHeight: half, orient: "flame", label: "callers",
            onHover: (id, e) => this.tooltip(this.fgCallers, id, e),
            onClick: (id) => this.fgCallers.setZoom(id),
            onContext: (id, e) => this.menu(this.fgCallers, id, e),
        });
        this.fgCallees = new FlameGraph(this.swCallees, {
            maxHeight: half, label: "callees",
            onHover: (id, e) => this.tooltip(this.fgCallees, id, e),
            onClick: (id) => this.fgCallees.setZoom(id),
            onContext: (id, e) => this.menu(this.fgCallees, id, e),
        });
    }

    // A new profile (a flame model, or null).
    setModel(model, state) {
        this.model = model;
        this.state = {};
        this.fg.setModel(model);
        this.apply(state, true);
    }

    // Brings the view in line with state: orientation, zoom, search, sandwich.
    apply(state, fresh = false) {
        const prev = this.state;
        this.state = state;
        const m = this.model;
        if (fresh || prev.orient !== state.orient) this.fg.setOrient(state.orient);
        if (fresh || prev.zoom !== state.zoom) {
            const id = m && state.zoom ? findPath(m, state.zoom.split(";")) : -1;
            this.fg.setZoom(id);
            this.zoomId = id;
            this.renderBreadcrumb();
        }
        if ((fresh || prev.sandwich !== state.sandwich) && this.opts.sandwich !== false) {
            this.sw = m && state.sandwich ? sandwich(m, state.sandwich) : null;
            const on = !!state.sandwich;
            this.swBox.hidden = !on;
            this.mainHost.hidden = on;
            this.breadcrumb.hidden = on;
            if (on) {
                replace(this.swTitle, "Sandwich: ", h("b", null, state.sandwich),
                    this.sw ? "" : " — not in this profile");
                this.fgCallers.setModel(this.sw ? this.sw.callers : null);
                this.fgCallees.setModel(this.sw ? this.sw.callees : null);
            }
        }
        if (fresh || prev.search !== state.search || prev.sandwich !== state.sandwich) {
            const re = searchRegex(state.search);
            this.fg.setMatched(re && m ? matchNodes(m, re) : null);
            if (this.sw) {
                this.fgCallers.setMatched(re ? matchNodes(this.sw.callers, re) : null);
                this.fgCallees.setMatched(re ? matchNodes(this.sw.callees, re) : null);
            }
            if (re && m && m.n) {
                const s = searchShare(m, this.fg.matched);
                this.opts.onShare({ ...s, total: m.rootTotal, unit: m.unit });
            } else this.opts.onShare(null);
        }
    }

    renderBreadcrumb() {
        const m = this.model;
        const ids = m && this.zoomId > 0 ? ancestry(m, this.zoomId) : [];
        const crumbs = [h("button", { type: "button", class: "crumb" + (ids.length ? "" : " current"),
                                      onclick: () => this.opts.onZoom([]) }, "all")];
        ids.forEach((id, i) => {
            crumbs.push(h("span", { class: "sep" }, "›"));
            crumbs.push(h("button", {
                type: "button", class: "crumb" + (i === ids.length - 1 ? " current" : ""),
                title: m.names[m.name[id]], onclick: () => this.opts.onZoom(pathOf(m, id)),
            }, m.names[m.name[id]]));
        });
        if (ids.length) {
            crumbs.push(h("button", { type: "button", class: "small reset", dataset: { testid: "reset-zoom" },
                                      onclick: () => this.opts.onZoom([]) }, "Reset zoom"));
        }
        replace(this.breadcrumb, crumbs);
    }

    tooltip(fg, id, e) {
        const m = fg.model;
        if (id < 0 || !m) {
            hideTooltip();
            return;
        }
        if (this.opts.tooltip && fg === this.fg) {
            showTooltip(this.opts.tooltip(m, id), e.clientX, e.clientY);
            return;
        }
        const all = this.model ? this.model.rootTotal : m.rootTotal;
        const p = m.parent[id];
        const pt = p >= 0 ? m.total[p] : 0;
        const u = m.unit || (this.model && this.model.unit) || "";
        const row = (label, v) => h("tr", null, h("th", null, label),
            h("td", null, formatValue(v, u)), h("td", null, formatPercent(v, all)),
            h("td", null, p >= 0 ? formatPercent(v, pt) : "–"));
        showTooltip(h("div", { class: "fg-tip" },
            h("div", { class: "tip-title" }, m.names[m.name[id]]),
            h("table", null,
                h("tr", null, h("th"), h("th", null, "value"), h("th", null, "of total"),
                    h("th", null, "of parent")),
                row("Total", m.total[id]), row("Self", m.self[id])),
            h("div", { class: "tip-hint" }, "click to zoom, right-click for more")),
        e.clientX, e.clientY);
    }

    menu(fg, id, e) {
        const m = fg.model;
        const name = m.names[m.name[id]];
        const items = [{ label: "Copy name", action: () => copyText(name) }];
        if (id > 0 || fg !== this.fg) {
            items.push({ label: "Zoom here", action: () => fg === this.fg
                ? this.opts.onZoom(pathOf(m, id)) : fg.setZoom(id) });
        }
        const real = !(fg === this.fg && id === 0);
        if (real) {
            items.push("-",
                { label: "Focus on this function", title: "keep only stacks through it (focus)",
                  action: () => this.opts.onFilter("focus", name) },
                { label: "Ignore stacks with it", title: "drop stacks through it (ignore)",
                  action: () => this.opts.onFilter("ignore", name) },
                { label: "Hide this frame", title: "remove it from stacks, keep the samples (hide)",
                  action: () => this.opts.onFilter("hide", name) },
                "-");
            if (this.opts.sandwich !== false) {
                items.push({ label: "Sandwich view", title: "its callers above, its callees below",
                             action: () => this.opts.onSandwich(name) });
            }
            items.push({ label: this.opts.selectLabel || "Select in top table",
                         action: () => this.opts.onSelect(name) });
            if (this.opts.onSource) {
                items.push({ label: "Show source", title: "its lines with their values",
                             action: () => this.opts.onSource(name) });
            }
            if (this.opts.onOverTime) {
                items.push({ label: "Show over time", title: "its value over the range, under the timeline",
                             action: () => this.opts.onOverTime(name) });
            }
        }
        showMenu(items, e.clientX, e.clientY);
    }

    close() {
        hideMenu();
        hideTooltip();
    }
}
