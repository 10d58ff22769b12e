#!/bin/sh
# `scorch ingest` against a real server: files of every input format (folded, pprof made by
# `scorch convert`, gzipped, perf script text) detected and pushed through /ingest with the
# token from --token-file, the name's labels and the tenant; each stored series renders what
# `scorch top --format tsv` reads from its file; the default name is the file's name; the
# first file the server refuses stops the run with exit 1 and the server's reason (the files
# after it are not pushed); a wrong token and an unreachable server fail with a reason.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd curl "curl"
e2e_tmp
set -- $(free_ports 2)
url=http://127.0.0.1:$1
dead=http://127.0.0.1:$2
echo "tok3n" >"$tmp/token"
echo "nope" >"$tmp/wrong"
printf 'auth: {token_file: %s}\n' "$tmp/token" >"$tmp/scorch.yaml"
"$SCORCH" server --config "$tmp/scorch.yaml" --data "$tmp/data" --listen "127.0.0.1:$1" \
    2>"$tmp/server.log" &
pids="$pids $!"
wait_http "$url/healthz"
auth="Authorization: Bearer tok3n"

printf 'main;parse;lex 30\nmain;parse 10\nmain;eval;alloc 55\nmain;eval 5\n' >"$tmp/a.folded"
"$SCORCH" convert --to pprof "$tmp/a.folded" -o "$tmp/b.pb.gz" || fail "convert"
printf 'main;run;spin 7\nmain;run 3\n' | gzip >"$tmp/c.folded.gz"
f='\tffffffff81000000 %s+0x1 ([kernel.kallsyms])\n'
{
    for i in 1 2 3; do
        printf "prog 42 [000] 100.00000$i: 1000000 cpu-clock:\n$f$f\n" leaf root
    done
    printf "prog 42 [001] 100.500000: 1000000 cpu-clock:\n$f\n" root
} >"$tmp/d.perf.txt"

"$SCORCH" ingest --server "$url/" --token-file "$tmp/token" --name 'shop.cpu{env=test}' \
    "$tmp/a.folded" "$tmp/b.pb.gz" "$tmp/c.folded.gz" 2>"$tmp/err" ||
    fail "ingest of three files: $(cat "$tmp/err")"
grep -q "pushed 3 files" "$tmp/err" || fail "no summary: $(cat "$tmp/err")"
"$SCORCH" ingest --server "$url" --token-file "$tmp/token" "$tmp/d.perf.txt" 2>"$tmp/err" ||
    fail "ingest of perf script text: $(cat "$tmp/err")"
"$SCORCH" ingest --server "$url" --token-file "$tmp/token" --tenant team-x --name tenanted \
    <"$tmp/a.folded" 2>"$tmp/err" || fail "ingest from stdin: $(cat "$tmp/err")"

r() { curl -fs -H "$auth" ${3:+-H "$3"} "$url/api/v1/render?query=%7B$1%7D&type=$2&from=now-1h&until=now%2B1m&format=tsv"; }
# the three files of shop.cpu together: top of the three merged
"$SCORCH" convert --to folded "$tmp/b.pb.gz" >"$tmp/b.folded"
gunzip -c "$tmp/c.folded.gz" | cat "$tmp/a.folded" "$tmp/b.folded" - >"$tmp/all.folded"
"$SCORCH" top --format tsv --sample-index samples "$tmp/all.folded" >"$tmp/want"
r 'service_name%3D%22shop%22%2Cenv%3D%22test%22' cpu:samples >"$tmp/got" || fail "render shop"
cmp -s "$tmp/want" "$tmp/got" || { diff "$tmp/want" "$tmp/got"; fail "shop differs from its files"; }
# perf script text: the name defaults to the file's name without extensions
"$SCORCH" top --format tsv --sample-index samples "$tmp/d.perf.txt" >"$tmp/want"
r 'service_name%3D%22d%22' cpu:samples >"$tmp/got" || fail "render d"
cmp -s "$tmp/want" "$tmp/got" || { diff "$tmp/want" "$tmp/got"; fail "d differs from its file"; }
# the tenant's series lives in the tenant only
r 'service_name%3D%22tenanted%22' cpu:samples | grep -q lex && fail "tenant leaked"
r 'service_name%3D%22tenanted%22' cpu:samples 'X-Scope-OrgID: team-x' | grep -q lex ||
    fail "the tenant's series is missing"

# the first refusal stops the run, with the server's reason
printf 'no stacks here\n' >"$tmp/bad.folded"
printf 'main;late 1\n' >"$tmp/late.folded"
if "$SCORCH" ingest --server "$url" --token-file "$tmp/token" --format folded \
    "$tmp/bad.folded" "$tmp/late.folded" 2>"$tmp/err"; then
    fail "a refused file exited 0"
fi
grep -q "the server refused '$tmp/bad.folded' (HTTP 400): no stack samples in the folded body" \
    "$tmp/err" || fail "unexpected refusal message: $(cat "$tmp/err")"
curl -fs -H "$auth" "$url/api/v1/label_values?name=service_name" | grep -q late &&
    fail "a file after the refusal was pushed"
# not a format at all: refused before sending
printf '\001\002\003' >"$tmp/bin"
"$SCORCH" ingest --server "$url" "$tmp/bin" 2>"$tmp/err" && fail "binary junk exited 0"
grep -q "cannot push '$tmp/bin': not pprof, .*folded stacks" "$tmp/err" ||
    fail "junk: $(cat "$tmp/err")"
"$SCORCH" ingest --server "$url" --token-file "$tmp/wrong" "$tmp/a.folded" 2>"$tmp/err" &&
    fail "a wrong token exited 0"
grep -q "(HTTP 401): missing or wrong bearer token" "$tmp/err" || fail "wrong token: $(cat "$tmp/err")"
"$SCORCH" ingest --server "$dead" "$tmp/a.folded" 2>"$tmp/err" && fail "a dead server exited 0"
grep -q "cannot push '$tmp/a.folded' to $dead: " "$tmp/err" || fail "dead server: $(cat "$tmp/err")"
echo "ok: scorch ingest pushes folded, pprof, gzip and perf script files; refusals stop it"
