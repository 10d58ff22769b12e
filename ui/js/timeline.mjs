// timeline.mjs - the timeline canvas: one line per series (or label value) over the range,
// a tooltip with the values under the pointer, a brush that selects a range (and, with
// shift, a second range to compare it with), and markers where a label changed value (a
// new version). The functions over time panel draws its lines with it too.

import { SERIES_COLORS } from "./colors.mjs";
import { formatDateTime, formatMetric, formatTick, formatValue, metricView } from "./format.mjs";
import { h, hideTooltip, showTooltip } from "./dom.mjs";
import {
    brushRange, bucketAt, hasValue, limitSeries, linearScale, lineRuns, markerAt, markerGroups,
    markerText, maxValue, nearestPoint, placeMarkers, seriesNames, timeTicks, valueTicks,
} from "./timeline-model.mjs";

const PAD = { left: 64, right: 12, top: 20, bottom: 22 };
const FONT = "11px system-ui, sans-serif";
export const MARKER_COLOR = "#6b4aa8";

export class Timeline {
    // host: the element to fill; opts.onSelect([from, until] unix s, or null to clear),
    // opts.onPoint(line, k, event) (a click on the point of a line at bucket k: the
    // series' profiles there), opts.onSecond([from, until] or null) (a shift-drag: the
    // range to compare the selection with), opts.height (css px), opts.label (the canvas's
    // aria-label), opts.colorOf(line) (a line's colour, else by its weight's rank).
    constructor(host, opts = {}) {
        this.opts = { height: 150, ...opts };
        this.host = host;
        this.data = null;
        this.selection = null; // [from, until] unix s
        this.second = null; // the shift-dragged range, [from, until] unix s
        this.drag = null;
        this.hoverT = null;
        this.markers = []; // /api/v1/markers' markers
        this.places = []; // where they are drawn (placeMarkers)
        this.canvas = h("canvas", { class: "tl-canvas", role: "img", "aria-label": this.opts.label || "timeline" });
        this.legend = h("div", { class: "tl-legend" });
        host.append(this.canvas, this.legend);
        this.ctx = this.canvas.getContext("2d");
        this.canvas.addEventListener("mousedown", (e) => this.onDown(e));
        this.canvas.addEventListener("mousemove", (e) => this.onMove(e));
        this.canvas.addEventListener("mouseleave", () => {
            this.hoverT = null;
            hideTooltip();
            if (!this.drag) this.draw();
        });
        this.onUp = (e) => this.finishDrag(e);
        this.onDragMove = (e) => this.onMove(e);
        this.resizeObserver = new ResizeObserver(() => this.draw());
        this.resizeObserver.observe(host);
    }

    // data: the /api/v1/timeline answer, whose unit says what its values are (a rate such
    // as nanoseconds/s, or a gauge's average in bytes); unit: the type's, for older answers.
    setData(data, unit) {
        this.unit = (data && data.unit) || unit;
        this.aggregation = (data && data.aggregation) || "";
        if (!data || !data.timestamps || !data.timestamps.length) {
            this.data = null;
        } else {
            const step = data.step || (data.timestamps.length > 1
                ? data.timestamps[1] - data.timestamps[0] : 10);
            const lines = limitSeries(data.series || [], SERIES_COLORS.length);
            const names = seriesNames(lines);
            lines.forEach((l, i) => {
                l.name = names[i];
                l.color = (this.opts.colorOf && this.opts.colorOf(l)) || SERIES_COLORS[i % SERIES_COLORS.length];
            });
            const t0 = data.timestamps[0];
            this.data = { ts: data.timestamps, step, lines, t0,
                          t1: t0 + data.timestamps.length * step };
        }
        this.renderLegend();
        this.draw();
    }

    setSelection(sel) {
        this.selection = sel;
        this.draw();
    }

    setSecond(sel) {
        this.second = sel;
        this.draw();
    }

    // markers: /api/v1/markers' markers ({labels, label, value, at}), drawn as vertical
    // lines with the new value on top; [] or null: none.
    setMarkers(markers) {
        this.markers = markers || [];
        this.draw();
    }

