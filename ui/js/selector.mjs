// selector.mjs - label selectors as text: where the cursor is for autocompletion (a label
// name or a value), applying a completion, quoting, and regexes for pprof's filters.

const IDENT = /[A-Za-z0-9_.:]/;

// What to complete at position pos of text:
//   {kind: "name", prefix, start, end, wrap}    a label name; wrap: no '{' yet
//   {kind: "value", label, prefix, start, end}  a value of label
// start/end delimit the text a completion replaces; null when nothing fits there.
export function completionContext(text, pos) {
    let state = "out", seenBrace = false;
    let nameStart = 0, name = "", valueStart = 0, quote = "";
    let i = 0;
    while (i < pos) {
        const c = text[i];
        switch (state) {
        case "out":
            if (c === "{") { state = "name_start"; seenBrace = true; }
            i++;
            break;
        case "name_start":
            if (c === " " || c === "," || c === "\t") i++;
            else if (c === "}") { state = "out"; i++; }
            else if (IDENT.test(c)) { nameStart = i; state = "name"; }
            else return null;
            break;
        case "name":
            if (IDENT.test(c)) i++;
            else { name = text.slice(nameStart, i); state = "op"; }
            break;
        case "op":
            if (c === " ") i++;
            else if (c === "=" || c === "!") {
                const two = text.slice(i, i + 2);
                i += two === "=~" || two === "!=" || two === "!~" ? 2 : 1;
                state = "value_start";
            } else return null;
            break;
        case "value_start":
            if (c === " ") i++;
            else if (c === '"' || c === "'" || c === "`") {
                quote = c; valueStart = i; state = "value"; i++;
            } else return null;
            break;
        case "value":
            if (c === "\\" && quote !== "`") i += 2;
            else { if (c === quote) state = "after_value"; i++; }
            break;
        case "after_value":
            if (c === " ") i++;
            else if (c === ",") { state = "name_start"; i++; }
            else if (c === "}") { state = "out"; i++; }
            else return null;
            break;
        }
    }
    const identEnd = (from) => {
        let e = from;
        while (e < text.length && IDENT.test(text[e])) e++;
        return e;
    };
    if (state === "name_start")
        return { kind: "name", prefix: "", start: pos, end: identEnd(pos), wrap: false };
    if (state === "name")
        return { kind: "name", prefix: text.slice(nameStart, pos), start: nameStart,
                 end: identEnd(pos), wrap: false };
    if (state === "value_start") {
        // an existing quoted value after the cursor is replaced too
        let end = pos;
        const m = /^\s*("(?:[^"\\]|\\.)*"?)/.exec(text.slice(pos));
        if (m) end = pos + m[0].length;
        return { kind: "value", label: name, prefix: "", start: pos, end };
    }
    if (state === "value") {
        let end = pos, j = pos;
        while (j < text.length) {
            if (text[j] === "\\" && quote !== "`") { j += 2; continue; }
            if (text[j] === quote) { end = j + 1; break; }
            j++;
        }
        if (j >= text.length) end = text.length;
        return { kind: "value", label: name, prefix: unquote(text.slice(valueStart + 1, pos)),
                 start: valueStart, end };
    }
    if (state === "out" && !seenBrace && /^\s*[A-Za-z0-9_.:]*$/.test(text.slice(0, pos))) {
        const start = text.slice(0, pos).search(/[A-Za-z0-9_.:]*$/);
        return { kind: "name", prefix: text.slice(start, pos), start, end: identEnd(pos),
                 wrap: true };
    }
    return null;
}

function unquote(s) {
    return s.replace(/\\(.)/g, "$1");
}

// A label value as a selector's double-quoted string.
export function quoteValue(v) {
    return '"' + String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
}

// The candidates that match prefix: those starting with it first (case-insensitive), then
// those containing it, at most limit.
export function filterCompletions(items, prefix, limit = 50) {
    const p = prefix.toLowerCase();
    const starts = [], contains = [];
    for (const it of items) {
        const l = it.toLowerCase();
        if (l.startsWith(p)) starts.push(it);
        else if (p && l.includes(p)) contains.push(it);
        if (starts.length >= limit) break;
    }
    return starts.concat(contains).slice(0, limit);
}

