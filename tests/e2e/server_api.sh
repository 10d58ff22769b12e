#!/bin/sh
# server_api.sh - the real `scorch server` over HTTP: every test-data file pushed through
# POST /ingest, every endpoint of docs/api.md checked against go tool pprof -raw,
# scorch top/heatmap/convert of the same files; selectors, tenants, bearer-token auth,
# /metrics counters and a restart on the same data (tests/e2e/server_api.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/server_api.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