    renderLegend() {
        this.legend.textContent = "";
        if (!this.data) return;
        for (const l of this.data.lines) {
            this.legend.append(h("span", { class: "tl-key", title: l.name },
                h("i", { style: { background: l.color } }), l.name));
        }
    }

    geometry() {
        const W = Math.max(100, this.host.clientWidth);
        const H = this.opts.height;
        const d = this.data;
        const x = linearScale(d ? d.t0 : 0, d ? d.t1 : 1, PAD.left, W - PAD.right);
        return { W, H, x };
    }

    draw() {
        const { W, H, x } = this.geometry();
        const dpr = window.devicePixelRatio || 1;
        if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(H * dpr)) {
            this.canvas.width = Math.round(W * dpr);
            this.canvas.height = Math.round(H * dpr);
            this.canvas.style.width = W + "px";
            this.canvas.style.height = H + "px";
        }
        const c = this.ctx;
        c.setTransform(dpr, 0, 0, dpr, 0, 0);
        c.clearRect(0, 0, W, H);
        c.font = FONT;
        const d = this.data;
        this.places = d ? placeMarkers(this.markers, x, d.t0, d.t1) : [];
        this.canvas.dataset.markers = String(this.places.length);
        if (!d) return;
        const top = PAD.top, bottom = H - PAD.bottom;
        // the values in the metric's display unit (cores, bytes/s, ...): the axis says which
        const mv = metricView(this.unit);
        const vt = valueTicks(maxValue(d.lines) * mv.k, mv.base, 4);
        const ys = linearScale(0, vt.top, bottom, top);
        const y = { to: (v) => ys.to(v * mv.k), from: (p) => ys.from(p) / mv.k };
        c.fillStyle = "#666";
        c.textAlign = "left";
        c.textBaseline = "top";
        c.fillText(mv.title + (this.aggregation === "per_profile" ? " (durations unknown)" : ""), 4, 2);
        // grid and value axis
        c.strokeStyle = "#e6e6e6";
        c.fillStyle = "#666";
        c.lineWidth = 1;
        c.textAlign = "right";
        c.textBaseline = "middle";
        for (const v of vt.ticks) {
            const py = Math.round(ys.to(v)) + 0.5;
            c.beginPath();
            c.moveTo(PAD.left, py);
            c.lineTo(W - PAD.right, py);
            c.stroke();
            const label = mv.suffix === " cores" ? +v.toPrecision(3) + ""
                : formatValue(v, mv.base, vt.scale) + (mv.suffix === "%" ? "%" : "");
            c.fillText(label, PAD.left - 6, py);
        }
        // time axis
        const tz = -new Date(d.t0 * 1000).getTimezoneOffset() * 60;
        const tt = timeTicks(d.t0, d.t1, W - PAD.left - PAD.right, tz);
        c.textAlign = "center";
        c.textBaseline = "top";
        for (const t of tt.ticks) {
            const px = Math.round(x.to(t)) + 0.5;
            c.beginPath();
            c.moveTo(px, bottom);
            c.lineTo(px, bottom + 4);
            c.stroke();
            const label = formatTick(t, tt.interval);
            const half = c.measureText(label).width / 2;
            if (px - half >= 0 && px + half <= W) c.fillText(label, px, bottom + 6);
        }
        // the selections below the lines: the first blue, the second (shift) green
        const sels = [this.selection, this.second];
        if (this.drag) sels[this.drag.which] = this.dragRange();
        sels.forEach((sel, i) => {
            if (!sel) return;
            const a = Math.max(PAD.left, x.to(sel[0])), b = Math.min(W - PAD.right, x.to(sel[1]));
            const rgb = i ? "0, 150, 90" : "30, 120, 220";
            c.fillStyle = `rgba(${rgb}, 0.14)`;
            c.fillRect(a, top, Math.max(1, b - a), bottom - top);
            c.strokeStyle = `rgba(${rgb}, 0.7)`;
            c.beginPath();
            c.moveTo(Math.round(a) + 0.5, top);
            c.lineTo(Math.round(a) + 0.5, bottom);
            c.moveTo(Math.round(b) - 0.5, top);
            c.lineTo(Math.round(b) - 0.5, bottom);
            c.stroke();
        });
        this.drawMarkerLines(c, top, bottom);
        // lines: a point per bucket with profiles, at its middle, joined over usual gaps
        // and broken at longer ones (lineRuns); lone points, and every point when there
        // are few, get a dot
        c.lineWidth = 1.6;
        c.lineJoin = "round";
        this.yScale = y;
        for (const l of d.lines) {
            c.strokeStyle = l.color;
            c.fillStyle = l.color;
            const runs = lineRuns(l.values);
            for (const run of runs) {
                if (run.length > 1) {
                    c.beginPath();
                    run.forEach((k, i) => {
                        const px = x.to(d.ts[k] + d.step / 2), py = y.to(l.values[k]);
                        if (i === 0) c.moveTo(px, py);
                        else c.lineTo(px, py);
                    });
                    c.stroke();
                }
                if (run.length > 1 && d.ts.length >= 60 && runs.usual <= 1) continue;
                for (const k of run) {
                    c.beginPath();
                    c.arc(x.to(d.ts[k] + d.step / 2), y.to(l.values[k]), run.length > 1 ? 2.2 : 2.8,
                          0, 2 * Math.PI);
                    c.fill();
                }
            }
        }
        this.drawMarkerFlags(c, top, W);
        // the bucket under the pointer
        if (this.hoverT !== null && !this.drag) {
            const k = bucketAt(d.ts, d.step, this.hoverT);
            const px = Math.round(x.to(d.ts[k] + d.step / 2)) + 0.5;
            c.strokeStyle = "rgba(0,0,0,0.35)";
            c.lineWidth = 1;
            c.beginPath();
            c.moveTo(px, top);
            c.lineTo(px, bottom);
            c.stroke();
        }
        c.strokeStyle = "#bbb";
        c.beginPath();
        c.moveTo(PAD.left, bottom + 0.5);
        c.lineTo(W - PAD.right, bottom + 0.5);
        c.stroke();
    }

    // A dashed line per marker place, under the series' lines.
    drawMarkerLines(c, top, bottom) {
        c.save();
        c.strokeStyle = MARKER_COLOR;
        c.lineWidth = 1;
        c.setLineDash([4, 3]);
        for (const p of this.places) {
            const px = Math.round(p.x) + 0.5;
            c.beginPath();
            c.moveTo(px, top - 4);
            c.lineTo(px, bottom);
            c.stroke();
        }
        c.restore();
    }

    // The new value (or how many changed there) in a flag above the plot at each marker,
    // right of its line where there is room; a flag that would cover the previous one is
    // left out (the tooltip still lists its marker).
    drawMarkerFlags(c, top, W) {
        c.save();
        c.textBaseline = "middle";
        c.textAlign = "left";
        let free = 0; // flags do not overlap: one is left out when the previous covers its place
        for (const p of this.places) {
            const text = p.items.length > 1 ? `${p.items.length} changes` : p.items[0].value;
            const tw = Math.min(120, c.measureText(text).width) + 8;
            const left = p.x + tw + 2 > W - PAD.right ? p.x - tw : p.x;
            if (left < free) continue;
            c.fillStyle = MARKER_COLOR;
            c.fillRect(left, top - 17, tw, 14);
            c.fillStyle = "#fff";
            c.fillText(text, left + 4, top - 10, tw - 8);
            free = left + tw + 2;
        }
        c.restore();
    }

    // The tooltip's lines for the markers at px: [] when none is there.
    markerRows(px) {
        const p = markerAt(this.places, px);
        if (!p) return [];
        const withGroup = markerGroups(this.markers) > 1;
        const withDate = this.data && this.data.t1 - this.data.t0 > 86400;
        return p.items.map((m) => h("div", { class: "tip-marker" },
            h("i", { style: { background: MARKER_COLOR } }), markerText(m, { withGroup, withDate })));
    }

    // The css-pixel position of marker place i's line, halfway down (for tests).
    markerPosition(i) {
        const p = this.places[i];
        if (!p) return null;
        const r = this.canvas.getBoundingClientRect();
        return { x: r.left + p.x, y: r.top + r.height / 2, at: p.at };
    }

    eventX(e) {
        return e.clientX - this.canvas.getBoundingClientRect().left;
    }

    onDown(e) {
        if (e.button !== 0 || !this.data) return;
        e.preventDefault();
        this.drag = { a: this.eventX(e), b: this.eventX(e), which: e.shiftKey && this.opts.onSecond ? 1 : 0 };
        hideTooltip();
        window.addEventListener("mousemove", this.onDragMove);
        window.addEventListener("mouseup", this.onUp);
    }

    dragRange() {
        const { x } = this.geometry();
        const a = Math.min(this.drag.a, this.drag.b), b = Math.max(this.drag.a, this.drag.b);
        return [x.from(a), x.from(b)];
    }

    finishDrag(e) {
        window.removeEventListener("mousemove", this.onDragMove);
        window.removeEventListener("mouseup", this.onUp);
        if (!this.drag) return;
        this.drag.b = this.eventX(e);
        const { x } = this.geometry();
        const r = brushRange(this.drag.a, this.drag.b, x, this.data.t0, this.data.t1);
        const which = this.drag.which;
        this.drag = null;
        if (which === 1) {
            if (r || this.second) {
                this.second = r;
                this.opts.onSecond(r);
            }
            this.draw();
            return;
        }
        const pt = !r && this.opts.onPoint ? this.pointAt(e) : null;
        if (pt) {
            this.opts.onPoint(pt.line, pt.k, e);
        } else if (r || this.selection) {
            this.selection = r;
            if (this.opts.onSelect) this.opts.onSelect(r);
        }
        this.draw();
    }

    // The point under a mouse event: {line, k} or null.
    pointAt(e) {
        const d = this.data;
        if (!d || !this.yScale) return null;
        const { x } = this.geometry();
        const r = this.canvas.getBoundingClientRect();
        const y = this.yScale;
        return nearestPoint(d.lines.filter((l) => !l.other), d.ts.length,
            (l, k) => [x.to(d.ts[k] + d.step / 2), y.to(l.values[k])],
            e.clientX - r.left, e.clientY - r.top);
    }

    // The css-pixel position of a line's point at bucket k (for tests and menus).
    pointPosition(li, k) {
        const d = this.data;
        if (!d || !this.yScale) return null;
        const { x } = this.geometry();
        const r = this.canvas.getBoundingClientRect();
        return { x: r.left + x.to(d.ts[k] + d.step / 2), y: r.top + this.yScale.to(d.lines[li].values[k]) };
    }

    onMove(e) {
        if (!this.data) return;
        const px = this.eventX(e);
        if (this.drag) {
            this.drag.b = Math.max(PAD.left, Math.min(this.geometry().W - PAD.right, px));
            this.draw();
            return;
        }
        const { x } = this.geometry();
        const t = x.from(px);
        if (t < this.data.t0 || t > this.data.t1) {
            this.hoverT = null;
            hideTooltip();
            this.draw();
            return;
        }
        this.hoverT = t;
        this.draw();
        const d = this.data, k = bucketAt(d.ts, d.step, t);
        const rows = d.lines.map((l) => ({ l, v: hasValue(l.values, k) ? l.values[k] : null }))
            .sort((a, b) => (b.v ?? -Infinity) - (a.v ?? -Infinity));
        showTooltip(h("div", { class: "tl-tip" },
            this.markerRows(px),
            h("div", { class: "tip-title" }, formatDateTime(d.ts[k]), " – ",
                formatDateTime(d.ts[k] + d.step).slice(11)),
            rows.slice(0, 12).map(({ l, v }) => h("div", { class: "tip-row" },
                h("i", { style: { background: l.color } }),
                h("span", { class: "tip-name" }, l.name),
                v === null ? h("span", { class: "tip-none" }, "no profile") : h("b", null, formatMetric(v, this.unit)))),
            rows.length > 12 ? h("div", { class: "tip-more" }, `and ${rows.length - 12} more`) : null,
        ), e.clientX, e.clientY);
    }
}
