// app.js - a Node.js program with a known hot function (burnCpu) and a known allocator
// (allocateLots), profiled by the real Pyroscope client and pushed to a scorch server.
// Usage: node app.js SERVER_URL SECONDS [TOKEN] [TENANT]
'use strict';
const Pyroscope = require('@pyroscope/nodejs');

const [server, seconds = '4', token, tenant] = process.argv.slice(2);
if (!server) {
    console.error('usage: node app.js SERVER_URL SECONDS [TOKEN] [TENANT]');
    process.exit(2);
}

const config = {
    serverAddress: server,
    appName: 'nodeapp',
    tags: { region: 'eu', 'otel.scope.name': 'x' },
    flushIntervalMs: 1000,
    // sample often so a few seconds give clear profiles
    wall: { samplingIntervalMicros: 1000, collectCpuTime: true },
    heap: { samplingIntervalBytes: 16 * 1024 },
};
if (token) config.authToken = token;
if (tenant) config.tenantID = tenant;
Pyroscope.init(config);
Pyroscope.start();

function burnCpu(ms) {
    const end = Date.now() + ms;
    let x = 0;
    while (Date.now() < end)
        for (let i = 0; i < 10000; i++) x = (x * 31 + i) % 1000003;
    return x;
}

const kept = [];
function allocateLots(n) {
    // live objects that stay: the heap profile shows what is still allocated
    const chunk = [];
    for (let i = 0; i < n; i++) chunk.push({ i, s: 'v' + i, a: new Array(16).fill(i) });
    kept.push(chunk);
    if (kept.length > 50) kept.shift();
}

const deadline = Date.now() + Number(seconds) * 1000;
function tick() {
    if (Date.now() >= deadline) {
        // stop() pushes the last wall profile; let the last heap push finish too
        Pyroscope.stop().then(() => setTimeout(() => process.exit(0), 300));
        return;
    }
    burnCpu(40);
    allocateLots(2000);
    setImmediate(tick);
}
tick();
