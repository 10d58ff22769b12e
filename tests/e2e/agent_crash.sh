#!/bin/sh
# agent_crash.sh - kill -9 `scorch agent` at random moments while it scrapes a fake target
# (tests/e2e/fake_pprof_target.py) into its queue with the server down, and while it flushes
# to a real `scorch server`; then the same for `scorch record --push` of a busy program.
# Every profile reported queued is stored at least once, nothing is left in the queue, torn
# and damaged entries are dropped with a message, the store checks out
# (tests/e2e/agent_crash.py does the work; AGENT_CRASH_SEED=N replays other kill moments).
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd python3 "python3"
need_python sqlite3
e2e_tmp
# record --push needs perf events and a compiler: without them its part is skipped, visibly
norecord=""
if ! command -v gcc >/dev/null 2>&1; then
    norecord="gcc not found"
elif ! "$SCORCH" record -a --duration 0.1 -o /dev/null >/dev/null 2>"$tmp/need_perf.log"; then
    norecord="perf events are not available here: $(tail -n 1 "$tmp/need_perf.log")"
else
    cc_prog "$tmp/hot" "$SCORCH_SRC/tests/data/record/hot.c" $FP
fi
"$py" -B "$SCORCH_SRC/tests/e2e/agent_crash.py" "$tmp" "$norecord"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