// Applies a completion: {text, cursor, then} where then is "value" when a value should be
// completed next (after a label name was inserted with its empty value).
export function applyCompletion(text, ctx, item) {
    const before = text.slice(0, ctx.start), after = text.slice(ctx.end);
    if (ctx.kind === "name") {
        if (ctx.wrap) {
            const t = before.trimEnd() + "{" + item + '=""}' + after.trimStart();
            const cursor = before.trimEnd().length + item.length + 3;
            return { text: t, cursor, then: "value" };
        }
        if (/^\s*[=!]/.test(after)) // the operator is there: replace the name only
            return { text: before + item + after, cursor: before.length + item.length, then: null };
        const close = /}/.test(after) ? "" : "}";
        const t = before + item + '=""' + close + after;
        return { text: t, cursor: before.length + item.length + 2, then: "value" };
    }
    let rest = after;
    if (!/^\s*[,}]/.test(rest) && !/}/.test(rest)) rest = "}" + rest;
    const q = quoteValue(item);
    return { text: before + q + rest, cursor: before.length + q.length, then: null };
}

// A selector text with a matcher added or replaced: withMatcher('{a="1"}', "b", "2") is
// '{a="1", b="2"}'. The text must be a well-formed selector (or empty).
export function withMatcher(text, name, value) {
    const t = String(text || "").trim();
    const m = name + "=" + quoteValue(value);
    if (!t || t === "{}") return "{" + m + "}";
    const re = new RegExp("([{,]\\s*)" + name.replace(/\./g, "\\.") +
        "\\s*(=~|!=|!~|=)\\s*\"(?:[^\"\\\\]|\\\\.)*\"");
    if (re.test(t)) return t.replace(re, (_, pre) => pre + m);
    return t.replace(/\s*}\s*$/, "") + ", " + m + "}";
}

// The regex that matches exactly one function name, for focus/ignore/hide.
export function exactRegex(name) {
    return "^" + name.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&") + "$";
}

// Adds an alternative to a filter regex: "" + r -> r, a + r -> "a|r" (unless present).
export function addAlternative(existing, re) {
    if (!existing) return re;
    if (existing.split("|").includes(re)) return existing;
    return existing + "|" + re;
}

// The function name of a regex made by exactRegex, or "" when the regex is not one.
export function exactName(re) {
    const m = /^\^((?:[^\\^$.|?*+()[\]{}]|\\[\\^$.|?*+()[\]{}])*)\$$/.exec(String(re || ""));
    return m ? m[1].replace(/\\(.)/g, "$1") : "";
}

// The matchers of a selector text: [{name, op, value}] in their order (op: =, !=, =~, !~;
// values unquoted), [] for "" or "{}", null when the text is not a well-formed selector.
export function parseMatchers(text) {
    const t = String(text || "").trim();
    if (!t || t === "{}") return [];
    const re = /\s*([A-Za-z_][A-Za-z0-9_.:]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,|(?=}))/y;
    if (t[0] !== "{" || t[t.length - 1] !== "}") return null;
    const body = t.slice(1, -1) + "}";
    const out = [];
    re.lastIndex = 0;
    while (re.lastIndex < body.length - 1) {
        const at = re.lastIndex;
        const m = re.exec(body);
        if (!m || m.index !== at) return /^\s*$/.test(body.slice(at, -1)) && out.length ? out : null;
        const q = m[3];
        out.push({ name: m[1], op: m[2], value: q[0] === "`" ? q.slice(1, -1) : unquote(q.slice(1, -1)) });
    }
    return out;
}

// A selector text without the matchers of label name ('{a="1", b="2"}' without b is
// '{a="1"}', "" when nothing is left); text that does not parse is returned as it is.
export function withoutMatcher(text, name) {
    const ms = parseMatchers(text);
    if (!ms) return text;
    const rest = ms.filter((m) => m.name !== name);
    if (rest.length === ms.length) return text;
    return rest.length ? "{" + rest.map((m) => m.name + m.op + quoteValue(m.value)).join(", ") + "}" : "";
}

// The label that names a service: what ingest makes of an application's name, and what the
// page opens on (landing.mjs) and the query bar's service picker sets.
export const SERVICE_LABEL = "service_name";

// The service a selector text is about: the value of its one service_name="..." matcher;
// "" when it has none, or matches the label otherwise (a regex, !=).
export function serviceOf(text) {
    const ms = parseMatchers(text) || [];
    const on = ms.filter((m) => m.name === SERVICE_LABEL);
    return on.length === 1 && on[0].op === "=" ? on[0].value : "";
}

// The selector of one service: {service_name="api"}.
export function serviceSelector(name) {
    return "{" + SERVICE_LABEL + "=" + quoteValue(name) + "}";
}
