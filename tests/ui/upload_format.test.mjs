// upload_format.test.mjs - which /ingest format an uploaded file is, and its label name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { detectFormat, isGzip, labelSafeName, sniffFormat } from "../../ui/js/upload-format.mjs";
import { typeCandidates } from "../../ui/js/upload.mjs";

const enc = (s) => new TextEncoder().encode(s);
const PERF = `xz 1234/1235 [001] 12345.678901: 10101010 cpu-clock:
\t    4f2a10 lzma_main+0x20 (/usr/lib/liblzma.so.5)
\t    7f00 __libc_start_main+0xf3 (/usr/lib/libc.so.6)

`;
const FOLDED = "main;a;b 10\nmain;c 3\n";
// a pprof's first bytes: sample_type {type: 1, unit: 2}, then a sample
const PPROF = new Uint8Array([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x04, 0x08, 0x01, 0x10, 0x0a]);

test("sniffing raw bytes", () => {
    assert.equal(sniffFormat(enc(PERF)), "perf_script");
    assert.equal(sniffFormat(enc("app 99 123.456: cpu-clock:\n")), "perf_script");
    assert.equal(sniffFormat(enc("PERFILE2\x68\0\0\0\0\0\0\0")), "perf_data");
    assert.equal(sniffFormat(new Uint8Array([0x46, 0x4c, 0x52, 0, 0, 2, 0, 1])), "jfr");
    assert.equal(sniffFormat(enc("heap profile:   1:   2 [   3:   4] @ heapprofile\n")), "legacy");
    assert.equal(sniffFormat(enc("# a comment\n--- contention:\ncycles/second=1000\n")), "legacy");
    assert.equal(sniffFormat(enc("goroutine profile: total 4\n1 @ 0x1 0x2\n")), "legacy");
    const gperf = new Uint8Array(40);
    gperf[8] = 3;
    gperf[24] = 100;
    assert.equal(sniffFormat(gperf), "legacy");
    assert.equal(sniffFormat(enc(FOLDED)), "folded");
    assert.equal(sniffFormat(enc("")), "folded");
    assert.equal(sniffFormat(PPROF), "pprof");
    assert.equal(sniffFormat(enc('{"nodes":[{"id":1,"callFrame":{}}]}')), "cpuprofile");
    assert.equal(sniffFormat(enc(' [ {"name":"ProfileChunk"}]')), "cpuprofile");
    assert.equal(sniffFormat(enc('{"$schema":"https://www.speedscope.app/file-format-schema.json"}')),
        "speedscope");
    assert.equal(sniffFormat(enc('{"shared":{"frames":[]},"profiles":[]}')), "speedscope");
    assert.equal(sniffFormat(enc("[unknown];main 3\n")), "folded");
    assert.ok(isGzip(gzipSync(enc(FOLDED))));
    assert.ok(!isGzip(enc(FOLDED)));
});

test("detection: a pprof name decides, otherwise the (gunzipped) content", async () => {
    assert.equal(await detectFormat("cpu.pb.gz", enc(FOLDED)), "pprof");
    assert.equal(await detectFormat("x.pprof", PPROF), "pprof");
    assert.equal(await detectFormat("profile", PPROF), "pprof");
    assert.equal(await detectFormat("out.txt", enc(PERF)), "perf_script");
    assert.equal(await detectFormat("stacks.folded", enc(FOLDED)), "folded");
    assert.equal(await detectFormat("stacks.gz", gzipSync(enc(FOLDED))), "folded");
    assert.equal(await detectFormat("perf.gz", gzipSync(enc(PERF))), "perf_script");
    assert.equal(await detectFormat("cpu", gzipSync(PPROF)), "pprof");
    assert.equal(await detectFormat("CPU.1.cpuprofile", enc('{"nodes":[]}')), "cpuprofile");
    assert.equal(await detectFormat("p.json.gz", gzipSync(enc('{"shared":{},"profiles":[]}'))),
        "speedscope");
    assert.equal(await detectFormat("broken", new Uint8Array([0x1f, 0x8b, 1, 2, 3])), "pprof");
});

test("real test data, when present", async (t) => {
    const dir = process.env.SCORCH_TESTDATA;
    if (!dir || !existsSync(join(dir, "pprof"))) {
        t.skip("../shared/testdata is absent");
        return;
    }
    const pb = readFileSync(join(dir, "pprof/cpu-sort.pb.gz"));
    assert.equal(await detectFormat("upload.bin", new Uint8Array(pb)), "pprof");
    const perf = readFileSync(join(dir, "perf/system-wide-go-xz.perf.txt"));
    assert.equal(await detectFormat("capture.txt", new Uint8Array(perf)), "perf_script");
});

test("file names as label values", () => {
    assert.equal(labelSafeName("cpu.pb.gz"), "cpu.pb.gz");
    assert.equal(labelSafeName('a "b", {c}.txt'), "a _b__ _c_.txt");
    assert.equal(labelSafeName("C:\\tmp\\x.pb"), "x.pb");
    assert.equal(labelSafeName("x".repeat(500)).length, 200);
    assert.equal(labelSafeName("a\nb"), "a_b");
});

test("which type of an upload to show first", () => {
    const types = [
        { id: "heap:alloc_objects", profile: "heap", sample_type: "alloc_objects" },
        { id: "heap:inuse_space", profile: "heap", sample_type: "inuse_space" },
        { id: "heap:alloc_space", profile: "heap", sample_type: "alloc_space" },
        { id: "cpu:samples", profile: "cpu", sample_type: "samples" },
        { id: "cpu:cpu", profile: "cpu", sample_type: "cpu" },
    ];
    assert.deepEqual(typeCandidates(types, "heap").map((t) => t.id),
        ["heap:inuse_space", "heap:alloc_space", "heap:alloc_objects"]);
    assert.deepEqual(typeCandidates(types, "cpu").map((t) => t.id), ["cpu:cpu", "cpu:samples"]);
    assert.deepEqual(typeCandidates(types, "mutex"), []);
});
