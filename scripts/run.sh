#!/bin/sh
# `make run`: the server on 127.0.0.1:4040 with the embedded store in ./data, scraping the
# demo Go service (examples/demo, net/http/pprof on 127.0.0.1:6060) every 10 s with
# examples/demo/scorch.yaml. Ctrl-C stops both. SCORCH_LISTEN and DEMO_LISTEN move them,
# SCORCH_DATA moves the store.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
listen=${SCORCH_LISTEN:-127.0.0.1:4040}
demo_listen=${DEMO_LISTEN:-127.0.0.1:6060}
export HOME="${HOME:-/tmp}" GOCACHE="${GOCACHE:-$root/build/gocache}" GOFLAGS=-mod=mod GOPROXY=off
echo "scorch: building the demo service (examples/demo)" >&2
(cd examples/demo && go build -o "$root/build/demo" .)
# the demo's config, pointed at wherever the demo listens
config=build/run.yaml
sed "s/127\.0\.0\.1:6060/$demo_listen/" examples/demo/scorch.yaml >"$config"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM
build/demo -listen "$demo_listen" -name demo &
pids="$pids $!"
build/scorch server --config "$config" --data "${SCORCH_DATA:-./data}" --listen "$listen" &
pids="$pids $!"
echo "scorch: UI at http://$listen (the demo is scraped every 10 s; targets at" \
    "http://$listen/?view=targets; Ctrl-C stops)" >&2
wait
