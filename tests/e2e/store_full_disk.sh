#!/bin/sh
# store_full_disk.sh - the embedded store on a full disk (crash safety): a small
# tmpfs as the data directory (as root). Pushes fill it and are then refused with 507, queries
# still answer, kill -9; a restart on the disk full to the last byte serves every
# acknowledged push; a store that cannot be opened for writing there (its WAL index or its
# WAL cannot be allocated) opens read-only: every acknowledged push read, from a WAL without
# its -shm too, stderr, /healthz and /metrics say so, pushes are 507 naming the full disk;
# when space returns under the running read-only server (the filler deleted) it takes
# pushes again by itself, queries answering all along, /healthz ok, the metric 0, every
# acknowledged push kept; a restart is normal, and the integrity check passes throughout
# (tests/e2e/store_full_disk.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
need_cmd sqlite3 "sqlite3 (the integrity check)"
e2e_tmp
mkdir "$tmp/small"
trap 'umount "$tmp/small" 2>/dev/null; e2e_cleanup' EXIT
mount -t tmpfs -o size=12m tmpfs "$tmp/small" 2>/dev/null ||
    skip "cannot mount a tmpfs for the full disk (needs root)"
python3 -B "$SCORCH_SRC/tests/e2e/store_full_disk.py" "$tmp" "$tmp/small"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
