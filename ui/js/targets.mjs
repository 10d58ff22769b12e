// targets.mjs - the targets view: the health of every scrape target (GET /api/v1/targets),
// one row per (job, target, profile type), grouped by target, refreshed every few seconds.
// targetGroups, ago, took and targetQuery are pure (tests/ui/targets.test.mjs).

import { h, replace } from "./dom.mjs";
import { formatDuration } from "./format.mjs";
import { createLoader } from "./loader.mjs";

const REFRESH_MS = 5000;
const TYPE_OF = { // the profile type a scraped profile's rows open in explore
    cpu: "cpu:cpu", heap: "heap:inuse_space", allocs: "allocs:alloc_space",
    goroutine: "goroutine:goroutine", mutex: "mutex:delay", block: "block:delay",
    threadcreate: "threadcreate:threadcreate",
};

// The targets (the API's array) grouped by job and instance, in that order, each group
// {job, instance, labels, health, tasks}; a group's health is "down" when any of its
// tasks is, "unknown" when none has been scraped yet, else "up".
export function targetGroups(targets) {
    const groups = new Map();
    for (const t of targets || []) {
        const key = t.job + "\u0000" + t.instance;
        let g = groups.get(key);
        if (!g) {
            g = { job: t.job, instance: t.instance, labels: t.labels || {}, tasks: [] };
            groups.set(key, g);
        }
        g.tasks.push(t);
    }
    const out = [...groups.values()];
    for (const g of out) {
        const hs = g.tasks.map((t) => t.health);
        g.health = hs.includes("down") ? "down" : hs.every((x) => x === "unknown") ? "unknown"
            : "up";
    }
    out.sort((a, b) => a.job.localeCompare(b.job) || a.instance.localeCompare(b.instance));
    return out;
}

// "3 s ago", "in 12 s", "never" for an RFC 3339 time relative to nowMs.
export function ago(iso, nowMs) {
    if (!iso) return "never";
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return "?";
    const d = (nowMs - t) / 1000;
    if (Math.abs(d) < 0.5) return "now";
    return d > 0 ? formatDuration(d) + " ago" : "in " + formatDuration(-d);
}

// A scrape's duration: "8 ms", "5.2 s", "1m 3s".
export function took(sec) {
    if (!(sec >= 0)) return "";
    if (sec < 1) return Math.round(sec * 1000) + " ms";
    if (sec < 60) return sec.toFixed(1) + " s";
    return formatDuration(sec);
}

// The selector of a target's series: its service, job and instance.
export function targetQuery(g) {
    const esc = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"');
    const parts = [];
    if (g.labels.service_name) parts.push(`service_name="${esc(g.labels.service_name)}"`);
    parts.push(`job="${esc(g.job)}"`, `instance="${esc(g.instance)}"`);
    return "{" + parts.join(",") + "}";
}

// The view (main.mjs's contract): ctx.api fetches, ctx.store opens explore.
export function createTargets(root, ctx) {
    const { api, store } = ctx;
    const body = h("div", { class: "targets-body" });
    const stamp = h("span", { class: "sel-info" });
    const panel = h("section", { class: "panel targets-panel", dataset: { testid: "targets" } },
        h("div", { class: "panel-head" }, h("h2", null, "Scrape targets"), stamp), body);
    root.append(panel);
    let timer = 0, dead = false;

    const row = (g, t, now) => h("tr", { class: "health-" + t.health, dataset: { profile: t.profile } },
        h("td", null, h("a", {
            href: "?" + new URLSearchParams({ view: "explore", type: TYPE_OF[t.profile] || "",
                                              query: targetQuery(g), from: "now-1h", until: "now" }),
            onclick: (e) => {
                e.preventDefault();
                store.set({ view: "explore", type: TYPE_OF[t.profile] || store.get().type,
                            query: targetQuery(g), sel_from: "", sel_until: "", zoom: "",
                            sandwich: "" });
            },
            title: "open this target's " + t.profile + " profiles",
        }, t.profile)),
        h("td", null, h("span", { class: "health " + t.health }, t.health)),
        h("td", { title: t.last_scrape || "" }, ago(t.last_scrape, now)),
        h("td", { class: "num" }, t.last_scrape ? took(t.last_scrape_duration_seconds) : ""),
        h("td", { title: t.next_due || "" }, ago(t.next_due, now)),
        h("td", { class: "num" }, formatDuration(t.interval_seconds)),
        h("td", null, t.delta || ""),
        h("td", { class: "num" }, String(t.samples ?? "")),
        h("td", { class: "num", title: `${t.scrapes} scrapes, ${t.profiles} profiles stored, ` +
                  `${t.skipped} slots skipped` }, `${t.errors} / ${t.scrapes}`),
        h("td", { class: "err", title: t.last_error || "" }, t.last_error || ""));

    function draw(targets) {
        const now = Date.now();
        stamp.textContent = "updated " + new Date(now).toLocaleTimeString();
        const groups = targetGroups(targets);
        if (!groups.length) {
            replace(body, h("div", { class: "targets-msg" },
                "Nothing is scraped. Add scrape_configs to the server's --config (see " +
                "docs/scraping.md) and send it SIGHUP, or run scorch agent."));
            return;
        }
        replace(body, groups.map((g) => h("div", { class: "target", dataset: { instance: g.instance } },
            h("h3", null, h("span", { class: "health " + g.health }, g.health), " ", g.job, " · ",
              h("code", null, g.instance), " ",
              h("span", { class: "labels" }, Object.entries(g.labels)
                  .filter(([k]) => k !== "job" && k !== "instance")
                  .map(([k, v]) => `${k}=${v}`).join(", "))),
            h("table", { class: "top-table targets-table" },
                h("thead", null, h("tr", null, ["profile", "health", "last scrape", "took",
                    "next", "every", "delta", "samples", "errors", "last error"].map((c) =>
                    h("th", null, c)))),
                h("tbody", null, g.tasks.map((t) => row(g, t, now)))))));
    }

    // refreshed quietly: the table stays until the next answer
    const loader = createLoader({ name: "targets", stamp: panel });

    async function load() {
        clearTimeout(timer);
        const shown = await loader.run((signal) => api.json("api/v1/targets", {}, { signal }), draw, {
            quiet: true,
            fail: (e) => {
                replace(body, h("div", { class: "targets-msg error" }, "Cannot load targets: " + e.message));
                return true;
            },
        });
        if (shown && !dead) timer = setTimeout(load, REFRESH_MS);
    }

    return {
        update() {
            load();
        },
        destroy() {
            dead = true;
            clearTimeout(timer);
            loader.abort();
            panel.remove();
        },
    };
}
