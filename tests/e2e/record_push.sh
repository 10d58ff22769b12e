#!/bin/sh
# scorch record --push: a program busy for the first 200 ms of every second (tests/data/
# record/band.c), recorded and pushed every second to a server started here, with a bearer
# token from --token-file and labels; the pushes are ordinary /ingest pprof pushes whose
# samples keep their timestamps, so the server's FlameScope heatmap shows the band: in every
# whole second the rows of 0-200 ms have samples, the others (nearly) none. The recorder's
# last, partial window arrives too when it is stopped by SIGINT.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
need_perf
cd "$tmp" || fail "no $tmp"
cc_prog band "$SCORCH_SRC/tests/data/record/band.c" $FP
printf 'band-s3cret\n' >token
printf 'auth: {token_file: %s/token}\n' "$tmp" >server.yaml
set -- $(free_ports 1)
S=http://127.0.0.1:$1
"$SCORCH" server --config server.yaml --data data --listen 127.0.0.1:$1 --no-fsync >server.log 2>&1 &
pids="$pids $!"
wait_http "$S/healthz"

# at the highest priority when allowed (CI runs as root): a loaded machine still gives the
# program the CPU in its bursts, which are times of the clock (nice execs: $! is band)
nice -n -20 ./band 12 2>/dev/null &
b=$!
pids="$pids $b"
start=$(date +%s)
"$SCORCH" record -p $b -F 499 --push "$S" --interval 1 --token-file token --queue-dir queue \
    --label env=band --label service_name=band-svc 2>record.log &
r=$!
pids="$pids $r"
sleep 5.5
kill -INT $r
wait $r || fail "record --push failed: $(cat record.log)"
grep -q "pushed [4-9] profiles" record.log || fail "expected 5 or 6 pushes: $(cat record.log)"
[ -z "$(ls queue 2>/dev/null | grep entry)" ] || fail "pushes left in the queue: $(ls queue)"
kill $b

auth="Authorization: Bearer band-s3cret"
curl -s -o /dev/null -w '%{http_code}' "$S/api/v1/series" | grep -q 401 || fail "the server should want the token"
curl -fs -H "$auth" "$S/api/v1/series?type=cpu:samples&from=$start" >series.json || fail "series"
grep -q '"env":"band"' series.json && grep -q '"service_name":"band-svc"' series.json ||
    fail "the series should carry the labels: $(cat series.json)"
# the samples' pid, tid and comm labels became series labels: the process can be selected
grep -q "\"pid\":\"$b\"" series.json && grep -q '"comm":"band"' series.json && grep -q '"tid":' series.json ||
    fail "the series should carry pid $b, its tid and comm: $(cat series.json)"
curl -fs -H "$auth" "$S/api/v1/render?query=%7Bpid%3D%22$b%22%7D&type=cpu:samples&from=$start&format=folded" >pid.folded ||
    fail "render by pid"
curl -fs -H "$auth" "$S/api/v1/render?query=%7Benv%3D%22band%22%7D&type=cpu:samples&from=$start&format=folded" >env.folded ||
    fail "render by env"
sort pid.folded >pid.sorted
sort env.folded >env.sorted
[ -s pid.sorted ] && cmp -s pid.sorted env.sorted ||
    fail "{pid=\"$b\"} should be the whole recording (one process): $(head -3 pid.folded)"
curl -fs -H "$auth" "$S/api/v1/render?query=%7Bpid%3D%221%22%7D&type=cpu:samples&from=$start&format=folded" >none.folded ||
    fail "render by another pid"
[ ! -s none.folded ] || fail "{pid=\"1\"} should select nothing: $(head -3 none.folded)"
curl -fs -H "$auth" "$S/api/v1/render?query=%7Benv%3D%22band%22%7D&type=cpu:samples&from=$start&format=tsv" >top.tsv ||
    fail "render"
[ "$(sed -n 2p top.tsv | cut -f3)" = band_work ] || fail "band_work should top: $(head -3 top.tsv)"
curl -fs -H "$auth" "$S/api/v1/heatmap?query=%7Benv%3D%22band%22%7D&type=cpu:samples&from=$start&until=now&rows=50" >heat.json ||
    fail "heatmap"
python3 - heat.json "$start" <<'PY' || fail "the heatmap does not show the band: $(cat heat.json)"
import json, sys
h = json.load(open(sys.argv[1]))
start, rows, cols, v = h["start"], h["rows"], h["cols"], h["values"]
assert rows == 50 and cols >= 5, (rows, cols)
assert abs(start - int(sys.argv[2])) < 5, "timestamps are not unix seconds: start %s" % start
# whole seconds only: the first and last columns are cut by the recording's start and end
full = v[1:-1]
busy = sum(sum(c[0:10]) for c in full)      # 0-200 ms
idle = sum(sum(c[11:50]) for c in full)     # 220-1000 ms (row 10 may catch a late sample)
print("busy rows %d samples, idle rows %d, in %d whole seconds" % (busy, idle, len(full)))
# 499 Hz of 200 ms is 100 a second on an idle machine; CI's shares its cores
assert busy >= 10 * len(full), "too few samples in the band"
assert idle * 50 <= busy, "idle rows should be ~0"
# every second shows the band; on a loaded machine (other tests beside it, a browser among
# them) the program loses the core for parts of some, so every second lights at least 5 of
# its 10 rows and most of them 8
lit = [sum(1 for r in range(10) if col[r] > 0) for col in full]
for c, col in enumerate(full):
    assert lit[c] >= 5, "second %d: only %d of the 10 busy rows have samples: %s" % (c + 1, lit[c], col)
assert 2 * sum(1 for n in lit if n >= 8) >= len(full), "the band is patchy: %s" % full
PY
echo "ok: pushed recordings keep their timestamps; the heatmap shows the 200 ms band"
