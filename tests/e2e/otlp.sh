#!/bin/sh
# OpenTelemetry profiles into scorch, end to end, from a real perf capture (the shared
# system-wide Go + xz `perf script`): tests/e2e/otlp_client.py turns it into OTLP export
# requests (messages from stubs that protoc generates here from tests/proto/, stacks named
# as stackcollapse-perf.pl names them - checked first against `scorch collapse perf`) and
# sends them through every way OTLP comes in:
#   - OTLP/gRPC with Debian's python3-grpcio, gzip compression, "timestamps only" samples
#   - OTLP/HTTP protobuf, samples of values paired with timestamps
#   - OTLP/HTTP JSON (lowerCamelCase, hex ids, int64 strings), "values only" samples
#   - OTLP/HTTP protobuf with Content-Encoding: gzip, and gzip of two members (whose trailer
#     claims too little) over HTTP and gRPC: stored once, whole
# The same capture also goes through /ingest?format=perf_script. Each OTLP series must
# render the flame graph (folded and tsv, both sample types) that /ingest's does, and the
# timestamped ones the heatmap /ingest's has, which is the perf script's own heatmap
# (tests/compat/heatmap_ref.py) moved by the whole seconds the test shifted it.
# Refusals: no or a wrong token (gRPC UNAUTHENTICATED, HTTP 401), another gRPC method
# (UNIMPLEMENTED), a message that is not OTLP (INVALID_ARGUMENT) or past the 64 MiB limit
# (RESOURCE_EXHAUSTED), an unknown
# OTLP-Profiles-Development-Version (HTTP 400 with the reason, gRPC INVALID_ARGUMENT), bad
# profiles counted in partial_success with the reason while the good one is stored, a body
# that is not protobuf (400); a tenant from x-scope-orgid metadata.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_testdata perf
need_cmd curl "curl"
need_cmd protoc "Debian's protobuf-compiler (scripts/install-deps.sh installs it)"
need_python grpc google.protobuf
e2e_tmp
perf="$SCORCH_TESTDATA/perf/system-wide-go-xz.perf.txt"
client="$SCORCH_SRC/tests/e2e/otlp_client.py"
mkdir "$tmp/stubs"
protoc -I "$SCORCH_SRC/tests/proto" --python_out="$tmp/stubs" scorch_otlp.proto ||
    fail "protoc failed"
c() { "$py" -B "$client" "$tmp/stubs" "$@"; }

# the converter names frames as scorch's perf script reader does
c folded "$perf" | sort >"$tmp/conv.folded"
"$SCORCH" collapse perf "$perf" | sort >"$tmp/collapse.folded"
cmp -s "$tmp/conv.folded" "$tmp/collapse.folded" ||
    fail "otlp_client.py's stacks differ from scorch collapse perf's"

set -- $(free_ports 2)
port=$1 gport=$2
url=http://127.0.0.1:$port
echo "s3cret" >"$tmp/token"
cat >"$tmp/scorch.yaml" <<YAML
auth: {token_file: $tmp/token}
otlp: {grpc_listen: 127.0.0.1:$gport}
YAML
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$port" \
    2>"$tmp/server.log" &
pids="$pids $!"
wait_http "$url/healthz"
auth="Authorization: Bearer s3cret"
base=$(($(date +%s) / 60 * 60 - 3600))
range="from=$((base - 60))&until=$((base + 600))"

c build "$perf" "$base" timestamps svc-grpc "$tmp/grpc.pb" || fail "building the gRPC request"
c build "$perf" "$base" paired svc-pb "$tmp/pb.pb" || fail "building the protobuf request"
c build "$perf" "$base" values svc-json "$tmp/values.pb" || fail "building the JSON request"
c json "$tmp/values.pb" "$tmp/req.json"
c build "$perf" "$base" paired svc-gz "$tmp/gz.pb"
gzip -c "$tmp/gz.pb" >"$tmp/gz.pb.gz"
# two gzip members, whose trailer tells only the second's size: admitted at that claim, the
# body inflates past it, nothing is stored; measured, admitted again, stored once, whole
members() {
    half=$(($(wc -c <"$1") / 2))
    { head -c "$half" "$1" | gzip -c; tail -c +$((half + 1)) "$1" | gzip -c; } >"$2"
}
c build "$perf" "$base" paired svc-gz2 "$tmp/gz2.pb"
members "$tmp/gz2.pb" "$tmp/gz2.pb.gz"
c build "$perf" "$base" timestamps svc-grpc2 "$tmp/grpc2.pb"
members "$tmp/grpc2.pb" "$tmp/grpc2.pb.gz"

