// loader.mjs - the life of a view's requests, written once: a new request aborts the one
// before it, and an answer that is not the latest request's is dropped (an older, slower
// answer never lands over a newer one); the panel's loading marks while it runs; the
// answer drawn, or the error said in the panel's messages; and what the page records of
// it: data-state on the panel ("loading", "ready", "empty", "error"; aria-busy while its
// loading marks show), data-loaded (when the last request settled, ms since the epoch),
// and two Performance API measures of the last request, "scorch:NAME:fetch" (request to
// answer) and "scorch:NAME:draw" (the answer drawn), kept one of each name.

import { h, replace } from "./dom.mjs";

// The message of a failed request: what happened and what to do.
export function errorText(err) {
    if (err.status === 401)
        return [h("b", null, "This server needs an API token."), h("p", null,
            "Enter it with the Token button at the top right.")];
    if (err.status === 0)
        return [h("b", null, "Cannot reach the scorch server."), h("p", null,
            "Check that it runs, then press Refresh.")];
    const hint = err.status === 400
        ? "Fix the query above (label selector, time range or filters) and run it again."
        : "The server failed on this query; its log may say more.";
    return [h("b", null, err.message), h("p", null, hint)];
}

// A panel's message box: kind "loading", "empty" or "error" with content; no kind hides it.
export function message(box, kind, content) {
    if (!kind) {
        box.hidden = true;
        box.className = "panel-msg";
        return;
    }
    box.className = "panel-msg " + kind;
    replace(box, content);
    box.hidden = false;
}

const STATES = ["ready", "empty", "error"];

// Records a measure named name from start to end (performance.now() times), replacing the
// one before: one per name, whatever the auto-refresh does in a day.
function measure(name, start, end, detail) {
    if (typeof performance === "undefined" || !performance.measure) return;
    try {
        performance.clearMeasures(name);
        performance.measure(name, { start, end, detail });
    } catch { /* an old browser without measure options: nothing recorded */ }
}

// A loader. opts: name (of the measures), busy (the element marked "loading" while a
// request runs, or null), messages (boxes that say loadingText meanwhile and the error
// after), loadingText (default "Loading…"), stamp (the element that gets data-state and
// data-loaded; default busy, null for none), queryErrors(text) (told a 400's message, and
// "" after an answer; default none).
export function createLoader(opts = {}) {
    const busy = opts.busy || null, stamp = opts.stamp === undefined ? busy : opts.stamp;
    const boxes = opts.messages || [], text = opts.loadingText || "Loading…";
    const name = "scorch:" + (opts.name || "view");
    let ctl = null;
    let prior = "idle"; // the stamp's state before the request under way, for an abort

    function marks(on, quiet) {
        if (busy && !quiet) busy.classList.toggle("loading", on);
        if (stamp && on && !quiet) stamp.setAttribute("aria-busy", "true");
        if (stamp && !on) stamp.removeAttribute("aria-busy");
    }

    function settle(state, loaded) {
        marks(false);
        if (!stamp) return;
        stamp.dataset.state = state;
        if (loaded) stamp.dataset.loaded = String(Date.now());
    }

    // Asks request(signal) -> a promise of the answer, and draws it: draw(answer) may
    // return {state, detail} (state "empty" or "error" when it says so itself; detail goes
    // with the draw's measure). A failure (of the fetch or the draw) goes to fail(err)
    // first, which returns true when it said what happened itself; else every message box
    // shows errorText(err). quiet: no loading marks (the auto-refresh: what is shown stays
    // until the new answer is there). Resolves to true when the answer (or failure) was
    // the latest request's and was shown, false when it was dropped.
    async function run(request, draw, { quiet = false, fail = null } = {}) {
        if (ctl) ctl.abort();
        const ac = (ctl = new AbortController());
        const latest = () => ctl === ac && !ac.signal.aborted;
        marks(true, quiet);
        if (!quiet) for (const b of boxes) message(b, "loading", text);
        if (stamp) {
            if (stamp.dataset.state && stamp.dataset.state !== "loading") prior = stamp.dataset.state;
            stamp.dataset.state = "loading";
        }
        const t0 = performance.now();
        let state = "error";
        try {
            const answer = await request(ac.signal);
            if (!latest()) return false;
            const t1 = performance.now();
            measure(name + ":fetch", t0, t1);
            const r = draw(answer) || {};
            measure(name + ":draw", t1, performance.now(), r.detail);
            state = STATES.includes(r.state) ? r.state : "ready";
            if (opts.queryErrors) opts.queryErrors("");
            return true;
        } catch (err) {
            if (!latest() || err.name === "AbortError") return false;
            if (!(fail && fail(err))) for (const b of boxes) message(b, "error", errorText(err));
            if (err.status === 400 && opts.queryErrors) opts.queryErrors(err.message);
            return true;
        } finally {
            if (ctl === ac) {
                ctl = null;
                if (!ac.signal.aborted) settle(state, true);
            }
        }
    }

    return {
        run,
        // Drops the request under way: its answer will not be shown; the loading marks go
        // and the state is what it was before.
        abort() {
            if (!ctl) return;
            ctl.abort();
            ctl = null;
            settle(prior, false);
        },
        // whether a request is under way
        busy: () => ctl !== null,
    };
}
