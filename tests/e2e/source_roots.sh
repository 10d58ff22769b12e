#!/bin/sh
# source_roots.sh - the source view (GET /api/v1/source) reads files only inside the
# configured server.source_roots: a pushed profile naming `..` paths, absolute paths, a
# symlinked file or directory pointing out of the root, or /proc/self/cwd/.. gets its
# numbers without text, and no byte of the outside file ever appears in an answer, while
# files inside (also through a symlink that stays inside, or an absolute path under the
# root's name) are shown (tests/e2e/source_roots.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
e2e_tmp
python3 -B "$SCORCH_SRC/tests/e2e/source_roots.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
