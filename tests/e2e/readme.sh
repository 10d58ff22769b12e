#!/bin/sh
# readme.sh - README.md's commands run as written: every ```sh block, in order, as one bash
# script (set -eu, pipefail: any failing command fails the test), in a fresh directory laid
# out like a built checkout (build/scorch is the binary under test, tests/data and examples
# link to the source tree). What the README's comment at its top promises, and no more:
#   - a line ending in "# not run in tests: WHY" is left out (network, root, runs forever);
#   - 4040, the port the README shows, becomes a free port;
#   - after a `build/scorch server ... &` line the script waits until /healthz answers, and
#     the server is stopped at the end;
#   - curl fails on an HTTP error (--fail-with-body), as a reader would see the error.
# Blocks of other languages (yaml, plain) are not run.
set -u
. "$SCORCH_SRC/tests/lib.sh"
: "${SCORCH:?set SCORCH to the scorch binary}"
need_cmd bash "bash"
need_cmd curl "Debian's curl"
need_cmd python3 "Debian's python3"
readme=${README:-$SCORCH_SRC/README.md}
[ -f "$readme" ] || fail "no README at $readme"

e2e_tmp
mkdir -p "$tmp/run/build" "$tmp/run/tests"
ln -s "$SCORCH" "$tmp/run/build/scorch"
ln -s "$SCORCH_SRC/tests/data" "$tmp/run/tests/data"
ln -s "$SCORCH_SRC/examples" "$tmp/run/examples"
port=$(free_ports 1)

# the script: the runnable lines of the ```sh blocks
awk -v port="$port" '
    /^```/ { if (inblock) { inblock = 0; next } if ($0 == "```sh") { inblock = 1; blocks++ } next }
    !inblock { next }
    /# not run in tests: [^ ]/ { skipped++; next }
    /# not run in tests/ { print "README: a skipped line gives no reason: " $0 > "/dev/stderr"; bad = 1; next }
    {
        gsub(/4040/, port)
        print "echo \"+ \"" quote($0)
        print
        if ($0 ~ /^build\/scorch server .*&[ \t]*(#.*)?$/) print "server_pid=$!; wait_up"
        ran++
    }
    function quote(s) { gsub(/\x27/, "\x27\\\x27\x27", s); return "\x27" s "\x27" }
    END {
        printf "README: %d sh blocks, %d lines run, %d skipped\n", blocks, ran, skipped > "/dev/stderr"
        if (bad || ran == 0) exit 1
    }' "$readme" >"$tmp/body.sh" || fail "cannot extract the README's commands"

{
    echo 'set -euo pipefail'
    echo 'server_pid='
    echo 'trap '\''[ -z "$server_pid" ] || { kill "$server_pid"; wait "$server_pid" || true; }'\'' EXIT'
    echo 'curl() { command curl --fail-with-body "$@"; }'
    echo "wait_up() { for _ in \$(seq 100); do command curl -fs -o /dev/null http://127.0.0.1:$port/healthz && return 0; kill -0 \"\$server_pid\" || return 1; sleep 0.1; done; return 1; }"
    cat "$tmp/body.sh"
} >"$tmp/readme-commands.sh"

cd "$tmp/run" || fail "no $tmp/run"
bash "$tmp/readme-commands.sh" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    tail -n 30 "$tmp/out" >&2
    fail "a README command failed (exit $rc; the last one shown above with '+')"
fi
# what the commands were meant to leave behind
for f in cpu.pb.gz cpu.svg graph.svg cpu.speedscope.json; do
    [ -s "$f" ] || fail "README's commands left no $f"
done
echo "README's commands ran"
