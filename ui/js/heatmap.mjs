// heatmap.mjs - the heatmap canvas (FlameScope's grid): one column per second (or several
// seconds over long ranges), one row per slice of the second, colour by sample count;
// hover for a cell's time and count; drag from one cell to another to select that time
// span, shift-drag for a second span to compare with. The canvas is the
// data-testid="heatmap" element: cells fill its box; data-cols, data-rows, data-row0.
// Below it the time axis (round times) and the colour scale (data-testid="heatmap-scale").

import { h, hideTooltip, showTooltip } from "./dom.mjs";
import { formatDateTime } from "./format.mjs";
import {
    axisTicks, cellAt, cellColor, cellSpanMs, gridOf, rowStartMs, scaleGradient, selectionMs, spanCells,
} from "./heatmap-model.mjs";

const AXIS_W = 52; // px left of the grid for the offsets
const SEL_COLORS = ["rgba(30, 120, 220, 0.95)", "rgba(0, 150, 90, 0.95)"];

export class Heatmap {
    // host: element to fill. opts.onSelect(which (0 first, 1 second), [fromMs, untilMs]).
    constructor(host, opts = {}) {
        this.opts = opts;
        this.host = host;
        this.doc = null;
        this.grid = null;
        this.row0 = "bottom";
        this.spans = [null, null]; // the two selections, [fromMs, untilMs]
        this.drag = null;
        this.canvas = h("canvas", { class: "hm-canvas", dataset: { testid: "heatmap" },
                                    role: "img", "aria-label": "heatmap" });
        this.yAxis = h("div", { class: "hm-yaxis" });
        this.xAxis = h("div", { class: "hm-xaxis" });
        this.scaleMax = h("span", { class: "hm-scale-max" });
        this.scaleBar = h("i", { class: "hm-scale-bar" });
        this.scaleNote = h("span", { class: "hm-scale-note" });
        this.scale = h("div", { class: "hm-scale", dataset: { testid: "heatmap-scale" }, hidden: true },
            this.scaleNote, h("span", null, "1"), this.scaleBar, this.scaleMax);
        this.stage = h("div", { class: "hm-stage" }, this.yAxis, this.canvas);
        host.append(this.stage, this.xAxis, this.scale);
        this.ctx = this.canvas.getContext("2d", { alpha: false });
        this.canvas.addEventListener("mousedown", (e) => this.onDown(e));
        this.canvas.addEventListener("mousemove", (e) => this.onHover(e));
        this.canvas.addEventListener("mouseleave", () => hideTooltip());
        this.onDragMove = (e) => this.onMoveDrag(e);
        this.onUp = (e) => this.onRelease(e);
        this.resizeObserver = new ResizeObserver(() => this.layout() && this.draw());
        this.resizeObserver.observe(host);
        this.lastDrawMs = 0;
    }

    destroy() {
        this.resizeObserver.disconnect();
        window.removeEventListener("mousemove", this.onDragMove);
        window.removeEventListener("mouseup", this.onUp);
    }

    // doc: the /api/v1/heatmap answer (null clears); row0: "bottom" or "top".
    setData(doc, row0) {
        this.doc = doc && doc.cols ? doc : null;
        this.row0 = row0 === "top" ? "top" : "bottom";
        this.width = 0;
        this.layout();
        this.draw();
    }

    setSpans(spans) {
        this.spans = spans;
        this.draw();
    }

    // Sizes the canvas to the host's content box (its padding stays free: the grid keeps
    // inside its card): the grid's width, rows of a few px each. True when the grid changed.
    layout() {
        const cs = getComputedStyle(this.host);
        const inner = this.host.clientWidth - parseFloat(cs.paddingLeft || 0) - parseFloat(cs.paddingRight || 0);
        const W = Math.max(100, Math.floor(inner) - AXIS_W);
        if (W === this.width && this.grid) return false;
        this.width = W;
        this.grid = this.doc ? gridOf(this.doc, W) : null;
        const rows = this.grid ? this.grid.rows : 50;
        const rowH = Math.max(2, Math.min(9, Math.floor(420 / rows)));
        this.height = rows * rowH;
        const dpr = window.devicePixelRatio || 1;
        this.canvas.width = Math.round(W * dpr);
        this.canvas.height = Math.round(this.height * dpr);
        this.canvas.style.width = W + "px";
        this.canvas.style.height = this.height + "px";
        const g = this.grid;
        Object.assign(this.canvas.dataset, {
            cols: String(g ? g.cols : 0), rows: String(rows), row0: this.row0,
            secondsPerCol: String(g ? g.secs : 1), start: String(g ? g.base : 0),
        });
        this.renderAxes();
        this.renderScale();
        return true;
    }

    renderAxes() {
        const g = this.grid;
        this.yAxis.textContent = "";
        this.xAxis.textContent = "";
        this.yAxis.style.height = this.height + "px";
        if (!g) return;
        for (const ms of [0, 500, 1000]) {
            const f = ms / 1000, top = this.row0 === "top" ? f : 1 - f;
            this.yAxis.append(h("span", { style: { top: `calc(${top * 100}% - 7px)` } }, ms + " ms"));
        }
        // round times, as the timeline's; a label that would stick out of the axis is left
        // out (its tick stays)
        const tz = -new Date(g.base * 1000).getTimezoneOffset() * 60;
        const ticks = axisTicks(g, this.width, tz).map((k) => h("span", {
            class: "hm-tick", dataset: { t: String(k.t) }, style: { left: AXIS_W + k.x + "px" } },
        h("span", { class: "hm-tick-label" }, k.label)));
        this.xAxis.append(...ticks);
        const box = this.xAxis.getBoundingClientRect();
        for (const k of ticks) {
            const r = k.firstChild.getBoundingClientRect();
            if (r.left < box.left || r.right > box.right) k.firstChild.hidden = true;
        }
    }

