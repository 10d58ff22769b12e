#!/bin/sh
# `scorch server --config` scraping a real Go service built here (tests/data/scrapeprog):
# the profiles land in the server's own store with the series labels (the known hot function
# tops cpu, the known allocator tops allocs:alloc_space); /api/v1/targets and /metrics show
# every task's health; SIGHUP applies a new config (a job that stays keeps its counters and
# its data, a new job starts, a removed one stops without losing what it stored), a broken
# config changes nothing; a server started without scrape_configs gains a scraper on SIGHUP;
# the targets route needs the token like the rest of the API; SIGTERM stops it cleanly.
# Needs no ../shared.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
export HOME="${HOME:-/tmp}" GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPROXY=off
wait_log() { # FILE TEXT: until FILE holds TEXT (30 s)
    i=0
    until grep -q "$2" "$1"; do
        i=$((i + 1))
        [ $i -lt 300 ] || { cat "$1" >&2; fail "no '$2' in $1"; }
        sleep 0.1
    done
}

(cd "$SCORCH_SRC/tests/data/scrapeprog" && go build -o "$tmp/prog" .) || fail "go build failed"
set -- $(free_ports 2)
tport=$1 sport=$2
# (asyncpreemptoff: see tests/data/scrapeprog)
GODEBUG=asyncpreemptoff=1 "$tmp/prog" -listen "127.0.0.1:$tport" >"$tmp/prog.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$tport/debug/pprof/"

job_gosvc="  - job_name: gosvc
    scrape_interval: 3s
    cpu_seconds: 2
    targets: [\"127.0.0.1:$tport\"]
    labels: {env: test}"
job_gosub="  - job_name: gosub
    scrape_interval: 2s
    profiles: [heap, goroutine]
    targets: [\"127.0.0.1:$tport\"]
    labels: {service_name: gosub-svc}"
printf 'scrape_configs:\n%s\n' "$job_gosvc" >"$tmp/scorch.yaml"
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$sport" \
    --no-fsync >"$tmp/server.log" 2>&1 &
spid=$!
pids="$pids $spid"
S="http://127.0.0.1:$sport"
wait_http "$S/healthz"

# checks.py STEP: the server's state at each step, in python
cat >"$tmp/checks.py" <<'EOF'
import json, sys, time, urllib.parse, urllib.request
server, step, inst = sys.argv[1], sys.argv[2], sys.argv[3]
def get(path, **q):
    url = server + path + ("?" + urllib.parse.urlencode(q) if q else "")
    with urllib.request.urlopen(url) as r:
        return r.read().decode()
def tsv(query, typ):
    text = get("/api/v1/render", query=query, type=typ, format="tsv", **{"from": "now-1h"})
    rows = {}
    for line in text.splitlines()[1:]:
        flat, cum, fn = line.split("\t")
        rows[fn] = (int(flat), int(cum))
    return rows
def top(query, typ):
    rows = tsv(query, typ)
    return max(rows, key=lambda f: rows[f][0]) if rows else None
def targets():
    return json.loads(get("/api/v1/targets"))
def wait(cond, what, secs=60):  # generous: a loaded machine slows every scrape
    end = time.time() + secs
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.3)
    sys.exit("FAIL: %s (targets: %s)" % (what, json.dumps(targets(), indent=1)[:3000]))
ALL = ["cpu", "heap", "allocs", "goroutine", "mutex", "block", "threadcreate"]
def by_job(job):
    return {t["profile"]: t for t in targets() if t["job"] == job}

if step == "first":
    # every type scraped at least once and up, then the data in the store
    wait(lambda: all(t["health"] == "up" and t["profiles"] + t["scrapes"] >= 1
                     and t["last_scrape"] for t in targets()) and len(targets()) == 7,
         "all 7 gosvc tasks up")
    t = by_job("gosvc")
    assert sorted(t) == sorted(ALL), t.keys()
    for p, x in t.items():
        assert x["instance"] == inst and x["interval_seconds"] == 3, x
        assert x["labels"] == {"service_name": "gosvc", "job": "gosvc", "instance": inst,
                               "env": "test"}, x["labels"]
        assert x["last_error"] == "" and x["next_due"], x
    assert t["cpu"]["url"].endswith("/debug/pprof/profile?seconds=2"), t["cpu"]["url"]
    q = '{job="gosvc"}'
    wait(lambda: top(q, "cpu:cpu") == "main.burnCPU", "main.burnCPU tops the scraped cpu")
    wait(lambda: top(q, "allocs:alloc_space") == "main.knownAllocator",
         "main.knownAllocator tops the scraped allocs")
    wait(lambda: top(q, "heap:inuse_space") == "main.growCache", "main.growCache tops inuse_space")
    series = [s["labels"] for s in json.loads(get("/api/v1/series"))]
    assert series == [{"service_name": "gosvc", "job": "gosvc", "instance": inst, "env": "test"}], series
    m = get("/metrics")
    for p in ALL:
        line = 'scorch_scrape_up{job="gosvc",instance="%s",profile="%s"} 1' % (inst, p)
        assert line in m, "no '%s' in /metrics" % line
    assert "scorch_scrapes_total" in m
    json.dump({p: x["scrapes"] for p, x in t.items()}, open(sys.argv[4], "w"))
    print("ok: the server scraped every type into its store; targets and metrics show it")
elif step == "added":
    before = json.load(open(sys.argv[4]))
    wait(lambda: by_job("gosub").get("heap", {}).get("health") == "up", "gosub's heap up")
    t, s = by_job("gosvc"), by_job("gosub")
    assert sorted(s) == ["goroutine", "heap"], s.keys()
    for p, n in before.items():
        assert t[p]["scrapes"] >= n, "gosvc %s lost its counters: %d < %d" % (p, t[p]["scrapes"], n)
    assert s["heap"]["labels"]["service_name"] == "gosub-svc", s["heap"]["labels"]
    wait(lambda: top('{service_name="gosub-svc"}', "heap:inuse_space") == "main.growCache",
         "the new job's heap profiles land")
    print("ok: SIGHUP added a job; gosvc kept its state")
elif step == "same":
    got = sorted((t["job"], t["profile"]) for t in targets())
    assert got == sorted([("gosvc", p) for p in ALL] + [("gosub", "heap"), ("gosub", "goroutine")]), got
    print("ok: a broken config changed nothing")
elif step == "removed":
    wait(lambda: {t["job"] for t in targets()} == {"gosub"}, "gosvc gone from the targets")
    assert top('{job="gosvc"}', "cpu:cpu") == "main.burnCPU", "gosvc's stored data is gone"
    print("ok: SIGHUP removed a job; what it stored stays")
elif step == "none":
    assert targets() == [], targets()
    print("ok: no scrape_configs, no targets")
elif step == "late":
    wait(lambda: by_job("gosub").get("goroutine", {}).get("health") == "up",
         "a scraper started by SIGHUP")
    print("ok: SIGHUP started a scraper in a server that had none")
EOF
check() { python3 "$tmp/checks.py" "$S" "$1" "127.0.0.1:$tport" "$tmp/state.json" || fail "step $1"; }

check first

printf 'scrape_configs:\n%s\n%s\n' "$job_gosvc" "$job_gosub" >"$tmp/scorch.yaml"
kill -HUP $spid
wait_log "$tmp/server.log" "reloaded '$tmp/scorch.yaml': 2 scrape jobs"
check added

printf 'scrape_configs:\n  - job_name: [oops\n' >"$tmp/scorch.yaml"
kill -HUP $spid
wait_log "$tmp/server.log" "keeping the running config"
kill -0 $spid || fail "a broken config on SIGHUP stopped the server"
check same

printf 'scrape_configs:\n%s\n' "$job_gosub" >"$tmp/scorch.yaml"
kill -HUP $spid
wait_log "$tmp/server.log" "reloaded '$tmp/scorch.yaml': 1 scrape jobs"
check removed

kill -TERM $spid
i=0
while kill -0 $spid 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 150 ] || fail "the scraping server did not stop within 15 s of SIGTERM"
    sleep 0.1
