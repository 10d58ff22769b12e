#!/bin/sh
# Pyroscope's push API (POST /push.v1.PusherService/Push, the Connect protocol Grafana
# Alloy's pyroscope.write speaks) with real pprofs: a Go program built here writes a CPU and
# a heap profile; a PushRequest (stubs from tests/proto/scorch_push.proto) carries them with
# labels, as application/proto, gzip-encoded proto (one member, and two: a trailer that
# claims too little) and application/json. The stored series
# must render exactly what `scorch top --format tsv` reads from the same files, with the
# profile named by __name__ (process_cpu -> cpu, memory -> heap) and Pyroscope's private
# __labels__ dropped. Refusals are Connect errors ({"code": ..., "message": ...}): a raw
# profile that is not pprof (nothing of the request stored), a wrong content type, no token.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd curl "curl"
need_cmd protoc "Debian's protobuf-compiler (scripts/install-deps.sh installs it)"
need_python google.protobuf
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
e2e_tmp
cp "$SCORCH_SRC"/tests/data/goprog/* "$tmp/"
(cd "$tmp" && go build -o prog .) || fail "go build failed"
"$tmp/prog" "$tmp" || fail "the Go program failed"
mkdir "$tmp/stubs"
protoc -I "$SCORCH_SRC/tests/proto" --python_out="$tmp/stubs" scorch_push.proto || fail "protoc"

# push.py OUT ENCODING SERVICE [BAD]: a PushRequest of the two profiles
cat >"$tmp/push.py" <<'PY'
import gzip, sys
sys.path.insert(0, sys.argv[1])
import scorch_push_pb2 as pb
from google.protobuf import json_format
out, encoding, service, d = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
req = pb.PushRequest()
for name, f in (("process_cpu", "cpu.pb.gz"), ("memory", "mem.pb.gz")):
    s = req.series.add()
    for k, v in (("__name__", name), ("service_name", service), ("env", "test"),
                 ("__delta__", "false")):
        s.labels.add(name=k, value=v)
    raw = open(d + "/" + f, "rb").read()
    s.samples.add(raw_profile=raw if name == "process_cpu" else gzip.decompress(raw),
                  ID="734fd599-6865-419e-9475-932762d8f469")
if len(sys.argv) > 6:
    req.series[1].samples.add(raw_profile=b"this is not a pprof")
data = (json_format.MessageToJson(req).encode() if encoding == "json"
        else req.SerializeToString())
if encoding == "gzip":
    data = gzip.compress(data)
elif encoding == "members":  # two gzip members: the trailer claims only the second's size
    data = gzip.compress(data[:len(data) // 2]) + gzip.compress(data[len(data) // 2:])
open(out, "wb").write(data)
PY
mk() { "$py" -B "$tmp/push.py" "$tmp/stubs" "$1" "$2" "$3" "$tmp" ${4:-} || fail "push.py"; }

set -- $(free_ports 1)
url=http://127.0.0.1:$1
echo "t0ken" >"$tmp/token"
printf 'auth: {token_file: %s}\n' "$tmp/token" >"$tmp/scorch.yaml"
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$1" \
    2>"$tmp/server.log" &
pids="$pids $!"
wait_http "$url/healthz"
auth="Authorization: Bearer t0ken"
push() { # push FILE CONTENT-TYPE [HEADER]: prints the status, the body in $tmp/r
    curl -s -o "$tmp/r" -w '%{http_code}' -H "$auth" -H "Content-Type: $2" \
        -H 'Connect-Protocol-Version: 1' ${3:+-H "$3"} --data-binary @"$1" \
        "$url/push.v1.PusherService/Push"
}

mk "$tmp/req.pb" proto goprog
mk "$tmp/req.gz" gzip goprog-gz
mk "$tmp/req.gz2" members goprog-gz2
mk "$tmp/req.json" json goprog-json
mk "$tmp/bad.pb" proto goprog-bad bad

# refusals
code=$(curl -s -o "$tmp/r" -w '%{http_code}' -H 'Content-Type: application/proto' \
    --data-binary @"$tmp/req.pb" "$url/push.v1.PusherService/Push")
[ "$code" = 401 ] || fail "no token: $code"
code=$(push "$tmp/req.pb" text/plain)
[ "$code" = 415 ] && grep -q '"code":"unimplemented"' "$tmp/r" || fail "text/plain: $code $(cat "$tmp/r")"
code=$(push "$tmp/bad.pb" application/proto)
[ "$code" = 400 ] && grep -q '"code":"invalid_argument","message":"series 1, sample 1: ' "$tmp/r" ||
    fail "a raw profile that is not pprof: $code $(cat "$tmp/r")"
curl -fs -H "$auth" "$url/api/v1/series?from=now-1d" | grep -q goprog-bad &&
    fail "a refused push stored its good profiles"

code=$(push "$tmp/req.pb" application/proto)
[ "$code" = 200 ] && [ ! -s "$tmp/r" ] || fail "proto push: $code $(cat "$tmp/r")"
code=$(push "$tmp/req.gz" application/proto 'Content-Encoding: gzip')
[ "$code" = 200 ] || fail "gzip push: $code $(cat "$tmp/r")"
# admitted at the claim, held to it (the gzip pprofs inside are not), measured, stored once
code=$(push "$tmp/req.gz2" application/proto 'Content-Encoding: gzip')
[ "$code" = 200 ] || fail "push of two gzip members: $code $(cat "$tmp/r")"
code=$(push "$tmp/req.json" application/json)
[ "$code" = 200 ] && [ "$(cat "$tmp/r")" = "{}" ] || fail "JSON push: $code $(cat "$tmp/r")"

"$SCORCH" top --format tsv "$tmp/cpu.pb.gz" >"$tmp/want.cpu"
"$SCORCH" top --format tsv --sample-index alloc_space "$tmp/mem.pb.gz" >"$tmp/want.alloc"
"$SCORCH" top --format tsv --sample-index inuse_space "$tmp/mem.pb.gz" >"$tmp/want.inuse"
[ "$(wc -l <"$tmp/want.cpu")" -gt 3 ] || fail "the CPU profile is nearly empty"
for s in goprog goprog-gz goprog-gz2 goprog-json; do
    q="query=%7Bservice_name%3D%22$s%22%7D&from=now-1h&until=now%2B1m&format=tsv"
    for t in cpu:cpu:want.cpu heap:alloc_space:want.alloc heap:inuse_space:want.inuse; do
        curl -fs -H "$auth" "$url/api/v1/render?$q&type=${t%:*}" >"$tmp/got" ||
            fail "render $s ${t%:*}"
        cmp -s "$tmp/got" "$tmp/${t##*:}" || {
            diff "$tmp/${t##*:}" "$tmp/got" | head -5
            fail "$s ${t%:*} differs from scorch top on the pushed file"
        }
    done
done
curl -fs -H "$auth" "$url/api/v1/series?query=%7Bservice_name%3D%22goprog%22%7D&from=now-1h" \
    >"$tmp/series"
grep -q '"env":"test"' "$tmp/series" || fail "the env label is missing: $(cat "$tmp/series")"
grep -q '__' "$tmp/series" && fail "private __labels__ were stored: $(cat "$tmp/series")"
curl -fs -H "$auth" "$url/api/v1/profile_types" | grep -q '"id":"heap:alloc_space"' ||
    fail "memory was not stored as heap"
echo "ok: Connect pushes (proto, gzip, two gzip members, JSON) of a Go program's pprofs render as scorch top reads them"
