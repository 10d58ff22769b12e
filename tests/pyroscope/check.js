// check.js - queries a scorch server after app.js pushed to it and checks what the real
// Pyroscope client's data became. Exits 1 with "FAIL: ..." lines on the first failures.
// Usage: node check.js open URL            (series, labels, types, render tsv/json)
//        node check.js auth URL TOKEN TENANT (401 without the token; tenant isolation)
//        node check.js metric URL NAME      (prints a /metrics counter's value)
//        node check.js multipart URL        (a Go client's multipart push with
//                                            sample_type_config; prev_profile refused)
'use strict';

const [mode, base, token, tenant] = process.argv.slice(2);
let failures = 0;
function check(ok, what) {
    if (!ok) {
        console.error('FAIL: ' + what);
        failures++;
    } else {
        console.error('ok: ' + what);
    }
    return ok;
}

async function get(path, headers = {}) {
    const res = await fetch(base + path, { headers });
    const body = await res.text();
    return { status: res.status, type: res.headers.get('content-type') || '', body };
}

async function getJSON(path, headers = {}) {
    const r = await get(path, headers);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status}: ${r.body}`);
    return JSON.parse(r.body);
}

const q = (sel) => encodeURIComponent(sel);
const APP = '{service_name="nodeapp"}';

// tsv rows of render?format=tsv: [{flat, cum, fn}], in the report's order (flat first)
function tsvRows(text) {
    const lines = text.trimEnd().split('\n');
    if (lines[0] !== 'flat\tcum\tfunction') throw new Error('bad tsv header: ' + lines[0]);
    return lines.slice(1).map((l) => {
        const [flat, cum, ...fn] = l.split('\t');
        return { flat: Number(flat), cum: Number(cum), fn: fn.join('\t') };
    });
}

// the frames of flame graph JSON with their self values, heaviest first
function flameSelf(doc) {
    const self = new Map();
    for (const level of doc.levels)
        for (let i = 0; i < level.length; i += 4) {
            const name = doc.names[level[i + 3]];
            self.set(name, (self.get(name) || 0) + level[i + 2]);
        }
    return [...self.entries()].sort((a, b) => b[1] - a[1]);
}

async function open() {
    // the series, with the client's tags as labels (the dotted one included)
    const series = await getJSON('/api/v1/series?query=' + q(APP));
    check(series.length === 1, `one series for ${APP} (got ${series.length})`);
    const l = (series[0] || {}).labels || {};
    check(l.service_name === 'nodeapp', 'label service_name=nodeapp');
    check(l.region === 'eu', 'label region=eu (a tag)');
    check(l['otel.scope.name'] === 'x', 'label otel.scope.name=x (a dotted tag overriding the default)');
    check(l['process.runtime.name'] === 'nodejs', "label process.runtime.name=nodejs (the client's own)");
    check(l.spy_name === 'nodespy', 'label spy_name=nodespy (spyName)');
    // selectors take dotted names
    const dotted = await getJSON('/api/v1/series?query=' + q('{otel.scope.name="x",region=~"e."}'));
    check(dotted.length === 1, 'a selector on the dotted label finds the series');
    const none = await getJSON('/api/v1/series?query=' + q('{otel.scope.name="y"}'));
    check(none.length === 0, 'a selector on another dotted value finds nothing');
    const names = await getJSON('/api/v1/labels');
    check(names.includes('otel.scope.name') && names.includes('region'), '/api/v1/labels lists the tags');
    const vals = await getJSON('/api/v1/label_values?name=otel.scope.name');
    check(JSON.stringify(vals) === '["x"]', `/api/v1/label_values?name=otel.scope.name is ["x"] (${JSON.stringify(vals)})`);

    // profile types: the wall profile (with cpu time) and the heap profile
    const types = await getJSON('/api/v1/profile_types');
    const byId = new Map(types.map((t) => [t.id, t]));
    console.error('profile types: ' + types.map((t) => t.id).join(' '));
    for (const [id, unit, agg] of [
        ['wall:wall', 'nanoseconds', 'sum'],
        ['wall:cpu', 'nanoseconds', 'sum'],
        ['wall:samples', 'count', 'sum'],
        ['heap:inuse_space', 'bytes', 'average'],
        ['heap:inuse_objects', 'count', 'average'],
    ]) {
        const t = byId.get(id);
        check(t && t.unit === unit && t.aggregation === agg, `type ${id} in ${unit}, ${agg}`);
    }
    check(types.length === 5, `exactly those 5 types (got ${types.length})`);

    // render: burnCpu on top of the time profiles, allocateLots of the heap
    for (const type of ['wall:cpu', 'wall:wall']) {
        const r = await get(`/api/v1/render?query=${q(APP)}&type=${type}&format=tsv`);
        check(r.status === 200 && r.type.startsWith('text/tab-separated-values'), `render ${type} tsv: 200`);
        const rows = tsvRows(r.body);
        const total = rows.reduce((s, x) => s + x.flat, 0);
        check(rows.length > 3 && /:burnCpu:/.test(rows[0].fn), `${type}: burnCpu has the most flat (top: ${rows[0] && rows[0].fn})`);
        check(rows[0].flat > total / 3, `${type}: burnCpu's flat is more than a third of ${total}`);
        const json = await getJSON(`/api/v1/render?query=${q(APP)}&type=${type}&format=json`);
        check(json.version === 1 && json.unit === 'nanoseconds' && json.total === total,
              `${type} json: version 1, nanoseconds, total ${json.total} = tsv's ${total}`);
        const top = flameSelf(json);
        check(/:burnCpu:/.test(top[0][0]), `${type} json: burnCpu has the most self (${top[0][0]})`);
    }
    const heap = await get(`/api/v1/render?query=${q(APP)}&type=heap:inuse_space&format=tsv`);
    const hrows = tsvRows(heap.body);
    check(hrows.slice(0, 3).some((x) => /:allocateLots:/.test(x.fn)),
          `heap:inuse_space: allocateLots in the top 3 (${hrows.slice(0, 3).map((x) => x.fn).join(', ')})`);
    const hjson = await getJSON(`/api/v1/render?query=${q(APP)}&type=heap:inuse_space&format=json`);
    check(hjson.unit === 'bytes' && flameSelf(hjson).slice(0, 3).some((x) => /:allocateLots:/.test(x[0])),
          'heap:inuse_space json: bytes, allocateLots among the 3 largest self');
    const objs = tsvRows((await get(`/api/v1/render?query=${q(APP)}&type=heap:inuse_objects&format=tsv`)).body);
    check(objs.slice(0, 3).some((x) => /:allocateLots:/.test(x.fn)), 'heap:inuse_objects: allocateLots in the top 3');

    // the timeline has the pushes
    const tl = await getJSON(`/api/v1/timeline?query=${q(APP)}&type=wall:cpu&from=now-10m&until=now&step=1s`);
    const sum = tl.series.reduce((s, x) => s + x.values.reduce((a, b) => a + b, 0), 0);
    check(tl.series.length === 1 && sum > 0, `timeline: one line with cpu time (${sum} ns)`);
}

