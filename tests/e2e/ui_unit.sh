#!/bin/sh
# The web UI's pure logic (flame graph layout, hit-testing, search share, sandwich, URL
# state, formatting, timeline scales, upload detection) under `node --test`: no browser.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd node "Node.js"
cd "$SCORCH_SRC" || fail "no source tree"
# the testdata path lets the upload-format tests use real files when they are there
SCORCH_TESTDATA="${SCORCH_TESTDATA:-}" node --test tests/ui/*.test.mjs || fail "UI unit tests failed"
