// flamegraph.mjs - the flame graph canvas: draws a flame model (flame-model.mjs), icicle or
// flame orientation, zoomed to a node, with search matches coloured and the rest dimmed.
//
// Speed: only the rows in the scrolled viewport and the nodes inside the zoomed range are
// visited (binary search per level); runs of nodes narrower than MIN_W pixels merge into one
// rectangle; labels are drawn after all rectangles in one colour pass; hovering draws on an
// overlay canvas and never redraws the graph; hit-testing is a binary search on x in the
// pointer's row.

import { colorFor, DIM_COLOR, DIM_TEXT } from "./colors.mjs";
import { firstVisible, nodeAt, zoomView } from "./flame-model.mjs";
import { h } from "./dom.mjs";
import { formatValue } from "./format.mjs";

const MIN_W = 2; // px: narrower nodes merge with their neighbours
const FONT = '12px ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace';
const TEXT = "#1b1b1b";

// The text of frame id: its function's name; with rootTotal, the root's says the total it
// stands for, "total (12.3 s)" (a diff's root keeps its name: its width is two sides').
export function frameText(m, id, rootTotal = false) {
    const name = m.names[m.name[id]];
    if (!rootTotal || id !== 0 || m.diff) return name;
    return `${name} (${formatValue(m.rootTotal, m.unit)})`;
}

export class FlameGraph {
    // host: an element to fill; opts: rowHeight, orient ("icicle" | "flame"), maxHeight()
    // (px), onHover(id, event) (id -1 when leaving), onClick(id, event),
    // onContext(id, event), label (aria label), nodeColor(model, id) (a colour per node,
    // e.g. a diff's red and blue; default: by the frame's package), dimColor (frames a
    // search does not match), rootTotal (the root's text says the total).
    constructor(host, opts = {}) {
        this.opts = { rowHeight: 18, orient: "icicle", maxHeight: () => 600, ...opts };
        this.host = host;
        this.model = null;
        this.view = { x0: 0, w: 1, depth: 0, id: -1 };
        this.matched = null;
        this.hover = -1;
        this.colors = [];
        this.lastDrawMs = 0;
        this.draws = 0;
        this.pending = false;
        this.canvas = h("canvas", { class: "fg-canvas" });
        this.overlay = h("canvas", {
            class: "fg-overlay", role: "img", "aria-label": opts.label || "flame graph",
        });
        this.stage = h("div", { class: "fg-stage" }, this.canvas, this.overlay);
        this.spacer = h("div", { class: "fg-spacer" });
        this.scroller = h("div", { class: "fg-scroll" }, this.stage, this.spacer);
        host.append(this.scroller);
        this.ctx = this.canvas.getContext("2d", { alpha: false });
        this.octx = this.overlay.getContext("2d");
        this.scroller.addEventListener("scroll", () => this.requestDraw(), { passive: true });
        this.overlay.addEventListener("mousemove", (e) => this.onMove(e));
        this.overlay.addEventListener("mouseleave", (e) => {
            this.lastMove = null;
            this.setHover(-1, e);
        });
        this.overlay.addEventListener("click", (e) => {
            const id = this.pick(e);
            if (id >= 0 && this.opts.onClick) this.opts.onClick(id, e);
        });
        this.overlay.addEventListener("contextmenu", (e) => {
            const id = this.pick(e);
            if (id < 0 || !this.opts.onContext) return;
            e.preventDefault();
            this.opts.onContext(id, e);
        });
        this.resizeObserver = new ResizeObserver(() => {
            if (this.layout()) this.draw();
        });
        this.resizeObserver.observe(host);
        // the height follows the window's
        this.onResize = () => {
            if (this.layout()) this.draw();
        };
        window.addEventListener("resize", this.onResize);
        this.width = 0;
        this.height = 0;
    }

    destroy() {
        this.resizeObserver.disconnect();
        window.removeEventListener("resize", this.onResize);
        this.scroller.remove();
    }

    // A new model (null clears), keeping orientation; zoom and matches reset unless given.
    setModel(model, { zoom = -1, matched = null } = {}) {
        this.model = model;
        this.colors = model ? model.names.map(colorFor) : [];
        this.matched = matched;
        this.view = model ? zoomView(model, zoom) : { x0: 0, w: 1, depth: 0, id: -1 };
        this.hover = -1;
        this.layout(true);
        this.draw();
    }

