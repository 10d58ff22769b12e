// landing.mjs - where the page opens when its URL names no query: on one service, the
// busiest of the profile type over the range, as Pyroscope and Parca open on one
// application (every series merged into one flame graph mixes programs that share nothing).
// busiestValue is pure (tests/ui/landing.test.mjs).

import { SERVICE_LABEL, serviceSelector } from "./selector.mjs";

// The value of label whose line carries the largest total in a /api/v1/timeline answer
// grouped by that label; "" when no line has one (no data, or no series with the label).
export function busiestValue(timeline, label = SERVICE_LABEL) {
    let best = "", most = 0;
    for (const s of (timeline && timeline.series) || []) {
        const v = s.labels && s.labels[label];
        if (!v) continue;
        const sum = (s.values || []).reduce((a, x) => a + (Number.isFinite(x) ? x : 0), 0);
        if (sum > most) {
            most = sum;
            best = v;
        }
    }
    return best;
}

// The selector the page opens on for a state without a query: the busiest service of the
// state's type and range; "" when none could be found (the page then shows what the empty
// selector shows, and says why it is empty).
export async function landingQuery(api, state) {
    if (!state.type) return "";
    try {
        const tl = await api.json("api/v1/timeline", { type: state.type, from: state.from,
                                                       until: state.until, group_by: SERVICE_LABEL });
        const v = busiestValue(tl);
        return v ? serviceSelector(v) : "";
    } catch {
        return ""; // the view's own request will say what is wrong
    }
}
