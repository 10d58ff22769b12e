#!/bin/sh
# ui_browser.sh - the web UI, for real: runs the UI's unit tests (node --test tests/ui/*.test.mjs),
# then starts `scorch server` on a fresh store, pushes the shared pprof test data and a Go
# program's profiles through /ingest, and drives the page in headless Chromium
# (tests/ui/*.e2e.mjs, one file after another, sharing tests/ui/browser-lib.mjs): every
# data-testid hook of the explore view, zoom, search,
# brushing, upload, the scrape targets page (the server scrapes tests/e2e/fake_pprof_target.py:
# one healthy target, one answering garbage, one down), the heatmap of a perf capture with
# periodic bursts (tests/data/bursts; skipped without perf events), the call graph, the
# source view (the Go program's directory is a source root), single profiles, the diff
# view (service "cmp": one function grows significantly between two sets of six pushes), the
# Changes view, functions over time and deploy markers (watch.e2e.mjs pushes its own)...
# Screenshots go to $SCORCH_BUILD/ui-artifacts. Installs playwright-core in tests/ui on
# first use.
set -u
. "$SCORCH_SRC/tests/lib.sh"
: "${SCORCH:?set SCORCH to the scorch binary}"
need_cmd node "Debian's nodejs (scripts/install-deps.sh installs it)"

# the pure logic first: it needs nothing but node
SCORCH_TESTDATA=${SCORCH_TESTDATA:-} node --test "$SCORCH_SRC"/tests/ui/*.test.mjs >&2 ||
    fail "UI unit tests (node --test tests/ui/*.test.mjs)"

chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "no chromium at $chromium (scripts/install-deps.sh installs it)"
need_cmd npm "Debian's npm"
need_cmd curl "Debian's curl"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd python3 "Debian's python3"
need_testdata pprof

cd "$SCORCH_SRC/tests/ui" || fail "no tests/ui"
if [ ! -d node_modules/playwright-core ]; then
    echo "installing playwright-core in tests/ui ..." >&2
    npm ci --no-audit --no-fund >&2 || skip "cannot install playwright-core from the npm registry"
fi

tmp=$(mktemp -d)
server_pid= fake_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# scrape targets: a healthy one, one that answers garbage, one nobody listens on
set -- $(free_ports 3)
okp=$1 badp=$2 downp=$3
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" "$okp=ok" "$badp=garbage" 2>"$tmp/fake.log" &
fake_pid=$!
# the Go program's source tree is the source view's root
mkdir "$tmp/goprog"
cat >"$tmp/scorch.yaml" <<EOF
server:
  source_roots: ["$tmp/goprog"]
scrape_configs:
  - job_name: fakejob
    scrape_interval: 2s
    profiles: [goroutine, threadcreate]
    targets: ["127.0.0.1:$okp", "127.0.0.1:$badp", "127.0.0.1:$downp"]
    labels: {team: ui}
EOF
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen 127.0.0.1:0 \
    2>"$tmp/server.log" &
server_pid=$!
url=
for _ in $(seq 100); do
    url=$(sed -n 's/^scorch: listening on \(http:[^ ]*\).*/\1/p' "$tmp/server.log")
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; fail "the server exited"; }
    sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/server.log" >&2; fail "the server did not say where it listens"; }

# push FILE NAME(url-encoded) FROM [FORMAT]
push() {
    code=$(curl -s -o "$tmp/push.out" -w '%{http_code}' --data-binary "@$1" \
        "$url/ingest?name=$2&format=${4:-pprof}&from=$3") || fail "cannot push $1"
    [ "$code" = 200 ] || { cat "$tmp/push.out" >&2; fail "push of $1 answered $code"; }
}
now=$(date +%s)
# service "app": three benchmarks' CPU profiles every 10 minutes over the last hour
for i in 0 1 2 3 4 5; do
    for b in sort regexp strconv; do
        push "$SCORCH_TESTDATA/pprof/cpu-$b.pb.gz" "app.cpu%7Benv%3Dtest%2Cbench%3D$b%7D" \
            $((now - 3300 + i * 600))
    done
done
push "$SCORCH_TESTDATA/pprof/mem-sort.pb.gz" "app%7Benv%3Dtest%2Cbench%3Dsort%7D" $((now - 900))