    setZoom(id) {
        if (!this.model) return;
        this.view = zoomView(this.model, id);
        // what is under the pointer changed with the view
        if (this.lastMove) this.setHover(this.pick(this.lastMove), this.lastMove);
        this.requestDraw();
    }

    setMatched(matched) {
        this.matched = matched;
        this.requestDraw();
    }

    setOrient(orient) {
        if (orient === this.opts.orient) return;
        this.opts.orient = orient;
        this.layout(true);
        this.draw();
    }

    // Sizes the canvases: the width of the host, the graph's height up to maxHeight (then
    // the scroller scrolls). True when something changed. reset: scroll to the root.
    layout(reset = false) {
        const W = Math.max(1, this.host.clientWidth);
        const rowH = this.opts.rowHeight;
        const full = this.model ? this.model.nlevels * rowH : 0;
        const H = Math.max(rowH, Math.min(full, Math.floor(this.opts.maxHeight())));
        const dpr = window.devicePixelRatio || 1;
        const changed = W !== this.width || H !== this.height || dpr !== this.dpr ||
            full !== this.full;
        if (changed) {
            this.width = W;
            this.height = H;
            this.full = full;
            this.dpr = dpr;
            for (const c of [this.canvas, this.overlay]) {
                c.width = Math.round(W * dpr);
                c.height = Math.round(H * dpr);
                c.style.width = W + "px";
                c.style.height = H + "px";
            }
            this.stage.style.height = H + "px";
            this.spacer.style.height = Math.max(0, full - H) + "px";
            this.scroller.style.height = H + "px";
            this.charW = 0;
        }
        if (reset) this.scroller.scrollTop = this.opts.orient === "flame" ? full : 0;
        return changed;
    }

