#!/bin/sh
# screenshot.sh - docs/img/ui.png, the README's picture of the UI, from a real run: builds
# the demo Go service (examples/demo), starts it and `scorch server` (a temporary store, free
# 127.0.0.1 ports) scraping it every 3 s, waits while profiles arrive, then has Debian's
# Chromium (through playwright-core, as the browser tests do: scripts/screenshot.mjs) open
# the explore view on the demo's CPU, timeline and flame graph, and save it as a 1280x800 PNG.
#
# usage: scripts/screenshot.sh [SCORCH [OUT]]   (defaults: build/scorch, docs/img/ui.png)
# env: SECONDS_OF_DATA (default 55), CHROMIUM (default /usr/bin/chromium)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch=$(realpath "${1:-$root/build/scorch}")
out=$(realpath -m "${2:-$root/docs/img/ui.png}")
[ -x "$scorch" ] || { echo "screenshot.sh: no scorch at $scorch (make first)" >&2; exit 1; }
command -v go >/dev/null || { echo "screenshot.sh: needs go (scripts/install-deps.sh)" >&2; exit 1; }
if [ ! -d "$root/tests/ui/node_modules/playwright-core" ]; then
    (cd "$root/tests/ui" && npm ci --no-audit --no-fund >&2)
fi

tmp=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

set -- $(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
port=$1 demo_port=$2

export HOME="${HOME:-/tmp}" GOCACHE="${GOCACHE:-$root/build/gocache}" GOFLAGS=-mod=mod GOPROXY=off
(cd "$root/examples/demo" && go build -o "$tmp/demo" .)
"$tmp/demo" -listen "127.0.0.1:$demo_port" -name demo >"$tmp/demo.log" 2>&1 &
pids="$pids $!"
cat >"$tmp/scorch.yaml" <<YAML
scrape_configs:
  - job_name: demo
    scrape_interval: 3s
    cpu_seconds: 2
    targets: ["127.0.0.1:$demo_port"]
    labels: {env: dev, service_name: demo}
YAML
"$scorch" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$port" \
    >"$tmp/server.log" 2>&1 &
pids="$pids $!"

echo "screenshot.sh: collecting ${SECONDS_OF_DATA:-55} s of the demo's profiles" >&2
sleep "${SECONDS_OF_DATA:-55}"
mkdir -p "$(dirname "$out")"
node "$root/scripts/screenshot.mjs" "http://127.0.0.1:$port/" "$out"
echo "screenshot.sh: wrote $out ($(wc -c <"$out") bytes)" >&2
