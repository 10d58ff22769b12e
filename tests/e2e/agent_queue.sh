#!/bin/sh
# The agent's on-disk queue across a server outage and an agent restart: the agent scrapes
# a target (tests/e2e/fake_pprof_target.py) every second and pushes to a real `scorch
# server`; the server stops, the queue grows on disk; the agent is restarted in the middle
# of the outage (the queue survives it); the server comes back; the agent stops after
# flushing. Then every profile the agent queued (its -v log, both runs) must be in the
# server's store exactly once: per series and profile type, the store's count (read from
# its SQLite file) equals the agent's.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd curl "curl"
need_cmd python3 "python3"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 without sqlite3"
e2e_tmp
set -- $(free_ports 2)
tport=$1 sport=$2
entries() { ls "$tmp/queue" 2>/dev/null | grep -c '\.entry$'; }
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" "$tport=ok" >"$tmp/fake.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$tport/debug/pprof/heap"
start_server() {
    "$SCORCH" server --data "$tmp/data" --listen "127.0.0.1:$sport" >>"$tmp/server.log" 2>&1 &
    spid=$!
    pids="$pids $spid"
    wait_http "http://127.0.0.1:$sport/healthz"
}
start_agent() {
    "$SCORCH" agent --config "$tmp/agent.yaml" -v >>"$tmp/agent.log" 2>&1 &
    apid=$!
    pids="$pids $apid"
}
cat >"$tmp/agent.yaml" <<EOF
scrape_configs:
  - job_name: q
    scrape_interval: 1s
    profiles: [heap, goroutine, allocs]
    targets: ["127.0.0.1:$tport"]
remote_write:
  url: http://127.0.0.1:$sport
  queue_dir: $tmp/queue
  min_backoff: 100ms
  max_backoff: 1s
EOF
start_server
start_agent
sleep 3
grep -q "^scorch: sent " "$tmp/agent.log" || fail "nothing sent while the server was up"

# the outage: the queue grows on disk
kill -TERM $spid
wait $spid 2>/dev/null
sleep 2
n1=$(entries)
sleep 2
n2=$(entries)
[ "$n1" -gt 0 ] && [ "$n2" -gt "$n1" ] || fail "the queue did not grow during the outage ($n1, $n2)"

# the agent restarts in the middle: the queue stays and is picked up
kill -TERM $apid
wait $apid 2>/dev/null
n3=$(entries)
[ "$n3" -ge "$n2" ] || fail "entries went missing over the agent's restart ($n2 -> $n3)"
grep -q "stay queued" "$tmp/agent.log" || fail "the stopping agent should say what stays queued"
start_agent
sleep 2
grep -q "from before: sending them first" "$tmp/agent.log" ||
    fail "the new agent did not find the queue"
n4=$(entries)
[ "$n4" -gt "$n3" ] || fail "the restarted agent does not queue ($n3 -> $n4)"

# the server comes back: everything drains
start_server
i=0
while [ "$(entries)" -gt 3 ]; do
    i=$((i + 1))
    [ $i -lt 200 ] || fail "the queue did not drain: $(entries) entries left"
    sleep 0.1
done
sleep 1
kill -TERM $apid
wait $apid 2>/dev/null
[ "$(entries)" -eq 0 ] || fail "$(entries) entries left after the agent's flush"
kill -TERM $spid
wait $spid 2>/dev/null
! grep "dropped\|rejected" "$tmp/agent.log" || fail "the agent dropped profiles"

python3 - "$tmp/agent.log" "$tmp/data/scorch.db" <<'EOF' || fail "profiles lost or duplicated"
import collections, sqlite3, sys
queued = collections.Counter()
for line in open(sys.argv[1]):
    if line.startswith("scorch: queued "):
        f = dict(kv.split("=", 1) for kv in line.split()[2:])
        queued[(f["job"], f["profile"])] += 1
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
stored = collections.Counter()
for labels, profile, n in db.execute(
        "SELECT s.labels, k.profile, count(*) FROM profiles p JOIN series s ON s.id = p.series_id "
        "JOIN kinds k ON k.id = p.kind_id GROUP BY s.labels, k.profile"):
    job = labels.split('job="')[1].split('"')[0]
    stored[(job, profile)] += n
print("queued by the agent:", dict(queued))
print("stored by the server:", dict(stored))
if queued != stored or sum(queued.values()) < 20:
    sys.exit(1)
EOF
echo "ok: $n2 entries queued during the outage survived an agent restart; each profile arrived once"
