#!/bin/sh
# The settings table is what every surface shows: docs/config.md's table is `scorch settings
# --markdown` and its prose names every key with the table's default, every flag of the table
# is in its command's --help, the commands refuse a flag's value with the row's message, and
# the retention bounds how old a push may be.
set -u
. "$SCORCH_SRC/tests/lib.sh"
e2e_tmp

want=$(sed -n '/<!-- settings:begin -->/,/<!-- settings:end -->/p' "$SCORCH_SRC/docs/config.md" |
    sed '1d;$d')
got=$("$SCORCH" settings --markdown)
[ "$want" = "$got" ] || {
    printf '%s\n' "$got" >"$tmp/got.md"
    printf '%s\n' "$want" >"$tmp/want.md"
    diff -u "$tmp/want.md" "$tmp/got.md" | head -40
    fail "docs/config.md's table is not 'scorch settings --markdown' (regenerate it)"
}
printf '%s\n' "$got" >"$tmp/table.md"
need_cmd python3 python3
python3 "$SCORCH_SRC/tests/e2e/settings_doc.py" "$tmp/table.md" "$SCORCH_SRC/docs/config.md" ||
    fail "docs/config.md's prose disagrees with the settings table"
rows=$(printf '%s\n' "$got" | sed 1,2d | wc -l)
[ "$rows" -gt 40 ] || fail "only $rows settings in the table"

# a flag's value is read by the row: the same bounds and words as the config's key
out=$("$SCORCH" server --retention soon --data "$tmp/d" 2>&1) && fail "--retention soon accepted"
printf '%s' "$out" | grep -q "'--retention' must be a duration above 0 (like 30d), not 'soon'" ||
    fail "--retention soon: $out"
out=$("$SCORCH" server --storage mysql 2>&1) && fail "--storage mysql accepted"
printf '%s' "$out" | grep -q "'--storage' must be one of sqlite, clickhouse, not 'mysql'" ||
    fail "--storage mysql: $out"
out=$("$SCORCH" server --listen 4040 --data "$tmp/d" 2>&1) && fail "--listen 4040 accepted"
printf '%s' "$out" | grep -q "'--listen' must be host:port" || fail "--listen 4040: $out"
printf 'storage: {retention: soon}\n' >"$tmp/bad.yaml"
out=$("$SCORCH" server --config "$tmp/bad.yaml" --data "$tmp/d" 2>&1) && fail "retention: soon accepted"
printf '%s' "$out" | grep -q "'storage.retention' must be a duration above 0 (like 30d), not 'soon'" ||
    fail "storage.retention soon: $out"
out=$("$SCORCH" collapse perf --threads 17 /dev/null 2>&1) && fail "--threads 17 accepted"
printf '%s' "$out" | grep -q "'--threads' must be a count from 1 to 16, not '17'" ||
    fail "--threads 17: $out"

# every row walked through every surface that takes it: each command of a flag refuses a value
# just outside the bounds with the row's words and says the default in --help, each route of
# a parameter answers 400 with them (settings_walk.py)
need_cmd curl curl
"$SCORCH" settings --tsv >"$tmp/table.tsv"
set -- $(free_ports 1)
"$SCORCH" server --data "$tmp/walk" --listen "127.0.0.1:$1" --no-fsync >"$tmp/walk.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$1/healthz"
python3 "$SCORCH_SRC/tests/e2e/settings_walk.py" "$SCORCH" "$tmp/table.tsv" "http://127.0.0.1:$1" \
    "$SCORCH_SRC/docs/openapi.yaml" ||
    fail "a flag or parameter is not read through its row of the settings table"

# the retention is how old a push may be: a longer one takes older pushes (limits.max_age may
# only shorten it), the default refuses them
old=$(($(date +%s) - 35 * 86400))
push_old() { # port -> HTTP status of a push 35 days old
    curl -s -o "$tmp/push.out" -w '%{http_code}' --data-binary 'main;work 5' \
        "http://127.0.0.1:$1/ingest?name=old&format=folded&from=$old&until=$((old + 10))"
}
set -- $(free_ports 2)
"$SCORCH" server --data "$tmp/long" --listen "127.0.0.1:$1" --retention 40d --no-fsync \
    >"$tmp/long.log" 2>&1 &
pids="$pids $!"
"$SCORCH" server --data "$tmp/short" --listen "127.0.0.1:$2" --no-fsync >"$tmp/short.log" 2>&1 &
pids="$pids $!"
wait_http "http://127.0.0.1:$1/healthz"
wait_http "http://127.0.0.1:$2/healthz"
st=$(push_old "$1")
[ "$st" = 200 ] || fail "--retention 40d refused a push 35 days old: $st $(cat "$tmp/push.out")"
st=$(push_old "$2")
[ "$st" != 200 ] && grep -q "limits.max_age" "$tmp/push.out" ||
    fail "the default retention took a push 35 days old: $st $(cat "$tmp/push.out")"
echo "ok: $rows settings, docs/config.md agrees, flags and keys read through the table"
