// upload-format.mjs - which /ingest format a dropped file is (pprof, perf_script, folded,
// cpuprofile, speedscope, perf_data, jfr, legacy),
// from its name and its first bytes, and the label-safe name it is stored under.

const PPROF_NAME = /\.(pb|pprof|prof|pb\.gz|pprof\.gz|prof\.gz)$/i;
const SNIFF = 64 * 1024;

// True for gzip's magic bytes.
export function isGzip(b) {
    return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

// The format of uncompressed bytes: JSON is speedscope (its schema or shared frames and
// profiles) or else a V8 .cpuprofile / Chrome trace; text that has perf script's sample
// headers or indented frame lines is perf_script, other text folded; binary is pprof.
export function sniffFormat(b) {
    const n = Math.min(b.length, SNIFF);
    // perf.data: its magic (the server names its code by no file of its own)
    if (b.length >= 8 && String.fromCharCode(...b.subarray(0, 8)) === "PERFILE2") return "perf_data";
    // gperftools' binary CPU profile: header words 0, 3, 0 (64- or 32-bit, little-endian)
    const w64 = b.length >= 24 && b.subarray(0, 8).every((x) => x === 0) && b[8] === 3 &&
        b.subarray(9, 24).every((x) => x === 0);
    const w32 = b.length >= 12 && b.subarray(0, 4).every((x) => x === 0) && b[4] === 3 &&
        b.subarray(5, 12).every((x) => x === 0);
    if (w64 || w32) return "legacy";
    // JFR: the chunk magic "FLR\0"
    if (b.length >= 4 && b[0] === 0x46 && b[1] === 0x4c && b[2] === 0x52 && b[3] === 0) return "jfr";
    let bad = 0;
    for (let i = 0; i < n; i++) {
        const c = b[i];
        if (c === 0 || (c < 0x09) || (c > 0x0d && c < 0x20 && c !== 0x1b)) bad++;
    }
    if (n && bad > 0) return "pprof";
    const text = new TextDecoder("utf-8", { fatal: false }).decode(b.subarray(0, n));
    // JSON: an object, or an array of objects (Chrome's trace files); folded stacks may
    // start with "[unknown];..." but not with "[{". The server detects the same way.
    if (/^\s*(\{|\[\s*\{)/.test(text)) {
        if (text.includes("speedscope.app/file-format-schema.json") ||
            (text.includes('"shared"') && text.includes('"profiles"'))) return "speedscope";
        return "cpuprofile";
    }
    // legacy text profiles (gperftools, tcmalloc, Go's debug=1), by their first line as the
    // server's legacy row detects them
    const first = text.split("\n").find((l) => l.trim() && !l.trim().startsWith("#")) || "";
    if (/^\s*(heap profile:|--- contention|--- mutex:|--- threadz |--- Thread |--- heapz 1 ---)/.test(first) ||
        /^\s*\S+ profile: total \d+\s*$/.test(first)) return "legacy";
    const lines = text.split("\n", 400);
    for (const l of lines) {
        // "\t  4f2a10 runtime.mallocgc+0x1f (/usr/bin/app)" or a sample header
        // "app 1234/1235 [001] 123.456789: 10101010 cpu-clock:"
        if (/^\s+[0-9a-fA-F]+\s+\S/.test(l)) return "perf_script";
        if (/^\S.*?\s\d+(\/\d+)?\s+(\[\d+\]\s+)?\d+\.\d+:\s/.test(l)) return "perf_script";
    }
    return "folded";
}

// The first bytes of gzip data, decompressed (at most SNIFF of them); null when the
// platform cannot (no DecompressionStream) or the data is broken.
export async function gunzipHead(b) {
    if (typeof DecompressionStream === "undefined") return null;
    try {
        const stream = new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"));
        const reader = stream.getReader();
        const parts = [];
        let len = 0;
        while (len < SNIFF) {
            const { done, value } = await reader.read();
            if (done) break;
            parts.push(value);
            len += value.length;
        }
        reader.cancel().catch(() => {});
        const out = new Uint8Array(len);
        let o = 0;
        for (const p of parts) {
            out.set(p, o);
            o += p.length;
        }
        return out;
    } catch {
        return null;
    }
}

// The /ingest format of a file: a pprof file name decides; otherwise the content (gzip
// is looked into; gzip that cannot be looked into counts as pprof, the common case).
export async function detectFormat(name, bytes) {
    if (PPROF_NAME.test(name)) return "pprof";
    let head = bytes.subarray(0, SNIFF);
    if (isGzip(head)) {
        head = await gunzipHead(bytes);
        if (!head) return "pprof";
    }
    return sniffFormat(head);
}

// The file name as a label value of the push's name parameter (app{file="..."}), which
// cannot escape quotes: quotes, braces, commas and control characters become '_', and
// long names are cut.
export function labelSafeName(name) {
    const base = String(name).split(/[\\/]/).pop() || "profile";
    return base.replace(/["{},\u0000-\u001f\u007f]/g, "_").slice(0, 200);
}
