// flame-model.mjs - the flame graph JSON (docs/api-flamegraph.md) as flat typed arrays, and
// the math on it: parents and children, hit-testing, zoom, search share, sandwich.
//
import { exactRegex } from "./selector.mjs";

// The server's default maxNodes (docs/api-flamegraph.md).
export const DEFAULT_MAX_NODES = 8192;

// Nodes are numbered level by level, left to right: level d holds ids
// levelStart[d] .. levelStart[d+1]-1, sorted by x. x and total are in value units (for a
// diff, combined units: new + base); every node lies inside its parent.

// The fields of a diff document's nodes without "fields" (docs/api-flamegraph.md).
const DIFF_FIELDS = ["x", "total", "self", "base_total", "base_self", "name"];

// The model of a flame graph JSON document (version 1, one profile or a diff).
export function modelFromJSON(doc) {
    if (!doc || doc.version !== 1)
        throw new Error("unsupported flame graph version " + (doc && doc.version));
    const fields = doc.diff ? (Array.isArray(doc.fields) ? doc.fields : DIFF_FIELDS) : null;
    const m = modelFromLevels(doc.names, doc.levels, fields ? fields.length : 4, fields);
    m.unit = doc.unit || "";
    m.sampleType = doc.sample_type || "";
    m.diff = !!doc.diff;
    if (m.diff) {
        m.newRootTotal = doc.total;
        m.baseRootTotal = doc.base_total;
    }
    return m;
}

// Builds the arrays from per-level flat number lists: stride 4 (x, total, self, name), or
// a diff's nodes named by fields (x, total, self, base_total, base_self, name and, with
// statistics, change) with x and widths in combined units (new + base).
export function modelFromLevels(names, levels, stride = 4, fields = null) {
    const nlevels = levels.length;
    const levelStart = new Int32Array(nlevels + 1);
    let n = 0;
    for (let d = 0; d < nlevels; d++) {
        levelStart[d] = n;
        n += Math.floor(levels[d].length / stride);
    }
    levelStart[nlevels] = n;
    const x = new Float64Array(n), total = new Float64Array(n), self = new Float64Array(n);
    const name = new Int32Array(n), depth = new Uint16Array(n);
    const diff = !!fields;
    const value = diff ? new Float64Array(n) : total; // the new side's total
    let baseTotal = null, baseSelf = null, newSelf = self, change = null;
    const f = {};
    if (diff) {
        baseTotal = new Float64Array(n);
        baseSelf = new Float64Array(n);
        newSelf = new Float64Array(n);
        change = new Int8Array(n);
        for (const k of DIFF_FIELDS.concat("change")) f[k] = fields.indexOf(k);
    }
    let id = 0;
    for (let d = 0; d < nlevels; d++) {
        const l = levels[d];
        for (let k = 0; k + stride <= l.length; k += stride, id++) {
            depth[id] = d;
            if (!diff) {
                x[id] = l[k];
                total[id] = l[k + 1];
                self[id] = l[k + 2];
                name[id] = l[k + 3];
                continue;
            }
            x[id] = l[k + f.x];
            value[id] = l[k + f.total];
            newSelf[id] = l[k + f.self];
            baseTotal[id] = l[k + f.base_total];
            baseSelf[id] = l[k + f.base_self];
            name[id] = l[k + f.name];
            if (f.change >= 0) change[id] = l[k + f.change];
            total[id] = value[id] + baseTotal[id]; // drawn width: combined
            self[id] = newSelf[id] + baseSelf[id];
        }
    }
    const m = {
        names, nlevels, levelStart, n, x, total, self, name, depth,
        value, newSelf, baseTotal, baseSelf, change,
        parent: new Int32Array(n), firstChild: new Int32Array(n), childCount: new Int32Array(n),
        rootTotal: n ? total[0] : 0,
        unit: "", sampleType: "", diff,
    };
    linkParents(m);
    return m;
}

// parent, firstChild, childCount: one merge walk per pair of levels, since children lie
// inside their parent and both levels are sorted by x. Each child goes to the first node
// (from the current one on) that ends at or after the child's end.
function linkParents(m) {
    const { levelStart, x, total, parent, firstChild, childCount } = m;
    parent.fill(-1);
    firstChild.fill(-1);
    for (let d = 1; d < m.nlevels; d++) {
        let p = levelStart[d - 1];
        const pend = levelStart[d];
        for (let c = levelStart[d]; c < levelStart[d + 1]; c++) {
            const cend = x[c] + total[c];
            while (p < pend - 1 && x[p] + total[p] < cend) p++;
            parent[c] = p;
            if (childCount[p]++ === 0) firstChild[p] = c;
        }
    }
}

