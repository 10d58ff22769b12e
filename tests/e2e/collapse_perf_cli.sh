#!/bin/sh
# `scorch collapse perf` as a command: stdin, gzip, options, errors and exit statuses.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

{
    printf 'java 10/11 [000] 1.5: 7 cycles:\n\tffff inner+0x1 ([kernel.kallsyms])\n'
    printf '\tffff outer (/x/lib.so)\n\n'
    printf 'xz 12 [001] 1.6: 3 cycles:\n\tffff [unknown] (/usr/bin/xz)\n\n'
} >"$tmp/in.txt"

out=$("$SCORCH" collapse perf "$tmp/in.txt") || fail "plain run exited $?"
[ "$out" = "java;outer;inner 7
xz;[xz] 3" ] || fail "plain output: $out"

out=$("$SCORCH" collapse perf --tid --kernel <"$tmp/in.txt") || fail "stdin run exited $?"
[ "$out" = "java-10/11;outer;inner_[k] 7
xz-?/12;[xz] 3" ] || fail "stdin --tid --kernel output: $out"

gzip -c "$tmp/in.txt" >"$tmp/in.txt.gz"
out=$("$SCORCH" collapse perf --pid - <"$tmp/in.txt.gz") || fail "gzip run exited $?"
[ "$out" = "java-10;outer;inner 7
xz-?;[xz] 3" ] || fail "gzip --pid output: $out"

out=$("$SCORCH" collapse perf --addrs --threads 2 --event-filter cycles "$tmp/in.txt") ||
    fail "--addrs --threads --event-filter exited $?"
[ "$out" = "java;outer;inner 7
xz;[xz <ffff>] 3" ] || fail "--addrs output: $out"

out=$("$SCORCH" collapse perf --event-filter=instructions "$tmp/in.txt") || fail "filter exited $?"
[ -z "$out" ] || fail "--event-filter=instructions should print nothing: $out"

: >"$tmp/empty"
out=$("$SCORCH" collapse perf "$tmp/empty") || fail "empty input exited $?"
[ -z "$out" ] || fail "empty input printed: $out"

"$SCORCH" collapse perf --help >"$tmp/help" || fail "--help exited $?"
grep -q -- '--event-filter' "$tmp/help" || fail "--help does not list --event-filter"
"$SCORCH" collapse --help >/dev/null || fail "collapse --help exited $?"

"$SCORCH" collapse perf "$tmp/missing.txt" >/dev/null 2>"$tmp/err"
st=$?
[ "$st" -eq 1 ] || fail "missing file: exit status $st, want 1"
grep -q "^scorch: cannot read '$tmp/missing.txt': " "$tmp/err" ||
    fail "missing file message: $(cat "$tmp/err")"

for args in "--bogus" "--inline" "--threads 0" "--threads" "--event-filter" "a b"; do
    # shellcheck disable=SC2086
    "$SCORCH" collapse perf $args >/dev/null 2>"$tmp/err"
    st=$?
    [ "$st" -eq 2 ] || fail "'$args': exit status $st, want 2"
    grep -q '^scorch: collapse perf: ' "$tmp/err" || fail "'$args' message: $(cat "$tmp/err")"
done
"$SCORCH" collapse >/dev/null 2>&1
[ $? -eq 2 ] || fail "collapse without a collapser should exit 2"
"$SCORCH" collapse folded >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown collapser should exit 2"

[ "$fails" -eq 0 ] && echo ok
[ "$fails" -eq 0 ]
