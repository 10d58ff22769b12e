#!/bin/sh
# Scraping a real Go service built here (tests/data/scrapeprog: net/http/pprof and a known
# workload) with `scorch agent` pushing to a real `scorch server`, then with `scorch agent
# --data` writing into a store directly. Checks: every profile type lands with the series
# labels; the known hot function tops cpu, the known allocator tops allocs:alloc_space and
# the growing cache heap:inuse_space; each allocs profile holds one interval's allocations
# (the allocator's known rate times the interval, not the running total), both from the
# target's own ?seconds= delta (job gosvc) and from the scraper's subtraction (job gosub);
# across a restart of the target no value is negative and the subtraction starts a new
# baseline. Needs no ../shared.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
export HOME="${HOME:-/tmp}" GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPROXY=off

(cd "$SCORCH_SRC/tests/data/scrapeprog" && go build -o "$tmp/prog" .) || fail "go build failed"
RATE=4194304 # bytes per second main.knownAllocator allocates
IV=5         # scrape interval, s
set -- $(free_ports 2)
tport=$1 sport=$2
start_target() {
    # (asyncpreemptoff: see tests/data/scrapeprog)
    GODEBUG=asyncpreemptoff=1 "$tmp/prog" -listen "127.0.0.1:$tport" -alloc-rate $RATE >>"$tmp/prog.log" 2>&1 &
    tpid=$!
    pids="$pids $tpid"
    wait_http "http://127.0.0.1:$tport/debug/pprof/"
}
start_target
"$SCORCH" server --data "$tmp/data" --listen "127.0.0.1:$sport" --no-fsync >"$tmp/server.log" 2>&1 &
spid=$!
pids="$pids $spid"
wait_http "http://127.0.0.1:$sport/healthz"

cat >"$tmp/agent.yaml" <<EOF
scrape_configs:
  - job_name: gosvc
    scrape_interval: ${IV}s
    cpu_seconds: 3
    targets: ["127.0.0.1:$tport"]
    labels: {env: test}
  - job_name: gosub
    scrape_interval: ${IV}s
    delta: subtract
    profiles: [heap, allocs, goroutine, mutex, block, threadcreate]
    targets: ["127.0.0.1:$tport"]
    labels: {service_name: gosub-svc, env: test}
remote_write:
  url: http://127.0.0.1:$sport
  queue_dir: $tmp/queue
EOF
"$SCORCH" agent --config "$tmp/agent.yaml" -v >"$tmp/agent.log" 2>&1 &
apid=$!
pids="$pids $apid"

# allocs_queued JOB SINCE: how many allocs profiles of JOB the agent has queued that start
# after SINCE (s) and do not start a new baseline
allocs_queued() {
    awk -v job="job=$1" -v since="$2" '/^scorch: queued / && / profile=allocs / && !/ restart=1/ &&
        $3 == job { split($6, f, "="); if (int(f[2] / 1e9) > since) n++ } END { print n + 0 }' \
        "$tmp/agent.log"
}
# wait_allocs SINCE N: until both jobs have queued N such profiles (a loaded machine slows
# the scrapes, so this waits for them, not for a time)
wait_allocs() {
    i=0
    while [ "$(allocs_queued gosvc "$1")" -lt "$2" ] || [ "$(allocs_queued gosub "$1")" -lt "$2" ]; do
        i=$((i + 1))
        [ $i -lt 240 ] || { tail -20 "$tmp/agent.log"; fail "fewer than $2 allocs profiles a job"; }
        sleep 0.5
    done
}
# two jobs x all types, a few intervals; then the target restarts on the same port
wait_allocs 0 3
kill -9 $tpid
wait $tpid 2>/dev/null
restart_s=$(date +%s)
start_target
wait_allocs $((restart_s + 1)) 1
kill -TERM $apid
wait $apid 2>/dev/null
grep -q "agent stopping" "$tmp/agent.log" || fail "the agent did not stop on SIGTERM"