done
wait $spid
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/server.log" >&2; fail "the server exited with $rc"; }

# a server without scrape_configs: no targets; SIGHUP with some starts a scraper; the
# targets route needs the token like the rest of the API
printf 'auth: {token: s3cret}\n' >"$tmp/empty.yaml"
"$SCORCH" server --config "$tmp/empty.yaml" --data "$tmp/data2" --listen "127.0.0.1:$sport" \
    --no-fsync >"$tmp/server2.log" 2>&1 &
spid=$!
pids="$pids $spid"
wait_http "$S/healthz"
code=$(curl -s -o /dev/null -w '%{http_code}' "$S/api/v1/targets")
[ "$code" = 401 ] || fail "/api/v1/targets without the token answered $code, not 401"
cat >"$tmp/auth.py" <<'EOF'
import urllib.request
_open = urllib.request.urlopen
def urlopen(url, *a, **k):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer s3cret"})
    return _open(req, *a, **k)
urllib.request.urlopen = urlopen
EOF
checka() {
    PYTHONPATH="$tmp" python3 -c 'import auth, runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
        "$tmp/checks.py" "$S" "$1" "127.0.0.1:$tport" "$tmp/state.json" || fail "step $1"
}
checka none
printf 'auth: {token: s3cret}\nscrape_configs:\n%s\n' "$job_gosub" >"$tmp/empty.yaml"
kill -HUP $spid
wait_log "$tmp/server2.log" "reloaded"
checka late
kill -TERM $spid
wait $spid || fail "the second server exited with $?"
echo "ok: scorch server scrapes, reports its targets, reloads on SIGHUP and stops cleanly"
