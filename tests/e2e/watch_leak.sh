#!/bin/sh
# watch_leak.sh - a Go program built here (tests/data/leakprog) leaks heap in one function
# while another holds a steady buffer; `scorch server` scrapes its heap every second for
# about a minute, and /api/v1/changes finds the leak by itself: leakSessions a trend of
# heap in use whose slope is the leak's rate, refreshBuffer not reported. Needs no ../shared.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
export HOME="${HOME:-/tmp}" GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPROXY=off
(cd "$SCORCH_SRC/tests/data/leakprog" && go build -o "$tmp/leakprog" .) || fail "go build failed"
set -- $(free_ports 2)
tport=$1 sport=$2
"$tmp/leakprog" -listen "127.0.0.1:$tport" >"$tmp/prog.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$tport/debug/pprof/"
cat >"$tmp/scorch.yaml" <<YAML
scrape_configs:
  - job_name: leaky
    scrape_interval: 1s
    profiles: [heap]
    targets: ["127.0.0.1:$tport"]
    labels: {service_name: leaky}
YAML
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$sport" \
    --no-fsync >"$tmp/server.log" 2>&1 &
pids="$pids $!"
S="http://127.0.0.1:$sport"
wait_http "$S/healthz"
start=$(date +%s)
sleep 64
python3 - "$S" "$start" <<'PY' || { tail -20 "$tmp/server.log" >&2; fail "the leak was not found as it is"; }
import json, sys, time, urllib.parse, urllib.request
server, start = sys.argv[1], int(sys.argv[2])
def get(path, **q):
    with urllib.request.urlopen(server + path + "?" + urllib.parse.urlencode(q)) as r:
        return json.loads(r.read())
q = dict(type="heap:inuse_space", query='{service_name="leaky"}',
         step="2s", **{"from": str(start + 2), "until": str(int(time.time()))})
d = get("/api/v1/changes", **q)
found = {c["function"]: c for c in d["changes"]}
print("findings:", {f: (c["kind"], c.get("slope_per_hour")) for f, c in found.items()})
assert d["unit"] == "bytes" and d["aggregation"] == "average", d["unit"]
leak = found.get("main.leakSessions")
assert leak and leak["kind"] == "trend", "the leak is a trend: %s" % found
# 640 KiB a second is 2.25 GiB an hour; the heap profile samples allocations (a few KiB apart)
want = 640 * 1024 * 3600
assert abs(leak["slope_per_hour"] - want) < 0.25 * want, "its slope: %s vs %d" % (leak["slope_per_hour"], want)
assert "main.refreshBuffer" not in found, "the steady buffer is not a change: %s" % found["main.refreshBuffer"]
print("ok")
PY
echo "ok: a leak scraped for real is found by itself, at its rate; the steady holder is not"