async function auth() {
    const bearer = { Authorization: 'Bearer ' + token };
    const r = await get('/api/v1/series');
    check(r.status === 401, `no token: 401 (got ${r.status})`);
    check(/^\{"error":".+"\}/.test(r.body), 'no token: a JSON error ' + r.body.trim());
    const w = await get('/api/v1/series', { Authorization: 'Bearer wrong' + token });
    check(w.status === 401, `wrong token: 401 (got ${w.status})`);
    const h = await get('/healthz');
    check(h.status === 200, '/healthz needs no token');
    const mine = await getJSON('/api/v1/series?query=' + q(APP), { ...bearer, 'X-Scope-OrgID': tenant });
    check(mine.length === 1, `tenant ${tenant}: the series pushed with tenantID is there`);
    const l = (mine[0] || {}).labels || {};
    check(l['otel.scope.name'] === 'x' && l.region === 'eu', `tenant ${tenant}: with its labels`);
    const types = await getJSON('/api/v1/profile_types', { ...bearer, 'X-Scope-OrgID': tenant });
    check(types.some((t) => t.id === 'wall:cpu') && types.some((t) => t.id === 'heap:inuse_space'),
          `tenant ${tenant}: wall and heap types`);
    const rows = tsvRows((await get(`/api/v1/render?query=${q(APP)}&type=wall:cpu&format=tsv`,
                                    { ...bearer, 'X-Scope-OrgID': tenant })).body);
    check(rows.length > 0 && /:burnCpu:/.test(rows[0].fn), `tenant ${tenant}: burnCpu on top`);
    const other = await getJSON('/api/v1/series', bearer);
    check(other.length === 0, `the default tenant sees none of ${tenant}'s series (${other.length})`);
    const other2 = await getJSON('/api/v1/series', { ...bearer, 'X-Scope-OrgID': 'someone-else' });
    check(other2.length === 0, 'another tenant sees none either');
}

