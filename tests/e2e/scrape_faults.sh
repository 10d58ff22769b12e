#!/bin/sh
# Targets that fail in every way next to a healthy one, scraped by one `scorch agent`
# (pushing to a real `scorch server`): one hangs (accepts and never answers), one returns
# garbage, one is down (connection refused), one answers slowly; the fakes are
# tests/e2e/fake_pprof_target.py on loopback ports. Checks: the healthy target's requests
# arrive on the interval grid (within 1 s; measured at the target) with no slot missed, all
# its types at once; /api/v1/targets (served by the agent with --listen) shows each
# failure's error and the slow target as up; /metrics has per-target up; a SIGHUP that drops
# the bad targets keeps the healthy one's state (counters, probed delta mode, grid). Also:
# path_prefix with a bearer token (from a file) and basic auth reach targets that need them,
# and a missing token shows as HTTP 401.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
set -- $(free_ports 9)
ok=$1 hang=$2 garbage=$3 down=$4 slow=$5 sport=$6 aport=$7 bearer=$8 basic=$9
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" --log "$tmp/arrivals.log" \
    "$ok=ok" "$hang=hang" "$garbage=garbage" "$slow=slow:1.2" >"$tmp/fake.log" 2>&1 &
pids="$pids $!"
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" --path-prefix /custom/pprof \
    --auth "Bearer t0ken" "$bearer=ok" >"$tmp/fake2.log" 2>&1 &
pids="$pids $!"
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" --auth "Basic dTpw" "$basic=ok" \
    >"$tmp/fake3.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$ok/debug/pprof/heap"
wait_http "http://u:p@127.0.0.1:$basic/debug/pprof/heap"
printf 't0ken\n' >"$tmp/token"
"$SCORCH" server --data "$tmp/data" --listen "127.0.0.1:$sport" --no-fsync >"$tmp/server.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$sport/healthz"

