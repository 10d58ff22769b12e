#!/bin/sh
# svg_browser.sh - the standalone SVG flame graph really works in a browser: runs
# tests/browser/svg_flamegraph.test.mjs in headless Chromium (hover, zoom, search, URL
# state, no script errors). Installs playwright-core there on first use.
set -eu

: "${SCORCH:?set SCORCH to the scorch binary}"
src=${SCORCH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    echo "skip: no chromium at $chromium (scripts/install-deps.sh installs it)" >&2
    exit 77
fi
for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "skip: $tool is not installed" >&2
        exit 77
    fi
done

cd "$src/tests/browser"
if [ ! -d node_modules/playwright-core ]; then
    echo "installing playwright-core in tests/browser ..." >&2
    if ! npm ci --no-audit --no-fund >&2; then
        echo "skip: cannot install playwright-core from the npm registry" >&2
        exit 77
    fi
fi
SCORCH=$SCORCH CHROMIUM=$chromium exec node --test svg_flamegraph.test.mjs
