#!/usr/bin/env node
// validate.js - checks speedscope files against speedscope's own file-format schema
// (from the speedscope npm package) plus what the schema cannot say: strict UTF-8, frame
// indexes in range, one weight per sample, activeProfileIndex in range.
// Usage: node validate.js FILE...   Exit 0 when every file passes, 1 otherwise.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release',
                             'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
const validate = ajv.compile(schema);

function check(file) {
    const bytes = fs.readFileSync(file);
    let text;
    try {
        text = new TextDecoder('utf-8', {fatal: true}).decode(bytes);
    } catch (e) {
        return ['not valid UTF-8'];
    }
    let doc;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        return ['not JSON: ' + e.message];
    }
    if (!validate(doc))
        return validate.errors.slice(0, 10).map(e => `${e.instancePath} ${e.message}`);
    const errs = [];
    const nframes = doc.shared.frames.length;
    if (doc.profiles.length === 0)
        errs.push('no profiles');
    if (!(doc.activeProfileIndex >= 0 && doc.activeProfileIndex < doc.profiles.length))
        errs.push(`activeProfileIndex ${doc.activeProfileIndex} of ${doc.profiles.length}`);
    const used = new Uint8Array(nframes);
    doc.profiles.forEach((p, i) => {
        if (p.type !== 'sampled')
            errs.push(`profile ${i}: type ${p.type}`);
        if (p.samples.length !== p.weights.length)
            errs.push(`profile ${i}: ${p.samples.length} samples, ${p.weights.length} weights`);
        for (const s of p.samples)
            for (const f of s) {
                if (!Number.isInteger(f) || f < 0 || f >= nframes) {
                    errs.push(`profile ${i}: frame index ${f} of ${nframes}`);
                    return;
                }
                used[f] = 1;
            }
        if (p.weights.some(w => w === 0))
            errs.push(`profile ${i}: a zero weight`);
    });
    if (used.some(u => !u))
        errs.push('a shared frame no sample uses');
    return errs;
}

let failed = 0;
for (const file of process.argv.slice(2)) {
    const errs = check(file);
    if (errs.length) {
        failed++;
        console.error(`${file}: INVALID`);
        for (const e of errs)
            console.error(`  ${e}`);
    } else {
        console.log(`${file}: valid`);
    }
}
process.exit(failed ? 1 : 0);