IV=2
config() { # the targets of the job "faults"; with a second argument, the auth jobs too
    cat >"$tmp/agent.yaml" <<EOF
remote_write: {url: "http://127.0.0.1:$sport", queue_dir: "$tmp/queue"}
scrape_configs:
  - job_name: faults
    scrape_interval: ${IV}s
    cpu_seconds: 1
    targets: [$1]
EOF
    [ $# -gt 1 ] || return 0
    cat >>"$tmp/agent.yaml" <<EOF
  - job_name: bearer
    scrape_interval: ${IV}s
    profiles: [heap, goroutine]
    path_prefix: /custom/pprof/
    bearer_token_file: $tmp/token
    targets: ["127.0.0.1:$bearer"]
  - job_name: basic
    scrape_interval: ${IV}s
    profiles: [heap]
    basic_auth: {username: u, password: p}
    targets: ["127.0.0.1:$basic"]
  - job_name: noauth
    scrape_interval: ${IV}s
    profiles: [heap]
    path_prefix: /custom/pprof
    targets: ["127.0.0.1:$bearer"]
EOF
}
all="127.0.0.1:$ok, 127.0.0.1:$hang, 127.0.0.1:$garbage, 127.0.0.1:$down, 127.0.0.1:$slow"
config "$all" auth
tstart=$(date +%s.%N)
"$SCORCH" agent --config "$tmp/agent.yaml" --listen "127.0.0.1:$aport" >"$tmp/agent.log" 2>&1 &
apid=$!
pids="$pids $apid"
wait_http "http://127.0.0.1:$aport/healthz"
sleep 15
curl -fs "http://127.0.0.1:$aport/api/v1/targets" >"$tmp/targets.json" || fail "no /api/v1/targets"
curl -fs "http://127.0.0.1:$aport/metrics" >"$tmp/metrics.txt" || fail "no /metrics"

if ! python3 - "$tmp/targets.json" "$ok" "$hang" "$garbage" "$down" "$slow" <<'EOF'
import json, sys
every = json.load(open(sys.argv[1]))
ts = [t for t in every if t["job"] == "faults"]
ok, hang, garbage, down, slow = ("127.0.0.1:" + p for p in sys.argv[2:7])
errors = []
def by(inst):
    return [t for t in ts if t["instance"] == inst]
for t in ts:
    for k in ("job", "instance", "profile", "url", "health", "last_scrape",
              "last_scrape_duration_seconds", "last_error", "next_due"):
        if k not in t:
            errors.append("%s %s: no %s" % (t["instance"], t["profile"], k))
if len(ts) != 5 * 7:
    errors.append("%d tasks, want 35" % len(ts))
for t in by(ok) + by(slow):
    if t["health"] != "up" or t["last_error"]:
        errors.append("%s %s: %s %r" % (t["instance"], t["profile"], t["health"], t["last_error"]))
for t in by(slow):
    if t["last_scrape_duration_seconds"] < 1.1:
        errors.append("slow target answered in %.2f s" % t["last_scrape_duration_seconds"])
for inst, want in ((hang, "timed out"), (garbage, "not a pprof profile"), (down, "connect")):
    for t in by(inst):
        if t["health"] != "down" or want not in t["last_error"]:
            errors.append("%s %s: %s %r (want %r)"
                          % (inst, t["profile"], t["health"], t["last_error"], want))
for t in by(ok):
    if t["profile"] in ("allocs", "mutex", "block") and t["delta"] != "subtract":
        errors.append("an older-Go target (400 on ?seconds=) should be subtracted: %s" % t["delta"])
auth = {(t["job"], t["profile"]): t for t in every if t["job"] != "faults"}
for key in (("bearer", "heap"), ("bearer", "goroutine"), ("basic", "heap")):
    t = auth.get(key)
    if not t or t["health"] != "up":
        errors.append("%s: %s" % (key, t and (t["health"], t["last_error"], t["url"])))
t = auth.get(("noauth", "heap"))
if not t or t["health"] != "down" or not t["last_error"].startswith("HTTP 401"):
    errors.append("without the token: %s" % (t and (t["health"], t["last_error"])))
if "/custom/pprof/heap" not in auth.get(("bearer", "heap"), {}).get("url", ""):
    errors.append("path_prefix: %s" % auth.get(("bearer", "heap")))
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("ok: targets show up for the healthy and slow targets, and why the others fail")
EOF
then
    cat "$tmp/targets.json"
    fail "target health"
fi
for inst in "$ok" "$slow"; do
    grep -q "^scorch_scrape_up{job=\"faults\",instance=\"127.0.0.1:$inst\",profile=\"heap\"} 1" \
        "$tmp/metrics.txt" || fail "/metrics: $inst should be up"
done
for inst in "$hang" "$garbage" "$down"; do
    grep -q "^scorch_scrape_up{job=\"faults\",instance=\"127.0.0.1:$inst\",profile=\"heap\"} 0" \
        "$tmp/metrics.txt" || fail "/metrics: $inst should be down"
done
hung='instance="127.0.0.1:'"$hang"'",profile="cpu"'
grep -q "^scorch_scrape_errors_total{job=\"faults\",$hung} [1-9]" "$tmp/metrics.txt" ||
    fail "/metrics: errors of the hanging target"

# reload without the bad targets: the healthy one keeps its state and its grid
config "127.0.0.1:$ok, 127.0.0.1:$slow"
kill -HUP $apid
sleep 6
grep -q "reloaded" "$tmp/agent.log" || fail "no reload: $(cat "$tmp/agent.log")"
curl -fs "http://127.0.0.1:$aport/api/v1/targets" >"$tmp/targets2.json" || fail "no targets"
t1=$(date +%s)
python3 - "$tmp/targets.json" "$tmp/targets2.json" "$ok" <<'EOF' || fail "state across the reload"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = "127.0.0.1:" + sys.argv[3]
errors = []
if len(b) != 14:
    errors.append("%d tasks after the reload, want 14" % len(b))
before = {t["profile"]: t for t in a if t["instance"] == ok}
for t in b:
    if t["instance"] != ok:
        continue
    p = before[t["profile"]]
    if t["scrapes"] <= p["scrapes"] or t["scrapes"] < 9:
        errors.append("%s: counters restarted (%d then %d)"
                      % (t["profile"], p["scrapes"], t["scrapes"]))
    if t["delta"] != p["delta"]:
        errors.append("%s: delta mode %r became %r" % (t["profile"], p["delta"], t["delta"]))
if errors:
    print("\n".join(errors))
    sys.exit(1)
EOF

# the healthy target's requests, as it saw them: on the grid, none missed, across the reload
python3 - "$tmp/arrivals.log" "$ok" $IV $tstart $t1 <<'EOF' || fail "the healthy target's schedule"
import sys
log, port = sys.argv[1], sys.argv[2]
iv, t0, t1 = (float(x) for x in sys.argv[3:6])
paths = {}
for line in open(log):
    t, p, path, status = line.split()
    if p == port and float(t) >= t0:  # not the test's own request that waited for it
        paths.setdefault(path, []).append(float(t))
errors = []
offsets = []
for path in ("/debug/pprof/heap", "/debug/pprof/goroutine", "/debug/pprof/threadcreate",
             "/debug/pprof/profile?seconds=1"):
    ts = paths.get(path, [])
    if len(ts) < (t1 - t0) / iv - 2:
        errors.append("%s: %d requests in %.0f s" % (path, len(ts), t1 - t0))
        continue
    off = sorted(t % iv for t in ts)[len(ts) // 2]
    dev = [abs((t - off + iv / 2) % iv - iv / 2) for t in ts]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    offsets.append(off)
    if max(dev) > 1.0:
        errors.append("%s: %.3f s off the grid" % (path, max(dev)))
    if max(gaps) > iv * 1.5:
        errors.append("%s: a slot was missed (gap of %.2f s)" % (path, max(gaps)))
    print("%s: %d requests, at most %.1f ms off the grid" % (path, len(ts), 1000 * max(dev)))
if offsets and max(offsets) - min(offsets) > 0.1:
    errors.append("one target's types should fire together: offsets %s" % offsets)
if errors:
    print("\n".join(errors))
    sys.exit(1)
EOF
echo "ok: failures show in /api/v1/targets and /metrics; the healthy target kept its grid"
