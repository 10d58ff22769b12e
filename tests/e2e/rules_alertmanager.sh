#!/bin/sh
# rules_alertmanager.sh - alert rules with a real Alertmanager and a webhook: a planted step
# in one function fires, with its labels and diff link, and is resolved once it leaves the
# window; an unchanged service never alerts (tests/e2e/rules_alertmanager.py does the work;
# skipped without Debian's prometheus-alertmanager).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/rules_alertmanager.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