S="http://127.0.0.1:$sport"
if ! python3 - "$S" "$tmp/agent.log" $RATE $IV $restart_s $tport <<'EOF'
import json, sys, urllib.parse, urllib.request
server, log, tport = sys.argv[1], sys.argv[2], sys.argv[6]
rate, iv, restart_s = (int(x) for x in sys.argv[3:6])
def get(path, **q):
    with urllib.request.urlopen(server + path + "?" + urllib.parse.urlencode(q)) as r:
        return r.read().decode()
def tsv(query, typ, frm="now-1h", until="now"):
    rows = {}
    text = get("/api/v1/render", query=query, type=typ, format="tsv",
               **{"from": frm, "until": until})
    for line in text.splitlines()[1:]:
        flat, cum, fn = line.split("\t")
        rows[fn] = (int(flat), int(cum))
    return rows
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)

types = {t["id"] for t in json.loads(get("/api/v1/profile_types"))}
want = {"cpu:cpu", "cpu:samples", "heap:inuse_space", "heap:inuse_objects", "allocs:alloc_space",
        "allocs:alloc_objects", "goroutine:goroutine", "mutex:delay", "mutex:contentions",
        "block:delay", "block:contentions", "threadcreate:threadcreate"}
check(want <= types, "missing types: %s" % (want - types))
check("heap:alloc_space" not in types, "heap keeps only inuse_* (found heap:alloc_space)")
check("allocs:inuse_space" not in types, "allocs keeps only alloc_* (found allocs:inuse_space)")

inst = "127.0.0.1:" + tport
series = [s["labels"] for s in json.loads(get("/api/v1/series"))]
check({"service_name": "gosvc", "job": "gosvc", "instance": inst, "env": "test"} in series,
      "series of job gosvc: %s" % series)
check({"service_name": "gosub-svc", "job": "gosub", "instance": inst, "env": "test"} in series,
      "series of job gosub (service_name from its labels): %s" % series)
check(len(series) == 2, "two series expected: %s" % series)

for job in ("gosvc", "gosub"):
    q = '{job="%s"}' % job
    for typ in sorted(want):
        if job == "gosub" and typ.startswith("cpu:"):
            continue
        rows = tsv(q, typ)
        check(rows, "%s: no %s data" % (job, typ))
        neg = [(f, v) for f, v in rows.items() if v[0] < 0 or v[1] < 0]
        check(not neg, "%s %s: negative values %s" % (job, typ, neg[:3]))
    def top(typ):
        rows = tsv(q, typ)
        return max(rows, key=lambda f: rows[f][0]) if rows else None
    if job == "gosvc":
        check(top("cpu:cpu") == "main.burnCPU", "cpu top is %s, not main.burnCPU" % top("cpu:cpu"))
    check(top("allocs:alloc_space") == "main.knownAllocator",
          "%s: alloc_space top is %s" % (job, top("allocs:alloc_space")))
    check(top("heap:inuse_space") == "main.growCache",
          "%s: inuse_space top is %s" % (job, top("heap:inuse_space")))
    g = tsv(q, "goroutine:goroutine").get("main.parkForever", (0, 0))[1]
    check(24 <= g <= 26, "%s: main.parkForever goroutines %s, want 25" % (job, g))
    check(tsv(q, "mutex:delay").get("main.contendMutex", (0, 0))[1] > 0,
          "%s: no mutex delay in main.contendMutex" % job)
    check(tsv(q, "block:delay").get("main.blockOnChan", (0, 0))[1] > 0,
          "%s: no block delay in main.blockOnChan" % job)

