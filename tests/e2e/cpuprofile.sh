#!/bin/sh
# cpuprofile.sh - V8 CPU profiles and speedscope files as inputs. `node --cpu-prof` profiles
# a small program; what the .cpuprofile says, read by tests/e2e/cpuprofile_expect.py with
# Python's json alone, is what scorch reads from it:
#   1. convert --to folded: the same stacks with the same sample counts and time deltas;
#      top's flat column sums to the deltas' sum; the heatmap has every sample, starting
#      at the first sample's time;
#   2. the same profile as a Chrome trace (ProfileChunk events, {"traceEvents"} and a bare
#      array): the same folded stacks;
#   3. speedscope written by scorch reads back to the same folded stacks of every sample
#      type (the .cpuprofile, perf script text with two types);
#   4. /ingest: `scorch ingest` detects both formats (and names the series after the file
#      without .cpuprofile), format=cpuprofile and format=speedscope name them; the stored
#      series render as top reads the files.
# Skips (77) without node.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd node "Node.js writes the .cpuprofile"
need_cmd python3 "python3 reads the .cpuprofile independently"
need_cmd curl "curl"
e2e_tmp
expect="python3 -B $SCORCH_SRC/tests/e2e/cpuprofile_expect.py"

cat >"$tmp/prog.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function spin() { let s = 0; for (let i = 0; i < 2e7; i++) s += Math.sqrt(i); return s; }
function main() { let t = 0; for (let k = 0; k < 3; k++) { t += spin(); t += fib(25); } return t; }
main();
JS
(cd "$tmp" && node --cpu-prof --cpu-prof-interval 250 --cpu-prof-name prof.cpuprofile prog.js) ||
    fail "node --cpu-prof"
prof=$tmp/prof.cpuprofile
[ -s "$prof" ] || fail "node wrote no .cpuprofile"

# 1. stacks, totals, heatmap
for t in samples cpu; do
    $expect folded "$prof" $t >"$tmp/want.$t" || fail "cpuprofile_expect.py"
    "$SCORCH" convert --to folded --sample-index $t "$prof" >"$tmp/got.$t" || fail "convert $t"
    [ -s "$tmp/want.$t" ] || fail "no $t stacks"
    cmp -s "$tmp/want.$t" "$tmp/got.$t" ||
        { diff "$tmp/want.$t" "$tmp/got.$t" | head; fail "$t stacks differ from the file's"; }
done
set -- $($expect totals "$prof")
nsamples=$1 cpu_ns=$2 first_ns=$3
flat=$("$SCORCH" top --format tsv "$prof" | awk 'NR > 1 { s += $1 } END { printf "%d", s }')
[ "$flat" = "$cpu_ns" ] || fail "top's flat sums to $flat ns, the deltas to $cpu_ns"
grep -q spin "$tmp/want.cpu" || fail "the hot function is not in the profile"
hot=$(sort -t' ' -k2,2nr "$tmp/want.cpu" | head -1 | sed 's/ [0-9]*$//; s/.*;//')
top1=$("$SCORCH" top --format tsv "$prof" | sed -n 2p | cut -f3)
[ "$hot" = "$top1" ] || fail "top's first function is '$top1', the file's hottest leaf '$hot'"
"$SCORCH" heatmap "$prof" >"$tmp/heat.json" || fail "heatmap"
python3 - "$tmp/heat.json" "$nsamples" "$first_ns" <<'PY' || fail "heatmap"
import json, sys
h = json.load(open(sys.argv[1]))
n = sum(sum(c) for c in h["values"])
assert n == int(sys.argv[2]), (n, sys.argv[2])
assert abs(h["start"] - int(sys.argv[3]) / 1e9) < 1e-6, (h["start"], sys.argv[3])
PY

# 2. Chrome's trace files
$expect trace "$prof" "$tmp/trace.json" && $expect trace "$prof" "$tmp/trace-array.json" array ||
    fail "cpuprofile_expect.py trace"
for f in trace trace-array; do
    "$SCORCH" convert --to folded "$tmp/$f.json" >"$tmp/got.trace" || fail "convert $f"
    cmp -s "$tmp/want.cpu" "$tmp/got.trace" || fail "$f: stacks differ from the .cpuprofile's"
done

# 3. speedscope, written and read back
f='\tffffffff81000000 %s+0x1 ([kernel.kallsyms])\n'
{
    for i in 1 2 3; do printf "prog 42 [000] 100.00000$i: 250000 cpu-clock:\n$f$f\n" leaf root; done
    printf "prog 42 [001] 100.500000: 1000000 cpu-clock:\n$f\n" root
} >"$tmp/perf.txt"
for in in "$prof" "$tmp/perf.txt"; do
    "$SCORCH" convert --to speedscope "$in" -o "$tmp/s.json" || fail "speedscope of $in"
    for t in samples 1; do
        "$SCORCH" convert --to folded --sample-index $t "$in" >"$tmp/a" || fail "folded of $in"
        "$SCORCH" convert --to folded --sample-index $t - <"$tmp/s.json" >"$tmp/b" ||
            fail "folded of its speedscope"
        [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" ||
            { diff "$tmp/a" "$tmp/b" | head; fail "$in: speedscope read back differs ($t)"; }
    done
done
"$SCORCH" convert --to speedscope "$prof" -o "$tmp/prof.speedscope.json" || fail "speedscope"

# 4. /ingest
set -- $(free_ports 1)
url=http://127.0.0.1:$1
"$SCORCH" server --data "$tmp/data" --listen "127.0.0.1:$1" 2>"$tmp/server.log" &
pids="$pids $!"
wait_http "$url/healthz"
# no --name: the file's name without .cpuprofile
"$SCORCH" ingest --server "$url" "$prof" 2>"$tmp/err" ||
    fail "ingest of the .cpuprofile: $(cat "$tmp/err")"
"$SCORCH" ingest --server "$url" --name v8b "$tmp/prof.speedscope.json" 2>"$tmp/err" ||
    fail "ingest of speedscope: $(cat "$tmp/err")"
curl -fs --data-binary @"$prof" "$url/ingest?name=v8c&format=cpuprofile" >/dev/null ||
    fail "format=cpuprofile"
gzip -c "$tmp/prof.speedscope.json" |
    curl -fs --data-binary @- "$url/ingest?name=v8d&format=speedscope" >/dev/null ||
    fail "format=speedscope (gzip)"
"$SCORCH" top --format tsv --sample-index cpu "$prof" >"$tmp/want"
for app in prof v8b v8c v8d; do
    curl -fs "$url/api/v1/render?query=%7Bservice_name%3D%22$app%22%7D&type=cpu:cpu&from=now-1h&until=now%2B1h&format=tsv" \
        >"$tmp/got" || fail "render $app"
    cmp -s "$tmp/want" "$tmp/got" || { diff "$tmp/want" "$tmp/got" | head; fail "$app differs"; }
done
code=$(curl -s -o "$tmp/body" -w '%{http_code}' --data-binary 'not json' \
    "$url/ingest?name=bad&format=cpuprofile")
[ "$code" = 400 ] && grep -q "bad JSON" "$tmp/body" || fail "junk as cpuprofile: $code $(cat "$tmp/body")"
echo "ok: .cpuprofile ($nsamples samples) and speedscope read as the files say, everywhere"
