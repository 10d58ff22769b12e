// source-view.mjs - the source view (view=source, function=NAME): per-line flat and cum of
// one function beside its source text (GET /api/v1/source, go tool pprof -list's numbers),
// hot lines highlighted, scrolled to the hottest. Without the file (outside the server's
// source_roots, or not there) the lines with values are listed and the reason shown.
// hottest and heat are pure (tests/ui/source.test.mjs).

import { h, replace } from "./dom.mjs";
import { formatPercent, formatValue } from "./format.mjs";
import { createLoader, message } from "./loader.mjs";
import { changed } from "./state.mjs";

const KEYS = ["query", "type", "from", "until", "sel_from", "sel_until", "focus", "ignore",
    "hide", "function"];

// The hottest line of a routine: the most flat (where the time is spent), else the most
// cum (what it calls from there); null without values.
export function hottest(fn) {
    let best = null;
    for (const l of fn.lines || []) {
        if (!l.flat && !l.cum) continue;
        if (!best || Math.abs(l.flat) > Math.abs(best.flat) ||
            (Math.abs(l.flat) === Math.abs(best.flat) && Math.abs(l.cum) > Math.abs(best.cum)))
            best = l;
    }
    return best;
}

// How hot a line is, 0..1: its cum against the routine's hottest line's cum, so the lines
// a routine's time passes through stand out, the one it is spent on most.
export function heat(line, fn) {
    let max = 0;
    for (const l of fn.lines || []) max = Math.max(max, Math.abs(l.cum));
    return max ? Math.min(1, Math.abs(line.cum) / max) : 0;
}

function heatColor(f) {
    if (!(f > 0)) return "";
    const a = 0.08 + 0.5 * f;
    return `rgba(233, 120, 40, ${a.toFixed(3)})`;
}

export function createSourceView(root, ctx) {
    const { store, api } = ctx;
    const title = h("span", { class: "src-title" });
    const body = h("div", { class: "src-body" });
    const msg = h("div", { class: "panel-msg", hidden: true });
    const panel = h("section", { class: "panel source-panel", dataset: { testid: "source-view" } },
        h("div", { class: "panel-head" }, h("h2", null, "Source"), title,
            h("button", { type: "button", class: "small", onclick: () => store.set({ view: "explore" }) },
                "Flame graph")),
        body, msg);
    const view = h("div", { class: "view source" }, panel);
    root.append(view);

    function params(st) {
        const sel = st.sel_from && st.sel_until;
        return { query: st.query, type: st.type, from: sel ? st.sel_from : st.from,
                 until: sel ? st.sel_until : st.until, focus: st.focus, ignore: st.ignore,
                 hide: st.hide, function: st.function };
    }

    function routine(doc, fn) {
        const u = doc.unit, total = doc.total;
        const hot = hottest(fn);
        const rows = (fn.lines || []).map((l) => h("tr", {
            class: "src-line" + (l === hot ? " hottest" : "") + (l.flat || l.cum ? " sampled" : ""),
            dataset: { line: String(l.line) },
            style: { background: heatColor(heat(l, fn)) },
        },
        h("td", { class: "num" }, l.flat ? formatValue(l.flat, u) : "."),
        h("td", { class: "num" }, l.cum ? formatValue(l.cum, u) : "."),
        h("td", { class: "ln" }, String(l.line)),
        h("td", { class: "code" }, fn.source ? l.text : "")));
        return h("div", { class: "routine", dataset: { name: fn.name } },
            h("div", { class: "routine-head" }, h("b", null, fn.name),
                h("span", { class: "file" }, fn.file || "(no file name in the profile)"),
                h("span", null, "flat ", h("b", null, formatValue(fn.flat, u)),
                  ` (${formatPercent(fn.flat, total)})`, " · cum ", h("b", null, formatValue(fn.cum, u)),
                  ` (${formatPercent(fn.cum, total)})`)),
            fn.source ? null : h("div", { class: "src-missing", dataset: { testid: "source-missing" } },
                "No source text: ", fn.error || "the file was not found",
                ". The server reads files only under server.source_roots in its configuration; " +
                "these are the lines with samples."),
            h("table", { class: "src-table" },
                h("thead", null, h("tr", null, h("th", { class: "num" }, "flat"), h("th", { class: "num" }, "cum"),
                    h("th", { class: "ln" }, "line"), h("th", { class: "code" }, fn.source ? "source" : ""))),
                h("tbody", null, rows)));
    }

    const loader = createLoader({ name: "source", busy: panel, messages: [msg],
                                  queryErrors: ctx.onQueryError });

    function load(st) {
        loader.run((signal) => api.json("api/v1/source", params(st), { signal }), (doc) => {
            replace(body, (doc.functions || []).map((fn) => routine(doc, fn)),
                doc.truncated ? h("p", { class: "hint" }, "More functions match; the first 20 are shown.") : null);
            message(msg, null);
            // the hottest line of the first routine in the middle of the view
            const hot = body.querySelector("tr.hottest");
            if (hot) hot.scrollIntoView({ block: "center" });
        }, {
            fail: (err) => {
                replace(body);
                if (err.status !== 404) return false;
                message(msg, "empty", [h("b", null, err.message),
                    h("p", null, "The function has no samples for this query and time range.")]);
                return true;
            },
        });
    }

    function update(st, prev, how) {
        replace(title, st.function ? h("code", null, st.function) : "");
        if (!st.function) {
            replace(body);
            message(msg, "empty", [h("b", null, "No function chosen."), h("p", null,
                "Right-click a frame of the flame graph, or use a top table row's src button.")]);
            return;
        }
        if (!st.type) return;
        if (how === "refresh" || !prev || changed(prev, st, KEYS)) load(st);
    }

    return {
        update,
        element: view,
        destroy() {
            loader.abort();
            view.remove();
        },
    };
}
