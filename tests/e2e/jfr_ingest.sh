#!/bin/sh
# JFR pushed as Pyroscope's Java agent pushes it: POST /ingest?format=jfr with a multipart
# body of a `jfr` part (gzipped) and a `labels` part (Pyroscope's LabelsSnapshot protobuf).
# Each kind of sample becomes its own profile (cpu, wall, heap, mutex, block) under the name's
# labels; the context labels split the samples into series a selector picks (the
# endpoint="/api/a" context has exactly its own stacks); sampleRate sets a CPU sample's
# worth; the samples keep their times (the heatmap counts them). The JDK's own recording,
# pushed as a plain gzipped body without sampleRate, renders what `scorch top` reads from the
# file, and `scorch ingest` detects and pushes a .jfr. Refused: a multipart body with both a
# profile and a jfr part, a malformed labels part, a recording that is not one.
# ctest-timeout: 90
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd curl "curl"
need_python json
e2e_tmp
set -- $(free_ports 1)
url=http://127.0.0.1:$1
"$SCORCH" server --data "$tmp/data" --listen "127.0.0.1:$1" 2>"$tmp/server.log" &
pids="$pids $!"
wait_http "$url/healthz"

$py "$SCORCH_SRC/tests/e2e/jfr_synth.py" "$tmp" || fail "jfr_synth.py"
gzip -c "$tmp/synth.jfr" >"$tmp/synth.jfr.gz"
gzip -c "$tmp/labels.pb" >"$tmp/labels.pb.gz"
now=$(date +%s)
q="name=synth%7Benv%3Dtest%7D&format=jfr&spyName=javaspy&sampleRate=100&from=$((now - 10))&until=$now"
curl -s -o "$tmp/resp" -w '%{http_code}' -F "jfr=@$tmp/synth.jfr.gz" \
    -F "labels=@$tmp/labels.pb.gz" "$url/ingest?$q" >"$tmp/code" || fail "push"
[ "$(cat "$tmp/code")" = 200 ] || fail "push: $(cat "$tmp/code") $(cat "$tmp/resp")"
grep -q '"samples":17,"profile":"cpu,wall,heap,mutex,block"' "$tmp/resp" ||
    fail "push answered $(cat "$tmp/resp")"

r() { # query type [format]
    curl -fs "$url/api/v1/render?query=$(printf '%s' "$1" | $py -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read()))')&type=$2&from=now-1h&until=now%2B1m&format=tsv"
}
expect() { # query type want-file
    r "$1" "$2" >"$tmp/got" || fail "render $1 $2"
    cmp -s "$3" "$tmp/got" || { diff "$3" "$tmp/got" >&2; fail "render $1 $2 differs"; }
}
printf 'flat\tcum\tfunction\n70000000\t70000000\tApp.leaf\n20000000\t20000000\tApp.othér\n10000000\t10000000\tFoo$$Lambda_.run\n0\t100000000\tApp.main\n0\t70000000\tApp.mid\n' >"$tmp/w.all"
expect '{service_name="synth",env="test"}' cpu:cpu "$tmp/w.all"
printf 'flat\tcum\tfunction\n70000000\t70000000\tApp.leaf\n0\t70000000\tApp.main\n0\t70000000\tApp.mid\n' >"$tmp/w.a"
expect '{service_name="synth",endpoint="/api/a",user="u1"}' cpu:cpu "$tmp/w.a"
printf 'flat\tcum\tfunction\n20000000\t20000000\tApp.othér\n0\t20000000\tApp.main\n' >"$tmp/w.b"
expect '{service_name="synth",endpoint="/api/b"}' cpu:cpu "$tmp/w.b"
printf 'flat\tcum\tfunction\n20000000\t20000000\tApp.leaf\n0\t20000000\tApp.main\n0\t20000000\tApp.mid\n' >"$tmp/w.wall"
expect '{service_name="synth"}' wall:wall "$tmp/w.wall"
printf 'flat\tcum\tfunction\n4000\t4000\tApp.othér\n0\t4000\tApp.main\n' >"$tmp/w.tlab"
expect '{service_name="synth"}' heap:alloc_in_new_tlab_bytes "$tmp/w.tlab"
printf 'flat\tcum\tfunction\n70000\t70000\tFoo$$Lambda_.run\n0\t70000\tApp.main\n' >"$tmp/w.outside"
expect '{service_name="synth"}' heap:alloc_outside_tlab_bytes "$tmp/w.outside"
printf 'flat\tcum\tfunction\n5000\t5000\tApp.leaf\n0\t5000\tApp.main\n0\t5000\tApp.mid\n' >"$tmp/w.mutex"
expect '{service_name="synth"}' mutex:delay "$tmp/w.mutex"
printf 'flat\tcum\tfunction\n2000000\t2000000\tApp.othér\n0\t2000000\tApp.main\n' >"$tmp/w.block"
expect '{service_name="synth",spy_name="javaspy"}' block:delay "$tmp/w.block"
curl -fs "$url/api/v1/label_values?name=endpoint" | grep -q '"/api/a","/api/b"' ||
    fail "endpoint values: $(curl -s "$url/api/v1/label_values?name=endpoint")"