// What Go clients send: multipart/form-data with the gzipped pprof in "profile", a
// sample_type_config naming the (otherwise mutex-like) profile "block", times in ns.
async function multipart() {
    const { Profile, StringTable, ValueType, Sample, Location, Line, Function: Fn } =
        require('pprof-format');
    const zlib = require('node:zlib');
    const st = new StringTable();
    const fns = ['main.main', 'main.worker', 'sync.(*Mutex).Lock'].map(
        (n, i) => new Fn({ id: i + 1, name: st.dedup(n), filename: st.dedup('main.go') }));
    const locs = fns.map((f, i) => new Location({ id: i + 1, line: [new Line({ functionId: f.id, line: 10 + i })] }));
    const contentions = new ValueType({ type: st.dedup('contentions'), unit: st.dedup('count') });
    const delay = new ValueType({ type: st.dedup('delay'), unit: st.dedup('nanoseconds') });
    const prof = new Profile({
        sampleType: [contentions, delay],
        sample: [new Sample({ locationId: [3, 2, 1], value: [7, 7000000] })],
        location: locs,
        function: fns,
        stringTable: st,
        periodType: contentions,
        period: 1,
    });
    const gz = zlib.gzipSync(Buffer.from(prof.encode()));
    const config = { contentions: { 'display-name': 'block_count', units: 'lock_samples' },
                     delay: { 'display-name': 'block_duration', units: 'lock_nanoseconds' } };
    const now = BigInt(Date.now()) * 1000000n;
    const params = new URLSearchParams({
        name: 'goapp{env=prod,otel.scope.name=y}', from: String(now - 10000000000n),
        until: String(now), spyName: 'gospy', sampleRate: '100', units: '', aggregationType: '' });
    const form = new FormData();
    form.append('profile', new Blob([gz]), 'profile.pprof');
    form.append('sample_type_config', new Blob([JSON.stringify(config)]), 'sample_type_config.json');
    let res = await fetch(`${base}/ingest?${params}`, { method: 'POST', body: form });
    const body = await res.text();
    check(res.status === 200 && JSON.parse(body).profile === 'block', `multipart push: 200, profile block (${res.status} ${body.trim()})`);
    const types = await getJSON('/api/v1/profile_types');
    check(types.some((t) => t.id === 'block:delay' && t.unit === 'nanoseconds'), 'type block:delay in nanoseconds');
    const sel = q('{service_name="goapp",otel.scope.name="y"}');
    const rows = tsvRows((await get(`/api/v1/render?query=${sel}&type=block:delay&format=tsv`)).body);
    check(rows.length === 3 && rows[0].fn === 'sync.(*Mutex).Lock' && rows[0].flat === 7000000,
          `render block:delay: sync.(*Mutex).Lock 7000000 (${JSON.stringify(rows[0])})`);
    // prev_profile (cumulative profiles of old clients) is refused
    form.append('prev_profile', new Blob([gz]), 'profile.pprof');
    res = await fetch(`${base}/ingest?${params}`, { method: 'POST', body: form });
    const err = await res.text();
    check(res.status === 415 && /prev_profile/.test(err), `prev_profile refused: ${res.status} ${err.trim()}`);
    // a multipart body without a profile part
    const empty = new FormData();
    empty.append('other', 'x');
    res = await fetch(`${base}/ingest?${params}`, { method: 'POST', body: empty });
    check(res.status === 400, `multipart without 'profile': 400 (${(await res.text()).trim()})`);
}

async function metric() {
    const r = await get('/metrics');
    const m = r.body.split('\n').find((x) => x.startsWith(token + ' ') || x.startsWith(token + '{'));
    console.log(m ? m.split(' ').pop() : '0');
}

({ open, auth, metric, multipart })[mode]()
    .then(() => process.exit(failures ? 1 : 0))
    .catch((e) => {
        console.error('FAIL: ' + (e.stack || e));
        process.exit(1);
    });
