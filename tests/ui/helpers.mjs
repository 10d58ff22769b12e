// helpers.mjs - shared by the UI unit tests: flame graph documents from folded stacks, laid
// out as the server lays them out (docs/api-flamegraph.md), and a seeded random generator.

// A tree node: its name, per side (0 base, 1 new; one profile: 0) total and self.
const node = (name) => ({ name, v: [0, 0], s: [0, 0], kids: new Map() });

// Adds folded lines "a;b;c 12" to side `side` of the tree root (values times scale, rounded).
function addFolded(root, folded, side = 0, scale = 1) {
    for (const line of folded.trim().split("\n")) {
        const sp = line.lastIndexOf(" ");
        const v = Math.round(Number(line.slice(sp + 1)) * scale);
        let t = root;
        t.v[side] += v;
        for (const f of line.slice(0, sp).split(";").filter(Boolean)) {
            if (!t.kids.has(f)) t.kids.set(f, node(f));
            t = t.kids.get(f);
            t.v[side] += v;
        }
        t.s[side] += v;
    }
}

// The levels of a tree as the server lays them out: children by name from their parent's
// x, each as wide as width(node); node(t, x) gives a node's numbers. {names, levels}.
function layout(root, width, numbers) {
    const names = [], idx = new Map();
    const nameId = (s) => {
        if (!idx.has(s)) {
            idx.set(s, names.length);
            names.push(s);
        }
        return idx.get(s);
    };
    const levels = [];
    let cur = [{ t: root, x: 0 }];
    while (cur.length) {
        const l = [], next = [];
        for (const { t, x } of cur) {
            l.push(...numbers(t, x, nameId(t.name)));
            let cx = x;
            for (const k of [...t.kids.keys()].sort()) {
                next.push({ t: t.kids.get(k), x: cx });
                cx += width(t.kids.get(k));
            }
        }
        levels.push(l);
        cur = next;
    }
    return { names, levels };
}

// The flame graph JSON document (version 1) of folded lines "a;b;c 12".
export function flameDoc(folded) {
    const root = node("total");
    addFolded(root, folded);
    let maxSelf = 0;
    const { names, levels } = layout(root, (t) => t.v[0], (t, x, k) => {
        maxSelf = Math.max(maxSelf, t.s[0]);
        return [x, t.v[0], t.s[0], k];
    });
    return { version: 1, sample_type: "samples", unit: "count", total: root.v[0],
             max_self: maxSelf, names, levels };
}

// A small seeded generator (mulberry32), so random tests repeat.
export function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

// Random folded stacks: n lines over a vocabulary of f0..f(k-1), depth up to maxDepth.
export function randomFolded(seed, n, k = 12, maxDepth = 10) {
    const r = rng(seed);
    const lines = [];
    for (let i = 0; i < n; i++) {
        const d = 1 + Math.floor(r() * maxDepth);
        const st = [];
        for (let j = 0; j < d; j++) st.push("f" + Math.floor(r() * k));
        lines.push(st.join(";") + " " + (1 + Math.floor(r() * 100)));
    }
    return lines.join("\n");
}

// The diff flame graph document (docs/api-flamegraph.md "Two profiles compared") of two
// sets of folded lines, laid out by combined width (new + base) as the server lays it
// out; change(name) gives each node's seventh number ("fields" with "change"); without
// it, the six-number form. opts.normalize scales the base to the new total.
export function flameDiffDoc(baseFolded, newFolded, change = null, opts = {}) {
    const sum = (folded) => folded.trim().split("\n").reduce((a, l) => a + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    const scale = opts.normalize ? sum(newFolded) / sum(baseFolded) : 1;
    const root = node("total");
    addFolded(root, baseFolded, 0, scale);
    addFolded(root, newFolded, 1);
    const { names, levels } = layout(root, (t) => t.v[0] + t.v[1], (t, x, k) =>
        [x, t.v[1], t.s[1], t.v[0], t.s[0], k].concat(change ? [change(t.name)] : []));
    const doc = { version: 1, diff: true, sample_type: "samples", unit: "count", total: root.v[1],
                  base_total: root.v[0], normalized: !!opts.normalize, base_scale: scale, names, levels };
    if (change) {
        doc.fields = ["x", "total", "self", "base_total", "base_self", "name", "change"];
        doc.q = 0.05;
        doc.method = "replicates";
    }
    return doc;
}
