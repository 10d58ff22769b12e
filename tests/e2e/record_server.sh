#!/bin/sh
# `scorch server` with record: in its config samples its host itself: the profiles land in
# its store through the same write path as pushes, under the configured labels (and
# service_name), with timestamps (the heatmap has them); a hot program started here has a
# good share of the host's samples; SIGTERM stores the last window
# (a restarted server without record: has at least what the running one showed); a bad
# record: section is refused with its line.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
need_cmd curl "curl"
need_cmd python3 "python3"
e2e_tmp
need_perf
cd "$tmp" || fail "no $tmp"
cc_prog hot "$SCORCH_SRC/tests/data/record/hot.c" $FP
./hot 30 &
pids="$pids $!"
cat >rec.yaml <<YAML
record:
  frequency: 199
  interval: 1s
  labels: {host: h1, service_name: hostrec}
YAML
set -- $(free_ports 1)
S=http://127.0.0.1:$1
"$SCORCH" server --config rec.yaml --data data --listen 127.0.0.1:$1 --no-fsync >server.log 2>&1 &
spid=$!
pids="$pids $spid"
wait_http "$S/healthz"
start=$(date +%s)
sleep 3.5
curl -fs "$S/api/v1/series?type=cpu:cpu&from=$start" >series.json || fail "series"
grep -q '"host":"h1"' series.json && grep -q '"service_name":"hostrec"' series.json ||
    fail "the recorded series should carry the configured labels: $(cat series.json)"
q='%7Bhost%3D%22h1%22%7D'
curl -fs "$S/api/v1/render?query=$q&type=cpu:samples&from=$start&format=tsv" >top.tsv || fail "render"
before=$(awk -F'\t' 'NR>1{s+=$1} END{print s+0}' top.tsv)
# the hot program's own samples (its comm label: the host's other work, a browser test
# beside this one, may take most of the machine's): mostly hot_leaf
qh='%7Bhost%3D%22h1%22%2Ccomm%3D%22hot%22%7D'
curl -fs "$S/api/v1/render?query=$qh&type=cpu:samples&from=$start&format=tsv" >hot.tsv || fail "render hot"
own=$(awk -F'\t' 'NR>1{s+=$1} END{print s+0}' hot.tsv)
hot=$(awk -F'\t' '$3=="hot_leaf"{print $1}' hot.tsv)
[ -n "$hot" ] && [ "$hot" -gt 0 ] && [ $((hot * 2)) -ge "$own" ] ||
    fail "hot_leaf should be most of the hot program's $own samples (of the host's $before): ${hot:-none}: $(head -4 hot.tsv)"

curl -fs "$S/api/v1/heatmap?query=$q&type=cpu:samples&from=$start&until=now" >heat.json || fail "heatmap"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); assert h["cols"]>=2 and sum(map(sum,h["values"]))>0, h' heat.json ||
    fail "the heatmap of the recorded samples is empty: $(head -c 300 heat.json)"
kill -TERM $spid
wait $spid || fail "the server should stop cleanly: $(cat server.log)"
# the last window was stored on the way down
set -- $(free_ports 1)
S=http://127.0.0.1:$1
"$SCORCH" server --data data --listen 127.0.0.1:$1 --no-fsync >server2.log 2>&1 &
pids="$pids $!"
wait_http "$S/healthz"
curl -fs "$S/api/v1/render?query=$q&type=cpu:samples&from=$start&format=tsv" >top2.tsv || fail "render 2"
after=$(awk -F'\t' 'NR>1{s+=$1} END{print s+0}' top2.tsv)
[ "$after" -gt "$before" ] || fail "SIGTERM should store the last window: $before samples before, $after after"
# a bad record: section
printf 'record: {frequency: fast}\n' >bad.yaml
"$SCORCH" server --config bad.yaml --data data2 --listen 127.0.0.1:0 2>bad.log && fail "a bad record: was accepted"
grep -q "config 'bad.yaml' line 1: 'record.frequency' must be a count from 1 to 100000, not 'fast'" bad.log ||
    fail "bad record: $(cat bad.log)"
echo "ok: the server records its host into its store ($before then $after samples)"