# every allocs profile the agent queued is one interval of allocations
per = {"gosvc": [], "gosub": []}
restarts = []
for line in open(log):
    if " profile=allocs " not in line or not line.startswith("scorch: queued"):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[2:])
    frm, until = int(f["from"]), int(f["until"])
    s = frm // 10**9
    q = '{job="%s"}' % f["job"]
    v = tsv(q, "allocs:alloc_space", str(s), str(s + 1)).get("main.knownAllocator", (0, 0))[0]
    dur = (until - frm) / 1e9
    per[f["job"]].append((s, dur, v, "restart" in f))
    if "restart" in f:
        restarts.append((f["job"], s, v))
for job, rows in per.items():
    check(len(rows) >= 4, "%s: only %d allocs profiles" % (job, len(rows)))
    for s, dur, v, rs in rows:
        exp = rate * dur
        spans_restart = s <= restart_s <= s + dur + 1
        if rs or spans_restart:
            # the interval with the restart: the new process's counts, never more than one
            # interval's, never negative
            check(0 <= v <= 1.25 * rate * iv,
                  "%s at %d: restart interval holds %d bytes" % (job, s, v))
            continue
        check(abs(dur - iv) < 1.0, "%s at %d: the profile spans %.2f s, not %d" % (job, s, dur, iv))
        check(0.8 * exp <= v <= 1.2 * exp,
              "%s at %d: main.knownAllocator allocated %d bytes in %.2f s, expected ~%d"
              % (job, s, v, dur, exp))
    after = [r for r in rows if r[0] > restart_s + 1 and not r[3]]
    check(len(after) >= 1, "%s: no allocs profile after the restart" % job)
check(any(j == "gosub" for j, _, _ in restarts),
      "the subtracting job saw no restart: %s" % restarts)
check(not any(j == "gosvc" for j, _, _ in restarts),
      "target-side deltas never need a restart baseline")
for job, rows in per.items():
    print(job, " ".join("%.2f" % (v / (rate * dur)) for s, dur, v, rs in rows), file=sys.stderr)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("ok: all types and labels; %d/%d allocs intervals within 20%% of %d B/s; restart baselines %s"
      % (len(per["gosvc"]), len(per["gosub"]), rate, restarts))
EOF
then
    tail -20 "$tmp/agent.log"
    fail "checks on the scraped data"
fi

# the library writing into a store directly: scorch agent --data
kill -TERM $spid
wait $spid 2>/dev/null
cat >"$tmp/local.yaml" <<EOF
scrape_configs:
  - job_name: local
    scrape_interval: 3s
    cpu_seconds: 2
    targets: ["127.0.0.1:$tport"]
EOF
"$SCORCH" agent --config "$tmp/local.yaml" --data "$tmp/local" -v >"$tmp/local.log" 2>&1 &
lpid=$!
pids="$pids $lpid"
i=0
until [ "$(grep -c "^scorch: stored job=local" "$tmp/local.log")" -ge 7 ] &&
    grep -q "^scorch: stored job=local .* profile=cpu " "$tmp/local.log"; do
    i=$((i + 1))
    [ $i -lt 240 ] || { cat "$tmp/local.log"; fail "agent --data stored no cpu or fewer than 7 profiles in 2 min"; }
    sleep 0.5
done
kill -TERM $lpid
wait $lpid 2>/dev/null
n=$(grep -c "^scorch: stored job=local" "$tmp/local.log")
"$SCORCH" server --data "$tmp/local" --listen "127.0.0.1:$sport" --no-fsync \
    >"$tmp/server2.log" 2>&1 &
spid=$!
pids="$pids $spid"
wait_http "http://127.0.0.1:$sport/healthz"
q='query=%7Bjob%3D%22local%22%7D&type=cpu:cpu&from=now-1h&until=now&format=tsv'
top=$(curl -fs "$S/api/v1/render?$q" |
    sed -n 2p | cut -f3)
[ "$top" = "main.burnCPU" ] || fail "agent --data: cpu top is '$top'"
curl -fs "$S/api/v1/series" | grep -q "\"service_name\":\"local\"" || fail "agent --data: no series"
echo "ok: agent --data stored $n profiles; main.burnCPU tops cpu"