# ---- refusals first: nothing of these may be stored ----
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb")
case $out in "error UNAUTHENTICATED"*) ;; *) fail "gRPC without a token: $out" ;; esac
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token wrong)
case $out in "error UNAUTHENTICATED"*) ;; *) fail "gRPC with a wrong token: $out" ;; esac
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token s3cret --version 2)
case $out in "error INVALID_ARGUMENT"*"version '2'"*) ;; *) fail "gRPC with version 2: $out" ;; esac
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token s3cret --method /a.B/C)
case $out in "error UNIMPLEMENTED"*) ;; *) fail "gRPC to another method: $out" ;; esac
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token s3cret --junk 100)
case $out in "error INVALID_ARGUMENT malformed OTLP request"*) ;; *) fail "gRPC junk: $out" ;; esac
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token s3cret --junk $((64 * 1024 * 1024 + 1)))
case $out in "error RESOURCE_EXHAUSTED message is more than the limit of 67108864 bytes"*) ;;
*) fail "gRPC message past the limit: $out" ;; esac
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H 'Content-Type: application/x-protobuf' \
    --data-binary @"$tmp/pb.pb" "$url/v1development/profiles")
[ "$code" = 401 ] || fail "OTLP/HTTP without a token: $code"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/json' \
    -H 'OTLP-Profiles-Development-Version: 7' --data-binary @"$tmp/req.json" \
    "$url/v1development/profiles")
[ "$code" = 400 ] && grep -q "unsupported OTLP profiles development version '7'" "$tmp/r" ||
    fail "version 7 over HTTP: $code $(cat "$tmp/r")"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/x-protobuf' \
    -H 'OTLP-Profiles-Development-Version: 7' --data-binary @"$tmp/pb.pb" \
    "$url/v1development/profiles")
[ "$code" = 400 ] && grep -qa "version '7'" "$tmp/r" || fail "version 7 over HTTP protobuf: $code"
printf 'not a protobuf message' >"$tmp/junk"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/x-protobuf' \
    --data-binary @"$tmp/junk" "$url/v1development/profiles")
[ "$code" = 400 ] && grep -qa "malformed OTLP request" "$tmp/r" || fail "junk body: $code"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: text/plain' \
    --data-binary @"$tmp/pb.pb" "$url/v1development/profiles")
[ "$code" = 415 ] || fail "text/plain body: $code"
n=$(curl -s -H "$auth" "$url/api/v1/series?from=now-1d" | grep -o service_name | wc -l)
[ "$n" = 0 ] || fail "refused requests stored $n series"

# ---- the four ways in, and the reference ----
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc.pb" --token s3cret --gzip --version 1)
[ "$out" = "ok 0 " ] || fail "gRPC export: $out"
code=$(curl -s -o "$tmp/r" -w '%{http_code} %{content_type}' -H "$auth" \
    -H 'Content-Type: application/x-protobuf' --data-binary @"$tmp/pb.pb" \
    "$url/v1development/profiles")
[ "$code" = "200 application/x-protobuf" ] || fail "OTLP/HTTP protobuf: $code"
[ "$(c response "$tmp/r")" = "0 " ] || fail "protobuf response: $(c response "$tmp/r")"
code=$(curl -s -o "$tmp/r" -w '%{http_code} %{content_type}' -H "$auth" \
    -H 'Content-Type: application/json' -H 'OTLP-Profiles-Development-Version: 1' \
    --data-binary @"$tmp/req.json" "$url/v1development/profiles")
[ "$code" = "200 application/json" ] && [ "$(cat "$tmp/r")" = "{}" ] ||
    fail "OTLP/HTTP JSON: $code $(cat "$tmp/r")"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/x-protobuf' \
    -H 'Content-Encoding: gzip' --data-binary @"$tmp/gz.pb.gz" "$url/v1development/profiles")
[ "$code" = 200 ] || fail "OTLP/HTTP gzip: $code $(cat "$tmp/r")"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/x-protobuf' \
    -H 'Content-Encoding: gzip' --data-binary @"$tmp/gz2.pb.gz" "$url/v1development/profiles")
