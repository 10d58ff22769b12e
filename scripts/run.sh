#!/bin/sh
# `make run`: the server on 127.0.0.1:4040 with the embedded store in ./data, and the demo
# Go service (examples/demo) pushing its profiles to it. Ctrl-C stops both.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
listen=${SCORCH_LISTEN:-127.0.0.1:4040}
demo_listen=${DEMO_LISTEN:-127.0.0.1:6060}
export HOME="${HOME:-/tmp}" GOCACHE="${GOCACHE:-$root/build/gocache}" GOFLAGS=-mod=mod GOPROXY=off
echo "scorch: building the demo service (examples/demo)" >&2
(cd examples/demo && go build -o "$root/build/demo" .)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM
build/scorch server --data ./data --listen "$listen" &
pids="$pids $!"
# wait until it answers, so the demo's first push lands
i=0
until curl -fs "http://$listen/healthz" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "scorch: the server did not start" >&2; exit 1; }
    sleep 0.1
done
build/demo -listen "$demo_listen" -push "http://$listen" -name demo &
pids="$pids $!"
echo "scorch: UI at http://$listen (the demo pushes every 10 s; Ctrl-C stops)" >&2
wait
