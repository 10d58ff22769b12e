// upload.mjs - uploading a file to view it ad hoc: pick it or drop it anywhere on the page;
// it is pushed to /ingest as service "upload" with the file name as a label, then shown.

import { detectFormat, labelSafeName } from "./upload-format.mjs";
import { quoteValue } from "./selector.mjs";

// Types tried first when choosing what to show of an upload, per profile.
const PREFERRED = ["cpu", "cpu-clock", "samples", "inuse_space", "alloc_space", "delay",
    "contentions", "goroutine", "wall"];

// Orders the types of profile so that the most telling sample type comes first.
export function typeCandidates(types, profile) {
    const of = types.filter((t) => t.profile === profile);
    const rank = (t) => {
        const i = PREFERRED.indexOf(t.sample_type);
        return i < 0 ? PREFERRED.length : i;
    };
    return of.sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1));
}

// Wires the page: label (the data-testid="upload" element holding a file input), drop
// overlay element, and ctx: api, store, loadTypes() (refreshes and returns the types),
// status(message, kind) for progress and errors.
export function setupUpload(label, overlay, ctx) {
    const input = label.querySelector("input[type=file]");
    input.addEventListener("change", () => {
        if (input.files && input.files[0]) upload(input.files[0], ctx);
        input.value = "";
    });
    let depth = 0;
    const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
    window.addEventListener("dragenter", (e) => {
        if (!hasFiles(e)) return;
        depth++;
        overlay.hidden = false;
    });
    window.addEventListener("dragleave", (e) => {
        if (!hasFiles(e)) return;
        depth = Math.max(0, depth - 1);
        if (!depth) overlay.hidden = true;
    });
    window.addEventListener("dragover", (e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
    });
    window.addEventListener("drop", (e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        depth = 0;
        overlay.hidden = true;
        const f = e.dataTransfer.files && e.dataTransfer.files[0];
        if (f) upload(f, ctx);
    });
}

// Pushes a file and switches the view to it. Resolves to the state shown, or null.
export async function upload(file, ctx) {
    const name = labelSafeName(file.name);
    ctx.status(`Uploading ${name}…`, "loading");
    try {
        const bytes = new Uint8Array(await file.arrayBuffer());
        const format = await detectFormat(file.name, bytes);
        const now = Math.floor(Date.now() / 1000);
        const res = await ctx.api.post("ingest", {
            name: `upload{file="${name}"}`, format, from: String(now),
        }, bytes, { headers: { "Content-Type": "application/octet-stream" } });
        const query = `{service_name="upload", file=${quoteValue(name)}}`;
        const types = await ctx.loadTypes();
        const from = String(now - 300), until = String(now + 60);
        let type = "";
        for (const t of typeCandidates(types, res.profile)) {
            const series = await ctx.api.json("api/v1/series", { query, type: t.id, from, until });
            if (series.length) {
                type = t.id;
                break;
            }
        }
        if (!type) type = (typeCandidates(types, res.profile)[0] || {}).id || "";
        const patch = {
            view: "explore", query, type, from, until, sel_from: "", sel_until: "", zoom: "",
            search: "", sandwich: "", focus: "", ignore: "", hide: "", group_by: "",
        };
        ctx.store.set(patch);
        ctx.status(`Uploaded ${name}: ${res.samples} samples (${format}), shown as ${type}.`, "ok");
        return patch;
    } catch (err) {
        ctx.status(`Upload of ${name} failed: ${err.message}`, "error");
        return null;
    }
}