[ "$code" = 200 ] || fail "OTLP/HTTP two gzip members: $code $(cat "$tmp/r")"
# (gzip bytes in an uncompressed gRPC message: grpcio compresses only whole messages itself)
out=$(c grpc "127.0.0.1:$gport" "$tmp/grpc2.pb.gz" --token s3cret)
[ "$out" = "ok 0 " ] || fail "gRPC export of two gzip members: $out"
curl -fs -H "$auth" --data-binary @"$perf" \
    "$url/ingest?name=svc-ref&format=perf_script&from=$base" >/dev/null || fail "/ingest perf_script"

q() { printf '%%7Bservice_name%%3D%%22%s%%22%%7D' "$1"; }
for t in cpu:samples cpu:cpu-clock; do
    for fmt in folded tsv; do
        curl -fs -H "$auth" "$url/api/v1/render?query=$(q svc-ref)&type=$t&$range&format=$fmt" |
            sort >"$tmp/ref.$fmt" || fail "render svc-ref $t"
        [ "$(wc -l <"$tmp/ref.$fmt")" -gt 50 ] || fail "the reference $t $fmt is nearly empty"
        for s in svc-grpc svc-pb svc-json svc-gz svc-gz2 svc-grpc2; do
            curl -fs -H "$auth" "$url/api/v1/render?query=$(q $s)&type=$t&$range&format=$fmt" |
                sort >"$tmp/got.$fmt" || fail "render $s $t"
            cmp -s "$tmp/ref.$fmt" "$tmp/got.$fmt" || {
                diff "$tmp/ref.$fmt" "$tmp/got.$fmt" | head -5
                fail "$s $t $fmt differs from /ingest's"
            }
        done
    done
done
# the folded render is the capture's own: collapse perf's stacks, counted in samples
awk '{n=$NF; $NF=""; sub(/ $/, ""); print $0, n / 2004008}' "$tmp/collapse.folded" |
    sort >"$tmp/want.samples"
curl -fs -H "$auth" "$url/api/v1/render?query=$(q svc-grpc)&type=cpu:samples&$range&format=folded" |
    sort >"$tmp/got.samples"
cmp -s "$tmp/want.samples" "$tmp/got.samples" || fail "the gRPC series is not the capture's stacks"

# heatmaps: every timestamped way in equals /ingest's, which is the perf script's, shifted
"$py" "$SCORCH_SRC/tests/compat/heatmap_ref.py" 50 "$perf" >"$tmp/heat.want"
curl -fs -H "$auth" "$url/api/v1/heatmap?query=$(q svc-ref)&type=cpu:samples&$range" \
    >"$tmp/heat.ref"
for s in svc-grpc svc-pb svc-gz svc-gz2 svc-grpc2; do
    curl -fs -H "$auth" "$url/api/v1/heatmap?query=$(q $s)&type=cpu:samples&$range" \
        >"$tmp/heat.got"
    cmp -s "$tmp/heat.ref" "$tmp/heat.got" || fail "$s heatmap differs from /ingest's"
done
"$py" - "$tmp/heat.got" "$tmp/heat.want" "$base" <<'PY' || fail "heatmap differs from the perf script's"
import json, math, sys
from decimal import Decimal
got = json.load(open(sys.argv[1]), parse_float=Decimal)
want = json.load(open(sys.argv[2]), parse_float=Decimal)
shift = int(sys.argv[3]) - math.floor(Decimal(want["start"]))
assert Decimal(got["start"]) == Decimal(want["start"]) + shift, (got["start"], want["start"])
assert (got["rows"], got["cols"]) == (want["rows"], want["cols"])
assert got["values"] == want["values"], "cells differ"
assert sum(map(sum, got["values"])) > 100
PY
curl -fs -H "$auth" "$url/api/v1/heatmap?query=$(q svc-json)&type=cpu:samples&$range" |
    grep -q '"cols":0' || fail "values-only samples have no timestamps, so no heatmap"

# resource attributes and the scope became the series' labels
curl -fs -H "$auth" "$url/api/v1/series?query=$(q svc-grpc)&$range" >"$tmp/series"
for l in '"host_name":"test-host"' '"deployment_environment":"e2e"' \
    '"otel_scope_name":"scorch-otlp-test"' '"otel_scope_version":"1"'; do
    grep -q "$l" "$tmp/series" || fail "series labels lack $l: $(cat "$tmp/series")"
done

# sample attributes and span links became series labels: a thread's series holds exactly
# that thread's stacks (its root frame is the process name), a trace's only its samples
curl -fs -H "$auth" "$url/api/v1/render?query=$(q svc-grpc)&type=cpu:samples&$range&format=folded" |
    sort >"$tmp/all.folded"
