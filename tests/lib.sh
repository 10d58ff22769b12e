# lib.sh - helpers for the shell tests (sourced). Exit 77 = skipped, as CTest is told.
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
skip() {
    echo "SKIP: $*" >&2
    exit 77
}
# need_testdata SUBDIR: skip visibly when ../shared/testdata (or a part of it) is absent.
need_testdata() {
    [ -n "${SCORCH_TESTDATA:-}" ] && [ -d "$SCORCH_TESTDATA/$1" ] ||
        skip "../shared/testdata/$1 is absent"
}
# need_cmd NAME WHAT: skip when a tool is missing (scripts/install-deps.sh installs them).
need_cmd() {
    command -v "$1" >/dev/null 2>&1 || skip "$1 not found ($2)"
}

# need_python MODULE...: sets $py to a python3 that imports every module (the one on PATH,
# else Debian's /usr/bin/python3, where scripts/install-deps.sh installs python3-* packages);
# fails when none does, since make test installs them.
need_python() {
    py=""
    for p in python3 /usr/bin/python3; do
        if "$p" -c "import $(echo "$@" | tr ' ' ',')" 2>/dev/null; then
            py=$p
            return 0
        fi
    done
    fail "no python3 imports $* (scripts/install-deps.sh installs Debian's python3 packages)"
}

# ---- for tests that start processes (tests/e2e) ----

# e2e_tmp: a fresh directory in $tmp and an empty $pids; on exit every process listed in
# $pids is killed and $tmp removed (kept, and said so, with KEEP=1).
e2e_tmp() {
    tmp=$(mktemp -d)
    pids=""
    trap e2e_cleanup EXIT
}
e2e_cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    if [ -n "${KEEP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
# clickhouse_py NAME: runs tests/e2e/NAME.py TMPDIR, which starts clickhouse-servers under
# $tmp/ch in their own sessions: they are stopped on exit too, whatever happens; on failure the
# logs' tails are shown. Skips without clickhouse-server.
clickhouse_py() {
    need_cmd python3 "python3"
    [ -x /usr/sbin/clickhouse-server ] ||
        skip "clickhouse-server is not installed (scripts/install-deps.sh test)"
    e2e_tmp
    trap 'python3 -B "$SCORCH_SRC/tests/e2e/clickhouse_common.py" down "$tmp/ch" 2>/dev/null
          e2e_cleanup' EXIT
    python3 -B "$SCORCH_SRC/tests/e2e/$1.py" "$tmp"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] ||
        tail -n 20 "$tmp"/*.log "$tmp"/ch/*/log/*.err.log >&2
    exit "$rc"
}
# free_ports N: N distinct free loopback ports, space separated.
free_ports() {
    python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
# wait_http URL [any]: until URL answers 2xx (with "any": any HTTP answer), 10 s at most.
wait_http() {
    i=0
    while :; do
        if [ "${2:-}" = any ]; then
            code=$(curl -s -o /dev/null -w '%{http_code}' "$1")
            [ "$code" != 000 ] && break
        else
            curl -fs -o /dev/null "$1" && break
        fi
        i=$((i + 1))
        [ $i -lt 100 ] || fail "$1 did not come up"
        sleep 0.1
    done
}
