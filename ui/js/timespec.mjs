// timespec.mjs - the times of the URL and the API (now-1h, unix seconds, RFC 3339) read in
// the browser, as the server reads them (src/query/timespec.h), and the range presets.

const DURATION_UNITS = {
    ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3,
    w: 7 * 86400e3, y: 365 * 86400e3,
};

// A duration in milliseconds: "15m", "1h30m", "500ms", "1.5h", or bare seconds ("90").
// NaN when it is not one.
export function parseDuration(s) {
    s = String(s).trim();
    if (/^\d+(\.\d+)?$/.test(s)) return parseFloat(s) * 1e3;
    const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w|y)/y;
    let total = 0, n = 0;
    re.lastIndex = 0;
    while (re.lastIndex < s.length) {
        const at = re.lastIndex;
        const m = re.exec(s);
        if (!m || m.index !== at) return NaN;
        total += parseFloat(m[1]) * DURATION_UNITS[m[2]];
        n++;
    }
    return n ? total : NaN;
}

// A point in time in unix milliseconds, NaN when s is not one. Accepts what the server
// accepts: now, now-D, now+D, unix seconds/ms/µs/ns by magnitude, RFC 3339, a bare date.
export function parseTime(s, nowMs) {
    s = String(s ?? "").trim();
    if (s === "now") return nowMs;
    let m = /^now\s*([+-])\s*(.+)$/.exec(s);
    if (m) {
        const d = parseDuration(m[2]);
        return Number.isNaN(d) ? NaN : m[1] === "-" ? nowMs - d : nowMs + d;
    }
    if (/^\d+(\.\d+)?$/.test(s)) {
        const v = parseFloat(s);
        if (v < 1e11) return v * 1e3;
        if (v < 1e14) return v;
        if (v < 1e17) return v / 1e3;
        return v / 1e6;
    }
    m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
    if (m) return Date.UTC(+m[1], +m[2] - 1, +m[3]);
    m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
    if (m) {
        let t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
        if (m[7]) t += parseFloat("0" + m[7]) * 1e3;
        if (m[8] !== "Z" && m[8] !== "z") {
            const sign = m[8][0] === "-" ? -1 : 1;
            t -= sign * (parseInt(m[8].slice(1, 3), 10) * 60 + parseInt(m[8].slice(4), 10)) * 60e3;
        }
        return t;
    }
    return NaN;
}

// True for times that move with the clock ("now", "now-1h").
export function isRelative(s) {
    return /^now(\s*[+-].*)?$/.test(String(s ?? "").trim());
}

// The range presets of the time picker.
export const PRESETS = [
    { from: "now-15m", until: "now", label: "Last 15 minutes" },
    { from: "now-1h", until: "now", label: "Last 1 hour" },
    { from: "now-6h", until: "now", label: "Last 6 hours" },
    { from: "now-24h", until: "now", label: "Last 24 hours" },
    { from: "now-7d", until: "now", label: "Last 7 days" },
];

// The preset a range is, or null.
export function presetOf(from, until) {
    return PRESETS.find((p) => p.from === from && p.until === until) || null;
}

// A unix-seconds string for the URL from milliseconds (whole seconds, rounded down).
export function toUnixSeconds(ms) {
    return String(Math.floor(ms / 1000));
}

// A value for <input type="datetime-local"> (local time) from unix milliseconds.
export function toLocalInput(ms) {
    const d = new Date(ms);
    const p = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
        `${p(d.getMinutes())}`;
}

// A time for an input box: unix timestamps read better as RFC 3339 UTC (which the API takes
// as well); other spellings stay as they are.
export function displayTime(s) {
    if (!/^\d+(\.\d+)?$/.test(String(s))) return s;
    const t = parseTime(s, Date.now());
    return Number.isNaN(t) ? s : new Date(t).toISOString().replace(/\.000Z$/, "Z");
}
