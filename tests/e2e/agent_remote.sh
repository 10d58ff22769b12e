#!/bin/sh
# The agent's remote write on the wire, against a python3 receiver that records every push:
# Pyroscope's protocol (POST /ingest, name=<service>.<suffix>{labels}, from, until,
# format=pprof, a gzipped pprof body), the bearer token from remote_write.token_file, retries
# of 5xx answers (the receiver fails the first pushes) and of 429, and 4xx answers taken as
# final (the receiver refuses goroutine profiles with 400): those are dropped and logged,
# everything else arrives exactly once.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
set -- $(free_ports 3)
tport=$1 rport=$2 aport=$3
python3 "$SCORCH_SRC/tests/e2e/fake_pprof_target.py" "$tport=ok" >"$tmp/fake.log" 2>&1 &
pids="$pids $!"
cat >"$tmp/receiver.py" <<'EOF'
import gzip, http.server, json, sys, urllib.parse
log = open(sys.argv[2], "a")
calls = {"n": 0}
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        calls["n"] += 1
        body = self.rfile.read(int(self.headers["Content-Length"]))
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        # the first four pushes fail (server trouble), the fifth is told to slow down
        status = 500 if calls["n"] <= 4 else 429 if calls["n"] == 5 else 200
        if status == 200 and ".goroutines{" in q["name"][0]:
            status = 400
        rec = {"path": u.path, "q": {k: v[0] for k, v in q.items()}, "status": status,
               "auth": self.headers.get("Authorization"), "ctype": self.headers.get("Content-Type"),
               "gzip": body[:2] == b"\x1f\x8b"}
        rec["pprof_bytes"] = len(gzip.decompress(body)) if rec["gzip"] else 0
        log.write(json.dumps(rec) + "\n")
        log.flush()
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "1")
        msg = b"goroutines are not welcome here\n" if status == 400 else b"{}\n"
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
python3 "$tmp/receiver.py" "$rport" "$tmp/pushes.log" &
pids="$pids $!"
wait_http "http://127.0.0.1:$rport/" any
wait_http "http://127.0.0.1:$tport/debug/pprof/heap"
printf 's3cret-token\n' >"$tmp/token"
cat >"$tmp/agent.yaml" <<EOF
scrape_configs:
  - job_name: wire
    scrape_interval: 1s
    profiles: [heap, goroutine, allocs, mutex]
    targets: ["127.0.0.1:$tport"]
    labels: {team: "a b,c"}
remote_write:
  url: http://127.0.0.1:$rport/
  token_file: $tmp/token
  queue_dir: $tmp/queue
  min_backoff: 100ms
  max_backoff: 400ms
EOF
"$SCORCH" agent --config "$tmp/agent.yaml" --listen "127.0.0.1:$aport" -v >"$tmp/agent.log" 2>&1 &
apid=$!
pids="$pids $apid"
sleep 6
curl -fs "http://127.0.0.1:$aport/metrics" >"$tmp/metrics.txt" || fail "no agent /metrics"
kill -TERM $apid
wait $apid 2>/dev/null
grep -q "remote write rejected a profile, dropped it: HTTP 400: goroutines are not welcome here" \
    "$tmp/agent.log" || fail "a 400 should be logged with the server's reason"
grep -q "remote write failed, will retry: HTTP 500" "$tmp/agent.log" ||
    fail "500s should be retried"
for m in scorch_agent_retries_total scorch_agent_sent_total; do
    grep -q "^$m [1-9]" "$tmp/metrics.txt" || fail "/metrics: $m"
done
grep -q '^scorch_agent_dropped_total{reason="rejected"} [1-9]' "$tmp/metrics.txt" ||
    fail "/metrics: rejected profiles"
python3 - "$tmp/agent.log" "$tmp/pushes.log" "$tport" <<'EOF' || fail "pushes on the wire"
import collections, json, sys
queued = collections.Counter()
for line in open(sys.argv[1]):
    if line.startswith("scorch: queued "):
        f = dict(kv.split("=", 1) for kv in line.split()[2:])
        queued[f["profile"]] += 1
pushes = [json.loads(l) for l in open(sys.argv[2])]
errors = []
ok = collections.Counter()
names = {"heap": "wire.inuse_space", "goroutine": "wire.goroutines", "allocs": "wire",
         "mutex": "wire.mutex_count"}
labels = '{instance="127.0.0.1:%s",job="wire",team="a b,c"}' % sys.argv[3]
for p in pushes:
    q = p["q"]
    if (p["path"] != "/ingest" or q.get("format") != "pprof" or not p["gzip"]
            or p["pprof_bytes"] < 50):
        errors.append("not a Pyroscope pprof push: %s" % p)
    if p["auth"] != "Bearer s3cret-token" or p["ctype"] != "application/octet-stream":
        errors.append("headers: %s %s" % (p["auth"], p["ctype"]))
    if not q["name"].endswith(labels):
        errors.append("name %s" % q["name"])
    if not (q["from"].isdigit() and q["until"].isdigit() and int(q["from"]) <= int(q["until"])):
        errors.append("from/until %s %s" % (q["from"], q["until"]))
    if p["status"] == 200:
        prof = [k for k, v in names.items() if q["name"] == v + labels]
        ok[prof[0] if prof else "?"] += 1
print("queued", dict(queued), "accepted", dict(ok), "pushes", len(pushes))
if sum(1 for p in pushes if p["status"] in (500, 429)) != 5:
    errors.append("the five failed pushes should have been retried")
want = dict(queued)
want.pop("goroutine", None)
if dict(ok) != want:
    errors.append("accepted %s, want everything but goroutine once: %s" % (dict(ok), want))
if errors:
    print("\n".join(errors[:10]))
    sys.exit(1)
EOF
echo "ok: pushes in Pyroscope's protocol with the bearer token; 5xx/429 retried, 400 dropped"