    requestDraw() {
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
            this.pending = false;
            this.draw();
        });
    }

    // The level shown in a row (0 = top row).
    levelOfRow(row) {
        return this.opts.orient === "icicle" ? row : this.model.nlevels - 1 - row;
    }

    rowOfLevel(d) {
        return this.opts.orient === "icicle" ? d : this.model.nlevels - 1 - d;
    }

    draw() {
        const t0 = performance.now();
        const ctx = this.ctx, W = this.width, H = this.height, dpr = this.dpr || 1;
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        ctx.fillStyle = "#ffffff";
        ctx.fillRect(0, 0, W, H);
        const m = this.model;
        if (!m || !m.n || !(this.view.w > 0)) {
            this.drawHover();
            return;
        }
        ctx.font = FONT;
        ctx.textBaseline = "middle";
        if (!this.charW) this.charW = ctx.measureText("MMMMMMMMMM").width / 10 || 7;
        const charW = this.charW, minText = charW * 3 + 6;
        const rowH = this.opts.rowHeight, scroll = this.scroller.scrollTop;
        const { x0, w, depth: zd } = this.view;
        const x1 = x0 + w, k = W / w;
        const xs = m.x, ts = m.total, names = m.name, colors = this.colors;
        const nodeColor = this.opts.nodeColor;
        const color = nodeColor ? (i) => nodeColor(m, i) : (i) => colors[names[i]];
        const matched = this.matched, dim = this.opts.dimColor || DIM_COLOR;
        const firstRow = Math.max(0, Math.floor(scroll / rowH));
        const lastRow = Math.min(m.nlevels - 1, Math.floor((scroll + H - 1) / rowH));
        const labels = []; // x, y, text, dim
        for (let row = firstRow; row <= lastRow; row++) {
            const d = this.levelOfRow(row);
            const y = row * rowH - scroll;
            ctx.globalAlpha = d < zd ? 0.6 : 1;
            const end = m.levelStart[d + 1];
            let runStart = -1, runEnd = 0, runColor = "", runMatch = false;
            const flush = () => {
                if (runStart >= 0 && runEnd - runStart >= 0.3) {
                    ctx.fillStyle = runColor;
                    ctx.fillRect(runStart, y, Math.max(1, runEnd - runStart), rowH - 1);
                }
                runStart = -1;
            };
            for (let i = firstVisible(m, d, x0); i < end; i++) {
                const nx = xs[i];
                if (nx >= x1) break;
                let px = (nx - x0) * k, pw = ts[i] * k;
                if (px < 0) { pw += px; px = 0; }
                if (px + pw > W) pw = W - px;
                if (pw <= 0) continue;
                const hit = !matched || matched[i] === 1;
                if (pw < MIN_W) {
                    if (runStart >= 0 && px <= runEnd + 0.5) {
                        if (px + pw > runEnd) runEnd = px + pw;
                        if (hit && !runMatch && matched) {
                            runColor = color(i);
                            runMatch = true;
                        }
                    } else {
                        flush();
                        runStart = px;
                        runEnd = px + pw;
                        runMatch = hit && !!matched;
                        runColor = hit ? color(i) : dim;
                    }
                    continue;
                }
                if (runStart >= 0) flush();
                ctx.fillStyle = hit ? color(i) : dim;
                ctx.fillRect(px, y, pw - 1, rowH - 1);
                if (pw >= minText) labels.push(px, y, i, hit);
            }
            flush();
        }
        ctx.globalAlpha = 1;
        // labels: one pass per colour
        const mnames = m.names, half = (rowH - 1) / 2;
        for (const dimPass of [false, true]) {
            ctx.fillStyle = dimPass ? DIM_TEXT : TEXT;
            for (let j = 0; j < labels.length; j += 4) {
                if (labels[j + 3] === dimPass) continue;
                const i = labels[j + 2];
                let px = labels[j], pw = ts[i] * k;
                const nx = (xs[i] - x0) * k;
                pw = Math.min(nx + pw, W) - px;
                const fit = Math.floor((pw - 6) / charW);
                const s = i === 0 ? frameText(m, i, this.opts.rootTotal) : mnames[names[i]];
                const text = s.length <= fit ? s : s.slice(0, Math.max(0, fit - 2)) + "..";
                ctx.fillText(text, px + 3, labels[j + 1] + half + 0.5);
            }
        }
        this.drawHover();
        this.lastDrawMs = performance.now() - t0;
        this.draws++;
    }

    // The on-screen rectangle of node id (css px in the canvas), or null when off-screen.
    rectOf(id) {
        const m = this.model;
        if (!m || id < 0) return null;
        const { x0, w } = this.view, k = this.width / w;
        let px = (m.x[id] - x0) * k, pw = m.total[id] * k;
        if (px < 0) { pw += px; px = 0; }
        if (px + pw > this.width) pw = this.width - px;
        if (pw <= 0) return null;
        const y = this.rowOfLevel(m.depth[id]) * this.opts.rowHeight - this.scroller.scrollTop;
        if (y + this.opts.rowHeight < 0 || y > this.height) return null;
        return { x: px, y, w: pw, h: this.opts.rowHeight - 1 };
    }

    drawHover() {
        const c = this.octx, dpr = this.dpr || 1;
        c.setTransform(dpr, 0, 0, dpr, 0, 0);
        c.clearRect(0, 0, this.width, this.height);
        const r = this.rectOf(this.hover);
        if (!r) return;
        c.lineWidth = 1.5;
        c.strokeStyle = "#111";
        c.strokeRect(r.x + 0.75, r.y + 0.75, Math.max(1, r.w - 2), r.h - 1.5);
    }

    // The node under a mouse event, or -1.
    pick(e) {
        const m = this.model;
        if (!m || !m.n) return -1;
        const r = this.overlay.getBoundingClientRect();
        const px = e.clientX - r.left, py = e.clientY - r.top;
        if (px < 0 || px >= this.width || py < 0 || py >= this.height) return -1;
        const row = Math.floor((py + this.scroller.scrollTop) / this.opts.rowHeight);
        if (row < 0 || row >= m.nlevels) return -1;
        const d = this.levelOfRow(row);
        const v = this.view.x0 + (px * this.view.w) / this.width;
        const id = nodeAt(m, d, v);
        // above the zoomed node only its ancestors are shown
        return id;
    }

    onMove(e) {
        this.lastMove = { clientX: e.clientX, clientY: e.clientY };
        this.setHover(this.pick(e), e);
    }

    setHover(id, e) {
        if (id !== this.hover) {
            this.hover = id;
            this.overlay.style.cursor = id >= 0 ? "pointer" : "default";
            this.drawHover();
        }
        if (this.opts.onHover) this.opts.onHover(id, e);
    }
}