// The node at level d that contains value position v (x <= v < x + total), or -1:
// a binary search for the last node starting at or before v.
export function nodeAt(m, d, v) {
    if (d < 0 || d >= m.nlevels) return -1;
    let lo = m.levelStart[d], hi = m.levelStart[d + 1] - 1;
    if (hi < lo || v < m.x[lo]) return -1;
    while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (m.x[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return v < m.x[lo] + m.total[lo] ? lo : -1;
}

// The first node of level d that ends after value position v (the first one a view
// starting at v shows), or the level's end.
export function firstVisible(m, d, v) {
    let lo = m.levelStart[d], hi = m.levelStart[d + 1];
    while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (m.x[mid] + m.total[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The horizontal view that shows node id across the whole width: {x0, w, depth}; the
// root for id < 0, or m.span when the model sets one (a wider scale that the root fills
// only in part: two sides of a comparison drawn to one scale). The ancestors of id span
// the width too (they contain it), everything else at id's level and below falls outside.
export function zoomView(m, id) {
    if (id < 0 || id >= m.n || m.total[id] <= 0) {
        const w = m.span > m.rootTotal ? m.span : m.rootTotal;
        return { x0: 0, w: w > 0 ? w : 1, depth: 0, id: -1 };
    }
    return { x0: m.x[id], w: m.total[id], depth: m.depth[id], id };
}

// Pixel rectangle of node id in a view on a canvas width W (css px), before clipping.
export function nodeRect(m, id, view, W) {
    const k = W / view.w;
    return { x: (m.x[id] - view.x0) * k, w: m.total[id] * k };
}

// The value position at pixel px of the view (the inverse of nodeRect's x).
export function valueAt(view, W, px) {
    return view.x0 + (px * view.w) / W;
}

// The ids from the root's child down to id (the breadcrumb; empty for the root).
export function ancestry(m, id) {
    const out = [];
    for (let n = id; n > 0; n = m.parent[n]) out.push(n);
    return out.reverse();
}

// A node's stack as names (for the URL), root excluded.
export function pathOf(m, id) {
    return ancestry(m, id).map((n) => m.names[m.name[n]]);
}

// The node reached by following names from the root, or -1.
export function findPath(m, names) {
    let n = 0;
    if (!m.n) return -1;
    for (const want of names) {
        let found = -1;
        const c0 = m.firstChild[n];
        for (let c = c0; c >= 0 && c < c0 + m.childCount[n]; c++) {
            if (m.names[m.name[c]] === want) { found = c; break; }
        }
        if (found < 0) return -1;
        n = found;
    }
    return n;
}

// The regex of a search text: case-insensitive; text that is not a valid regex is
// searched for literally. null for an empty search.
export function searchRegex(text) {
    if (!text) return null;
    try {
        return new RegExp(text, "i");
    } catch {
        return new RegExp(text.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&"), "i");
    }
}

// Which nodes match re (Uint8Array, 1 = match). Each distinct name is tested once.
export function matchNodes(m, re) {
    const byName = new Int8Array(m.names.length).fill(-1);
    const out = new Uint8Array(m.n);
    for (let i = 0; i < m.n; i++) {
        const k = m.name[i];
        if (byName[k] < 0) byName[k] = re.test(m.names[k]) ? 1 : 0;
        out[i] = byName[k];
    }
    return out;
}

// The share of the matches: {nodes, value, functions} where value sums the totals of
// matched nodes without a matched ancestor, so nested matches (recursion, a match calling
// another) count once; within: only the subtree of that node (default: the root).
export function searchShare(m, matched, within = 0) {
    // per node: 0 = outside `within` (or not reached), 1 = inside, 2 = inside and under a
    // match (the node itself or an ancestor)
    const st = new Uint8Array(m.n);
    let nodes = 0, value = 0;
    const names = new Set();
    if (within < 0 || within >= m.n) return { nodes, value, functions: 0 };
    for (let d = m.depth[within]; d < m.nlevels; d++) {
        for (let i = m.levelStart[d]; i < m.levelStart[d + 1]; i++) {
            let s;
            if (i === within) s = 1;
            else {
                const p = m.parent[i];
                if (p < 0 || st[p] === 0) continue;
                s = st[p];
            }
            if (matched[i]) {
                nodes++;
                names.add(m.name[i]);
                if (s === 1) value += m.total[i];
                s = 2;
            }
            st[i] = s;
        }
    }
    return { nodes, value, functions: names.size };
}

// ---- trees built in the browser (sandwich) ----

function newTreeNode(name) {
    return { name, total: 0, self: 0, children: new Map() };
}

function childOf(t, name) {
    let c = t.children.get(name);
    if (!c) {
        c = newTreeNode(name);
        t.children.set(name, c);
    }
    return c;
}

// The model of a tree {name, total, self, children: Map}: children ordered by name and
// laid out from their parent's x, as the server lays out its JSON.
export function modelFromTree(root) {
    const names = [], index = new Map();
    const nameId = (s) => {
        let k = index.get(s);
        if (k === undefined) {
            k = names.length;
            names.push(s);
            index.set(s, k);
        }
        return k;
    };
    const levels = [];
    let cur = [{ t: root, x: 0 }];
    while (cur.length) {
        const l = [], next = [];
        for (const { t, x } of cur) {
            l.push(x, t.total, t.self, nameId(t.name));
            let cx = x;
            const kids = [...t.children.values()].sort((a, b) =>
                a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
            for (const c of kids) {
                next.push({ t: c, x: cx });
                cx += c.total;
            }
        }
        levels.push(l);
        cur = next;
    }
    return modelFromLevels(names, levels, 4);
}

// The outermost nodes named like nameIndex: those without an ancestor of the same name.
export function outermost(m, nameIndex) {
    const inside = new Uint8Array(m.n);
    const out = [];
    for (let i = 0; i < m.n; i++) {
        const p = m.parent[i];
        const anc = p >= 0 && inside[p];
        if (m.name[i] === nameIndex) {
            if (!anc) out.push(i);
            inside[i] = 1;
        } else inside[i] = anc ? 1 : 0;
    }
    return out;
}

// A function's sandwich: {callers, callees, total} for the frame name fname. callees
// merges the subtrees of its outermost occurrences (the function at the root, what it
// calls below); callers is the inverted tree of their stacks (the function at the root,
// its callers as children, their callers below). Both roots weigh the sum of the
// outermost occurrences' totals, so recursion counts once. null when no frame has the name.
export function sandwich(m, fname) {
    const k = m.names.indexOf(fname);
    if (k < 0) return null;
    const occ = outermost(m, k);
    if (!occ.length) return null;
    const callees = newTreeNode(fname), callers = newTreeNode(fname);
    for (const o of occ) {
        // callees: the subtree below o, merged by name path
        const stack = [[o, callees]];
        while (stack.length) {
            const [n, t] = stack.pop();
            t.total += m.total[n];
            t.self += m.self[n];
            const c0 = m.firstChild[n];
            for (let c = c0; c >= 0 && c < c0 + m.childCount[n]; c++)
                stack.push([c, childOf(t, m.names[m.name[c]])]);
        }
        // callers: the path from o up to the root's child, nearest caller first
        const v = m.total[o];
        let t = callers;
        t.total += v;
        let p = m.parent[o];
        if (p <= 0) t.self += v;
        for (; p > 0; p = m.parent[p]) {
            t = childOf(t, m.names[m.name[p]]);
            t.total += v;
            if (m.parent[p] <= 0) t.self += v;
        }
    }
    return { callers: modelFromTree(callers), callees: modelFromTree(callees),
             total: callees.total };
}

// ---- truncation (maxNodes) ----

// Whether the server left frames out of the graph: it sends at most maxNodes ("" = its
// default) and adds what it leaves out to the callers' self, so a graph of exactly that
// many nodes has (almost surely) lost some.
export function truncated(m, maxNodes) {
    const limit = +maxNodes || DEFAULT_MAX_NODES;
    return !!m && m.n >= limit;
}

// The focus that fetches a zoomed subtree at full detail: the zoomed frame's function
// (zoom is its stack, names joined by ';'). Every stack through the frame's path goes
// through that function, so the focused profile holds the whole subtree, and the frames
// elsewhere that competed with it for maxNodes are gone. "" without a zoom.
export function detailFocus(zoom) {
    if (!zoom) return "";
    const leaf = zoom.split(";").pop();
    return leaf ? exactRegex(leaf) : "";
}
