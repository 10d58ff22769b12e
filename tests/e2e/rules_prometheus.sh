#!/bin/sh
# rules_prometheus.sh - record rules as a real Prometheus reads them: every value it scraped
# from scorch's /metrics is the timeline's for the same step (tests/e2e/rules_prometheus.py
# does the work; skipped without Debian's prometheus).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/rules_prometheus.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
