#!/bin/sh
# pyroscope_nodejs.sh - the real Pyroscope Node.js client (@pyroscope/nodejs 0.6.4, pinned in
# tests/pyroscope) profiles a program with a known hot function and pushes to scorch:
#   1. open server: the series {service_name="nodeapp"} has the client's tags as labels
#      (dotted ones too), the types are wall:{wall,cpu,samples} and heap:inuse_*, render
#      (tsv, json) puts burnCpu on top of the time profiles and allocateLots of the heap;
#   2. a server with auth.token_file: the client's authToken and tenantID push into that
#      tenant, other tenants and token-less requests see nothing;
#   3. the same server refuses a client with the wrong token (nothing stored);
# and a Go client's multipart push (sample_type_config names a block profile; prev_profile
# is refused).
# Installs the client there with npm on first use; skips (77) without node/npm or npm.
set -eu

: "${SCORCH:?set SCORCH to the scorch binary}"
src=${SCORCH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/lib.sh"
need_cmd node "Node.js runs the Pyroscope client; scripts/install-deps.sh installs it"
need_cmd npm "npm installs the Pyroscope client; scripts/install-deps.sh installs it"

dir="$src/tests/pyroscope"
if [ ! -d "$dir/node_modules/@pyroscope/nodejs" ]; then
    echo "installing @pyroscope/nodejs in tests/pyroscope ..." >&2
    (cd "$dir" && npm install --no-audit --no-fund >&2) ||
        skip "cannot install @pyroscope/nodejs from the npm registry"
fi
# the native profiler must load on this machine (it ships prebuilt binaries)
(cd "$dir" && node -e "require('@pyroscope/nodejs')") ||
    skip "@pyroscope/nodejs does not load with this Node.js ($(node --version))"

tmp=$(mktemp -d /tmp/scorch-pyro-XXXXXX)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# start_server NAME [ARGS...]: starts scorch on a free port; sets pid and url
start_server() {
    name=$1
    shift
    "$SCORCH" server --data "$tmp/$name" --listen 127.0.0.1:0 "$@" 2>"$tmp/$name.log" &
    pid=$!
    i=0
    while ! grep -q 'listening on' "$tmp/$name.log" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 100 ] || fail "server did not start: $(cat "$tmp/$name.log")"
        kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/$name.log")"
        sleep 0.1
    done
    url=$(sed -n 's|.*listening on \(http://[0-9.:]*\).*|\1|p' "$tmp/$name.log")
}

stop_server() {
    kill "$pid"
    wait "$pid" || fail "server did not stop cleanly: $(cat "$tmp/$1.log")"
    pid=""
}

cd "$dir"

# 1. no auth: pushes every second for 4 s (wall with cpu time, heap), then checks
start_server open
DEBUG=pyroscope node app.js "$url" 4 2>"$tmp/app.log" || fail "app.js failed: $(cat "$tmp/app.log")"
if grep -q 'rejected' "$tmp/app.log"; then
    fail "scorch rejected pushes: $(grep -A1 rejected "$tmp/app.log")"
fi
n=$(node check.js metric "$url" scorch_ingest_profiles_total)
[ "$n" -ge 4 ] || fail "only $n pushes were stored (want >= 4)"
echo "stored $n pushes" >&2
node check.js open "$url" || fail "checks on the pushed data failed"
# what the Go client sends: multipart with sample_type_config (pprof built with pprof-format,
# which the Node.js client depends on)
node check.js multipart "$url" || fail "multipart checks failed"
stop_server open

# 2. auth.token_file, the client's authToken and tenantID (X-Scope-OrgID)
token=s3cr3t-$$
printf '%s\n' "$token" >"$tmp/token"
printf 'auth: {token_file: %s}\n' "$tmp/token" >"$tmp/auth.yaml"
start_server auth --config "$tmp/auth.yaml"
DEBUG=pyroscope node app.js "$url" 3 "$token" acme 2>"$tmp/app.log" ||
    fail "app.js failed: $(cat "$tmp/app.log")"
if grep -q 'rejected' "$tmp/app.log"; then
    fail "scorch rejected pushes with the right token: $(grep -A1 rejected "$tmp/app.log")"
fi
node check.js auth "$url" "$token" acme || fail "auth/tenant checks failed"

# 3. a wrong token: every push refused with 401, nothing more stored
before=$(node check.js metric "$url" scorch_ingest_profiles_total)
DEBUG=pyroscope node app.js "$url" 2 "wrong-$token" acme 2>"$tmp/app.log" ||
    fail "app.js failed: $(cat "$tmp/app.log")"
grep -q 'rejected data ingest: HTTP 401' "$tmp/app.log" ||
    fail "pushes with a wrong token were not refused with 401: $(cat "$tmp/app.log")"
after=$(node check.js metric "$url" scorch_ingest_profiles_total)
[ "$after" = "$before" ] || fail "pushes with a wrong token were stored ($before -> $after)"
echo "ok: a wrong token: pushes refused with 401, nothing stored" >&2
stop_server auth
echo "pyroscope_nodejs: ok" >&2