    // The colour scale: from one sample to the most in a cell, as drawn.
    renderScale() {
        const g = this.grid;
        this.scale.hidden = !g || !(g.max > 0);
        if (this.scale.hidden) return;
        this.scale.dataset.max = String(g.max);
        this.scaleBar.style.background = scaleGradient(g.max);
        this.scaleMax.textContent = String(g.max);
        this.scaleNote.textContent = g.secs === 1 ? "samples per cell:"
            : `samples per cell (${g.secs} s a column):`;
    }

    draw() {
        const t0 = performance.now();
        const c = this.ctx, W = this.width, H = this.height, dpr = window.devicePixelRatio || 1;
        c.setTransform(dpr, 0, 0, dpr, 0, 0);
        c.fillStyle = "#ffffff";
        c.fillRect(0, 0, W, H);
        const g = this.grid;
        if (!g) return;
        const cw = W / g.cols, ch = H / g.rows;
        for (let col = 0; col < g.cols; col++) {
            const x0 = Math.floor(col * cw), x1 = Math.floor((col + 1) * cw);
            for (let r = 0; r < g.rows; r++) {
                const v = g.values[col * g.rows + r];
                if (!v) continue;
                const fromTop = this.row0 === "top" ? r : g.rows - 1 - r;
                c.fillStyle = cellColor(v, g.max);
                c.fillRect(x0, Math.floor(fromTop * ch), Math.max(1, x1 - x0),
                           Math.max(1, Math.floor((fromTop + 1) * ch) - Math.floor(fromTop * ch)));
            }
        }
        const spans = this.spans.slice();
        if (this.drag) spans[this.drag.which] = selectionMs(g, this.drag.a, this.drag.b);
        spans.forEach((sp, i) => {
            if (!sp) return;
            c.strokeStyle = SEL_COLORS[i];
            c.fillStyle = SEL_COLORS[i].replace("0.95", "0.18");
            c.lineWidth = 1.5;
            for (const { c: col, r0, r1 } of spanCells(g, sp[0], sp[1])) {
                const top = this.row0 === "top" ? r0 : g.rows - 1 - r1;
                const bottom = this.row0 === "top" ? r1 : g.rows - 1 - r0;
                const x = col * cw, y = top * ch, w = cw, hh = (bottom - top + 1) * ch;
                c.fillRect(x, y, w, hh);
                c.strokeRect(x + 0.75, y + 0.75, Math.max(1, w - 1.5), Math.max(1, hh - 1.5));
            }
        });
        this.lastDrawMs = performance.now() - t0;
    }

    cellOf(e) {
        const r = this.canvas.getBoundingClientRect();
        return cellAt(this.grid, r.width, r.height, e.clientX - r.left, e.clientY - r.top, this.row0);
    }

    onHover(e) {
        if (!this.grid || this.drag) return;
        const cell = this.cellOf(e), g = this.grid;
        const v = g.values[cell.c * g.rows + cell.r];
        const [a, b] = cellSpanMs(g, cell.c, cell.r);
        const off0 = rowStartMs(cell.r, g.rows), off1 = rowStartMs(cell.r + 1, g.rows);
        const when = g.secs === 1
            ? [formatDateTime(Math.floor(a / 1000)), ` +${off0}–${off1} ms`]
            : [formatDateTime(Math.floor(a / 1000)), " – ", formatDateTime(Math.floor(b / 1000)).slice(11),
                `, ${off0}–${off1} ms into each of its ${g.secs} seconds`];
        showTooltip(h("div", { class: "hm-tip" },
            h("div", { class: "tip-title" }, when),
            h("div", null, h("b", null, String(v)), v === 1 ? " sample" : " samples"),
            h("div", { class: "tip-hint" }, "drag to select a span; shift-drag for a second one")),
        e.clientX, e.clientY);
    }

    onDown(e) {
        if (e.button !== 0 || !this.grid) return;
        e.preventDefault();
        hideTooltip();
        const cell = this.cellOf(e);
        this.drag = { which: e.shiftKey ? 1 : 0, a: cell, b: cell };
        window.addEventListener("mousemove", this.onDragMove);
        window.addEventListener("mouseup", this.onUp);
        this.draw();
    }

    onMoveDrag(e) {
        if (!this.drag) return;
        this.drag.b = this.cellOf(e);
        this.draw();
    }

    onRelease(e) {
        window.removeEventListener("mousemove", this.onDragMove);
        window.removeEventListener("mouseup", this.onUp);
        if (!this.drag) return;
        this.drag.b = this.cellOf(e);
        const { which, a, b } = this.drag;
        const span = selectionMs(this.grid, a, b);
        this.drag = null;
        this.spans[which] = span;
        this.draw();
        if (this.opts.onSelect) this.opts.onSelect(which, span);
    }
}
