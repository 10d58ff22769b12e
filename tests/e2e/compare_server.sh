#!/bin/sh
# compare_server.sh - the diff API's statistics on a real leak: a Go program built here
# leaks from main.leak while main.steady holds a fixed buffer; the server scrapes its heap
# every second, and the diff of the first seconds against the last ones says main.leak
# grew significantly and main.steady did not (tests/e2e/compare_server.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
python3 -B "$SCORCH_SRC/tests/e2e/compare_server.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { tail -n 20 "$tmp"/*.log >&2; }
exit "$rc"
