// colors.mjs - stable frame colours: a hash of the package (or binary) part of the name, so
// one package keeps its colour across views, profiles and reloads.

// The package or binary a frame name belongs to:
//   Go       "net/http.(*conn).serve" -> "net/http", "runtime.mallocgc" -> "runtime"
//   C++/Rust "std::vector<int>::push_back" -> "std"
//   binaries "[liblzma.so.5.4.1]" -> "liblzma", "[kernel.kallsyms]" -> "kernel"
//   plain C  "memcpy" -> "memcpy"; unsymbolized "0x4f2a10" -> "?"
export function packageOf(name) {
    const s = String(name);
    if (s.startsWith("[")) {
        const inner = s.slice(1, s.indexOf("]") > 0 ? s.indexOf("]") : s.length);
        return inner.slice(inner.lastIndexOf("/") + 1).split(".")[0] || inner;
    }
    if (/^0x[0-9a-f]+$/i.test(s)) return "?";
    const cut = s.search(/[(<\s]/);
    const head = cut >= 0 ? s.slice(0, cut) : s;
    const cc = head.indexOf("::");
    if (cc > 0 && !/[./]/.test(head.slice(0, cc))) return head.slice(0, cc);
    const slash = head.lastIndexOf("/");
    const dot = head.indexOf(".", slash + 1);
    if (dot > slash + 1) return s.slice(0, dot);
    return slash > 0 ? s.slice(0, slash) : head || s;
}

// FNV-1a, 32 bits, with a final mix.
export function hash32(s) {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) {
        h ^= s.charCodeAt(i);
        h = Math.imul(h, 0x01000193);
    }
    // murmur3's finaliser: FNV's low bits mix poorly, and the hue is taken from them
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
}

// An HSL colour (h in degrees, s and l in percent) as "#rrggbb", which canvases parse fastest.
export function hslHex(h, s, l) {
    s /= 100;
    l /= 100;
    const a = s * Math.min(l, 1 - l);
    const f = (n) => {
        const k = (n + h / 30) % 12;
        const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
        return Math.round(c * 255).toString(16).padStart(2, "0");
    };
    return "#" + f(0) + f(8) + f(4);
}

// The package palette: 24 pastels (hue, saturation, lightness) whose hues are spread by the
// golden angle, lightness alternating, so that two packages are either told apart clearly
// or share a colour.
export const PALETTE = Array.from({ length: 24 }, (_, i) =>
    [(i * 137.508) % 360, 62 + (i % 3) * 6, 66 + (i % 2) * 8]);

// A pastel for a frame, readable with dark text: its package's colour, a little lighter or
// darker per function so that neighbours of one package stay apart.
export function colorFor(name) {
    if (name === "total") return "#c9c9c9";
    const [h, s, l] = PALETTE[hash32(packageOf(name)) % PALETTE.length];
    const f = hash32(name);
    return hslHex((h + (f % 9) - 4 + 360) % 360, s, l + ((f >>> 8) % 11) - 5);
}

// A pastel per function, not per package: the two sides of a comparison drawn next to
// each other show one function in one colour on both, and neighbours of one package apart.
export function functionColor(name) {
    if (name === "total") return "#c9c9c9";
    const f = hash32(name);
    const [h, s, l] = PALETTE[f % PALETTE.length];
    return hslHex(h, s, l + ((f >>> 8) % 7) - 3);
}

export const DIM_COLOR = "#e4e4e4";
export const DIM_TEXT = "#9a9a9a";

// Colours of the timeline's lines (colour-blind friendly, Okabe-Ito and friends).
export const SERIES_COLORS = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7",
    "#56b4e9", "#7f7f00", "#882255", "#44aa99", "#999933", "#6a3d9a", "#555555"];