# the samples' own times: the heatmap counts all ten CPU samples
curl -fs "$url/api/v1/heatmap?query=%7Bservice_name%3D%22synth%22%7D&type=cpu:cpu&from=now-1h&until=now%2B1m" \
    >"$tmp/heat" || fail "heatmap"
$py - "$tmp/heat" <<'EOF' || fail "heatmap: $(cat "$tmp/heat")"
import json, sys
h = json.load(open(sys.argv[1]))
n = sum(sum(c) for c in h["values"])
sys.exit(0 if n == 10 and h["cols"] >= 2 else 1)
EOF

# refusals
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' -F "profile=@$tmp/synth.jfr" -F "jfr=@$tmp/synth.jfr" \
    "$url/ingest?name=x&format=jfr")
[ "$code" = 400 ] || fail "profile and jfr parts: $code $(cat "$tmp/resp")"
printf '\377\377\377' >"$tmp/bad.pb"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' -F "jfr=@$tmp/synth.jfr" -F "labels=@$tmp/bad.pb" \
    "$url/ingest?name=x")
[ "$code" = 400 ] && grep -q "LabelsSnapshot" "$tmp/resp" ||
    fail "malformed labels: $code $(cat "$tmp/resp")"
code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --data-binary 'FLR-not-really' "$url/ingest?name=x&format=jfr")
[ "$code" = 400 ] || fail "not a recording: $code $(cat "$tmp/resp")"
curl -fs "$url/api/v1/label_values?name=service_name" | grep -q '"x"' && fail "a refused push stored"

# the JDK's own recording: a plain gzipped body, the recording's own period
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
    cat >"$tmp/Spin.java" <<'EOF'
public class Spin {
    static volatile long sink;
    static long spin(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i * 31L) ^ (s >>> 3); return s; }
    public static void main(String[] a) {
        long end = System.nanoTime() + 2000000000L;
        while (System.nanoTime() < end) sink += spin(1000000);
    }
}
EOF
    (cd "$tmp" && javac Spin.java && java -XX:StartFlightRecording=filename=spin.jfr,settings=profile \
        Spin >java.log 2>&1) || { cat "$tmp/java.log" >&2; fail "java"; }
    gzip -c "$tmp/spin.jfr" >"$tmp/spin.jfr.gz"
    curl -fs -o "$tmp/resp" --data-binary "@$tmp/spin.jfr.gz" "$url/ingest?name=spin&format=jfr" ||
        fail "JDK recording: $(cat "$tmp/resp")"
    "$SCORCH" top --format tsv --sample-index cpu "$tmp/spin.jfr" >"$tmp/w.spin" || fail "top spin"
    grep -q "Spin.spin" "$tmp/w.spin" || fail "no Spin.spin in $(cat "$tmp/w.spin")"
    expect '{service_name="spin"}' cpu:cpu "$tmp/w.spin"
    # scorch ingest detects the format of a .jfr file
    "$SCORCH" ingest --server "$url" --name spun "$tmp/spin.jfr" 2>"$tmp/err" ||
        fail "scorch ingest: $(cat "$tmp/err")"
    expect '{service_name="spun"}' cpu:cpu "$tmp/w.spin"
else
    echo "jfr_ingest: no JDK here, the JDK recording's part is skipped" >&2
fi
echo "jfr_ingest: ok"
