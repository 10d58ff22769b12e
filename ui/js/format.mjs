// format.mjs - values in their units (ns -> ms/s, bytes -> KiB/MiB, counts), percentages, times.

// Nanoseconds per unit of the time units profiles use.
const TIME_UNITS = {
    nanoseconds: 1, nanosecond: 1, ns: 1,
    microseconds: 1e3, microsecond: 1e3, us: 1e3,
    milliseconds: 1e6, millisecond: 1e6, ms: 1e6,
    seconds: 1e9, second: 1e9, s: 1e9,
};
const BYTE_UNITS = { bytes: 1, byte: 1, b: 1, kilobytes: 1024, megabytes: 1024 * 1024 };

// 'time', 'bytes' or 'count' for a sample type's unit string.
export function unitKind(unit) {
    const u = String(unit || "").toLowerCase();
    if (u in TIME_UNITS) return "time";
    if (u in BYTE_UNITS) return "bytes";
    return "count";
}

// The display scale for values around max (the largest absolute value shown together):
// {factor, suffix}; a value v is shown as v / factor followed by suffix. Shared by single
// values and axis ticks so that an axis uses one unit throughout.
export function unitScale(unit, max) {
    const u = String(unit || "").toLowerCase();
    const m = Math.abs(max) || 0;
    if (u in TIME_UNITS) {
        const ns = m * TIME_UNITS[u];
        const steps = [[3600e9, "h"], [60e9, "min"], [1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
        for (const [f, s] of steps) {
            // minutes and hours only from 2 of them: "90 s" reads better than "1.50 min"
            const from = f >= 60e9 ? 2 * f : f;
            if (ns >= from) return { factor: f / TIME_UNITS[u], suffix: " " + s };
        }
        return { factor: 1 / TIME_UNITS[u], suffix: " ns" };
    }
    if (u in BYTE_UNITS) {
        const b = m * BYTE_UNITS[u];
        const names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let i = 0;
        while (i < names.length - 1 && b >= Math.pow(1024, i + 1)) i++;
        return { factor: Math.pow(1024, i) / BYTE_UNITS[u], suffix: " " + names[i] };
    }
    const names = ["", "k", "M", "G", "T", "P", "E"];
    let i = 0;
    while (i < names.length - 1 && m >= Math.pow(1000, i + 1)) i++;
    return { factor: Math.pow(1000, i), suffix: names[i] };
}

// Three significant digits at most, no exponent: 1.50, 12.3, 123, 1234.
export function sig3(x) {
    const a = Math.abs(x);
    if (a === 0) return "0";
    if (a >= 100) return x.toFixed(0);
    if (a >= 10) return x.toFixed(1);
    return x.toFixed(2);
}

// A value in its unit: formatValue(1500000, "nanoseconds") is "1.50 ms",
// formatValue(3 << 20, "bytes") "3.00 MiB", formatValue(12345, "count") "12.3k".
// Small counts stay exact ("42"); fractional ones (averages) keep two decimals.
export function formatValue(v, unit, scale) {
    if (!Number.isFinite(v)) return "–";
    if (v === 0 && !scale) return "0";
    const kind = unitKind(unit);
    const s = scale || unitScale(unit, v);
    if (kind === "count" && s.factor === 1)
        return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, "");
    if (kind === "bytes" && s.factor * (BYTE_UNITS[String(unit).toLowerCase()] || 1) === 1)
        return (Number.isInteger(v) ? String(v) : v.toFixed(1)) + s.suffix;
    return sig3(v / s.factor) + s.suffix;
}

// part / whole as a percentage with two decimals ("12.34%"); "0%" when whole is 0.
export function formatPercent(part, whole) {
    if (!whole) return "0%";
    const p = (part / whole) * 100;
    if (p !== 0 && Math.abs(p) < 0.01) return (p < 0 ? "-" : "") + "<0.01%";
    return p.toFixed(2) + "%";
}

// An exact integer with thin grouping: 1234567 -> "1,234,567".
export function formatInteger(v) {
    return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const pad = (n) => String(n).padStart(2, "0");

// Local date and time of unix seconds: "2026-11-30 06:31:10" (seconds dropped with
// seconds=false).
export function formatDateTime(sec, seconds = true) {
    const d = new Date(sec * 1000);
    const s = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
        `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    return seconds ? s + ":" + pad(d.getSeconds()) : s;
}

// A time-axis label for unix seconds, as precise as the tick interval needs: "14:05",
// "14:05:30", or with the date ("11-30 14:00") for intervals of a day or more and for
// midnight.
export function formatTick(sec, interval) {
    const d = new Date(sec * 1000);
    const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    if (interval >= 86400 || (hm === "00:00" && interval >= 3600))
        return `${pad(d.getMonth() + 1)}-${pad(d.getDate())}` + (interval >= 86400 ? "" : " " + hm);
    if (interval < 60) return hm + ":" + pad(d.getSeconds());
    return hm;
}

// A duration in seconds for people: 90 -> "1m 30s", 3600 -> "1h", 93784 -> "1d 2h 3m".
export function formatDuration(sec) {
    sec = Math.round(sec);
    if (sec < 60) return sec + "s";
    const parts = [];
    const d = Math.floor(sec / 86400), h = Math.floor((sec % 86400) / 3600);
    const m = Math.floor((sec % 3600) / 60), s = sec % 60;
    if (d) parts.push(d + "d");
    if (h) parts.push(h + "h");
    if (m) parts.push(m + "m");
    if (s && !d) parts.push(s + "s");
    return parts.join(" ");
}

// ---- metrics: what a timeline's or a comparison's numbers are ----

// How to show values in a metric's unit (the API's "unit" of a timeline, "metric_unit" of a
// diff): "nanoseconds/s" (CPU time per second) as cores, "bytes/s" as bytes per second,
// "bytes/profile" per profile, "share" as a percentage, a plain unit ("bytes": a gauge's
// average) as it is. {k, base, suffix, title}: a value v is shown as v * k in unit base
// followed by suffix; title names the axis.
export function metricView(unit) {
    const u = String(unit || "");
    if (u === "share") return { k: 100, base: "count", suffix: "%", title: "share (%)", share: true };
    const m = /^(.*)\/(s|profile)$/.exec(u);
    const base = m ? m[1] : u;
    const per = m ? m[2] : "";
    if (per === "s" && unitKind(base) === "time") {
        // time per second of time: cores (1 = one core busy)
        return { k: TIME_UNITS[base.toLowerCase()] / 1e9, base: "count", suffix: " cores", title: "CPU cores" };
    }
    if (per === "s") return { k: 1, base, suffix: "/s", title: `${base} per second` };
    if (per === "profile") return { k: 1, base, suffix: "/profile", title: `${base} per profile` };
    return { k: 1, base, suffix: "", title: base ? `${base} (average)` : "" };
}

// A value of a metric for people: formatMetric(5e7, "nanoseconds/s") is "0.05 cores",
// formatMetric(2048, "bytes/s") "2.00 KiB/s", formatMetric(0.123, "share") "12.30%";
// "–" for null (no profile there).
export function formatMetric(v, unit, scale) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    const m = metricView(unit);
    const x = v * m.k;
    if (m.share) return x.toFixed(2) + "%";
    if (m.suffix === " cores") return (x === 0 ? "0" : x >= 100 ? x.toFixed(0) : +x.toPrecision(3) + "") + m.suffix;
    return formatValue(x, m.base, scale) + m.suffix;
}