# service "goprog": a Go program with a known hot spot (main.burn), profiled here
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
cp "$SCORCH_SRC"/tests/data/goprog/* "$tmp/goprog/"
(cd "$tmp/goprog" && go build -o prog .) || fail "go build of tests/data/goprog failed"
"$tmp/goprog/prog" "$tmp/goprog" || fail "the Go program failed"
push "$tmp/goprog/cpu.pb.gz" "goprog.cpu%7Benv%3Dtest%7D" $((now - 600))
push "$tmp/goprog/mem.pb.gz" "goprog%7Benv%3Dtest%7D" $((now - 600))

# service "cmp", for the diff view: folded CPU samples, 6 pushes a side a minute apart
# with a little random noise per push (per push and per function, about 5% each); the
# base (load="low") 300 main.steady, 100 main.grow, 100 main.fade, 100 runtime.gcDrain a
# push; the new side (load="high", 25 minutes later) 250, 180, 35, 35: main.grow's share
# grows from 17% to 36%, main.steady's stays at 50%, the totals differ by a sixth
python3 - "$tmp/cmp" <<'PY' || fail "cannot write the diff view's profiles"
import os, random, sys
d = sys.argv[1]
os.makedirs(d)
r = random.Random(9)
sides = {"base": [300, 100, 100, 100], "new": [250, 180, 35, 35]}
stacks = ["main.main;main.steady", "main.main;main.grow", "main.main;main.fade",
          "runtime.gcBgMarkWorker;runtime.gcDrain"]
for side, vals in sides.items():
    for i in range(6):
        f = 1 + r.gauss(0, 0.05)
        with open(os.path.join(d, f"{side}{i}.folded"), "w") as out:
            for s, v in zip(stacks, vals):
                out.write(f"{s} {max(1, round(v * f * (1 + r.gauss(0, 0.05))))}\n")
PY
for i in 0 1 2 3 4 5; do
    push "$tmp/cmp/base$i.folded" "cmp.cpu%7Bload%3Dlow%7D" $((now - 3000 + i * 60)) folded
    push "$tmp/cmp/new$i.folded" "cmp.cpu%7Bload%3Dhigh%7D" $((now - 1500 + i * 60)) folded
done
# service "synth": a made-up perf script of 4 s at 500 Hz, the first 200 ms of every second
# in hot_loop, the rest in idle_wait: the heatmap's Compare link without perf events
python3 - >"$tmp/synth.perf.txt" <<'PY' || fail "cannot write the synthetic perf script"
for i in range(2000):
    leaf = "hot_loop" if i % 500 < 100 else "idle_wait"
    print(f"synth  4242 [000] {1000 + i * 0.002:.6f}:    2000000 cpu-clock:pppH: ")
    print(f"\t    5555000{i % 7:05x} {leaf}+0x1{i % 5} (/opt/synth)")
    print("\t    555500010000 run+0x20 (/opt/synth)")
    print("\t    555500020000 main+0x30 (/opt/synth)\n")
PY
push "$tmp/synth.perf.txt" "synth%7Benv%3Dtest%7D" $((now - 240)) perf_script

# service "bursts": perf's samples of a C program busy 200 ms of every second
# (tests/data/bursts), for the heatmap; skipped (and said so) without perf events
bursts=no
if command -v perf >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&
    cc -O1 -g -fno-omit-frame-pointer -o "$tmp/bursts" "$SCORCH_SRC/tests/data/bursts/bursts.c"; then
    # at the highest priority (when allowed: CI runs as root), so that a loaded machine still
    # gives the program the CPU during its bursts, which are times of the clock
    if perf record -q -e cpu-clock -F 499 -g -k CLOCK_MONOTONIC -o "$tmp/bursts.data" -- \
        nice -n -20 "$tmp/bursts" 5 2>"$tmp/perf.log" &&
        perf script -i "$tmp/bursts.data" >"$tmp/bursts.perf.txt" 2>>"$tmp/perf.log" &&
        [ -s "$tmp/bursts.perf.txt" ]; then
        push "$tmp/bursts.perf.txt" "bursts%7Benv%3Dtest%7D" $((now - 300)) perf_script
        bursts=yes
    else
        echo "SKIP (part): perf events unavailable, no heatmap capture: $(head -3 "$tmp/perf.log")" >&2
    fi
else
    echo "SKIP (part): no perf or no C compiler, no heatmap capture" >&2
fi

artifacts=${SCORCH_BUILD:-$SCORCH_SRC/build}/ui-artifacts
mkdir -p "$artifacts"
SCORCH_URL="$url/" ARTIFACTS=$artifacts CHROMIUM=$chromium \
    UPLOAD_FILE="$SCORCH_TESTDATA/pprof/mem-regexp.pb.gz" BURSTS=$bursts CMP_NOW=$now \
    TARGET_OK="127.0.0.1:$okp" TARGET_BAD="127.0.0.1:$badp" TARGET_DOWN="127.0.0.1:$downp" \
    node --test --test-concurrency=1 ./*.e2e.mjs >&2 ||
    { tail -20 "$tmp/server.log" >&2; fail "browser tests (screenshots in $artifacts)"; }
echo "ok: the web UI works in Chromium; screenshots in $artifacts"