curl -fs -H "$auth" "$url/api/v1/label_values?name=thread_name" >"$tmp/threads"
thread=$("$py" -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v[len(v)//2] if v else "")' "$tmp/threads")
[ -n "$thread" ] || fail "no thread_name values: $(cat "$tmp/threads")"
sel=$("$py" -c 'import sys,urllib.parse as u; print(u.quote("{service_name=\"svc-grpc\",thread_name=\"%s\"}" % sys.argv[1]))' "$thread")
curl -fs -H "$auth" "$url/api/v1/render?query=$sel&type=cpu:samples&$range&format=folded" |
    sort >"$tmp/thread.folded"
grep -F "$thread;" "$tmp/all.folded" | awk -v p="$thread;" 'index($0, p) == 1' >"$tmp/thread.want"
[ -s "$tmp/thread.want" ] || fail "the capture has no stacks of $thread"
cmp -s "$tmp/thread.want" "$tmp/thread.folded" || {
    diff "$tmp/thread.want" "$tmp/thread.folded" | head -5
    fail "{thread_name=\"$thread\"} is not that thread's stacks"
}
# the client links every third sample group n to trace n + 1 (see otlp_client.py build)
tid=$(printf '%032x' 1)
sel=$("$py" -c 'import sys,urllib.parse as u; print(u.quote("{service_name=\"svc-grpc\",trace_id=\"%s\"}" % sys.argv[1]))' "$tid")
curl -fs -H "$auth" "$url/api/v1/render?query=$sel&type=cpu:samples&$range&format=folded" \
    >"$tmp/trace.folded"
[ "$(wc -l <"$tmp/trace.folded")" = 1 ] || fail "trace $tid: $(wc -l <"$tmp/trace.folded") stacks, want the one linked"
grep -qxF "$(cat "$tmp/trace.folded")" "$tmp/all.folded" || fail "trace $tid's stack is not the capture's"
curl -fs -H "$auth" "$url/api/v1/label_values?name=process_pid" | grep -q '^\[\]$' ||
    fail "a numeric sample attribute (process.pid) became a series label"

# ---- partial success: two bad profiles refused with the reason, the good one stored ----
c build "$perf" "$base" paired svc-partial "$tmp/p.pb"
c bad "$tmp/p.pb" "$tmp/bad.pb"
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H 'Content-Type: application/x-protobuf' \
    --data-binary @"$tmp/bad.pb" "$url/v1development/profiles")
[ "$code" = 200 ] || fail "partial request: $code"
resp=$(c response "$tmp/r")
case $resp in "2 2 profiles rejected; the first: profile 2: stack_table index 1000000 out of range"*) ;;
*) fail "partial success: '$resp'" ;; esac
curl -fs -H "$auth" "$url/api/v1/render?query=$(q svc-partial)&type=cpu:samples&$range&format=folded" |
    sort >"$tmp/partial"
cmp -s "$tmp/partial" "$tmp/want.samples" || fail "the good profile of the partial request"
c json "$tmp/bad.pb" "$tmp/bad.json"
curl -s -o "$tmp/r" -H "$auth" -H 'Content-Type: application/json' --data-binary @"$tmp/bad.json" \
    "$url/v1development/profiles"
resp=$(c response "$tmp/r" json)
case $resp in "2 2 profiles rejected; the first: profile 2: stack_table index"*) ;;
*) fail "JSON partial success: '$resp'" ;; esac

# ---- tenants: x-scope-orgid metadata ----
c build "$perf" "$base" timestamps svc-tenant "$tmp/t.pb"
out=$(c grpc "127.0.0.1:$gport" "$tmp/t.pb" --token s3cret --tenant team-b)
[ "$out" = "ok 0 " ] || fail "gRPC export with a tenant: $out"
curl -fs -H "$auth" "$url/api/v1/series?query=$(q svc-tenant)&$range" | grep -q svc-tenant &&
    fail "the tenant's series is visible to the default tenant"
curl -fs -H "$auth" -H 'X-Scope-OrgID: team-b' "$url/api/v1/series?query=$(q svc-tenant)&$range" |
    grep -q svc-tenant || fail "the tenant's series is missing"
echo "ok: OTLP/gRPC, HTTP protobuf, JSON and gzip render what /ingest renders; heatmaps equal the perf script's; refusals and partial success"
