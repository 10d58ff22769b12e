#!/bin/sh
# How the commands take their inputs: perf script without call chains and with exited tasks,
# a heatmap of samples without timestamps, empty and bad files (one message, whichever
# command reads them), functions without names. Inputs are made here.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

# perf record without -g: one line per sample, comm right-aligned, no empty lines
cat >"$tmp/nog.txt" <<'EOF'
              sh  5894   681.403828:    1001001 cpu-clock:      55b3b748ecec [unknown] (/usr/bin/dash)
              sh  5894   681.407844:    1001001 cpu-clock:      7f567dd9f930 malloc+0x0 (/usr/lib/x86_64-linux-gnu/libc.so.6)
              sh  5894   682.408844:    1001001 cpu-clock:      7f567dd9f930 malloc+0x0 (/usr/lib/x86_64-linux-gnu/libc.so.6)
             :-1    -1 [000] 682.5: 1001001 cpu-clock:  ffffffff81 native_safe_halt+0x6 ([kernel.kallsyms])
EOF
# collapse perf reads as stackcollapse-perf.pl (nothing), and says what it left out;
# --no-quirks (and every other reader) takes each as a one-frame sample
out=$("$SCORCH" collapse perf "$tmp/nog.txt" 2>"$tmp/err") || fail "collapse perf without call chains exited $?"
[ -z "$out" ] || fail "collapse perf without call chains, as the script: $out"
grep -q "left out 4 one-line samples (a recording without call chains), as stackcollapse-perf.pl does; --no-quirks" "$tmp/err" ||
    fail "collapse perf without call chains: no warning: $(cat "$tmp/err")"
out=$("$SCORCH" collapse perf --no-quirks "$tmp/nog.txt") || fail "collapse perf --no-quirks exited $?"
[ "$out" = ":-1;native_safe_halt 1001001
sh;[dash] 1001001
sh;malloc 2002002" ] || fail "collapse perf --no-quirks without call chains: $out"
"$SCORCH" top --format tsv "$tmp/nog.txt" >"$tmp/top" || fail "top of perf script without call chains"
grep -q "^2002002	2002002	malloc$" "$tmp/top" || fail "top: $(cat "$tmp/top")"
"$SCORCH" heatmap "$tmp/nog.txt" >"$tmp/hm" || fail "heatmap of perf script without call chains"
grep -q '^{"start":681.403828,"rows":50,"cols":2,' "$tmp/hm" || fail "heatmap: $(cat "$tmp/hm")"

# exited tasks: one process ":-1", not one per timestamp (collapse perf: as the script
# reads them unless --no-quirks; the series of a push: tests/unit/test_split.c)
printf ':-1    -1 [000] 341.273027:    7 cpu-clock: \n\tffff f (/x)\n\n:-1    -1 [001] 341.274: 7 cpu-clock: \n\tffff f (/x)\n\n' >"$tmp/exit.txt"
out=$("$SCORCH" collapse perf --no-quirks "$tmp/exit.txt") || fail "collapse perf of exited tasks exited $?"
[ "$out" = ":-1;f 14" ] || fail "exited tasks: $out"
out=$("$SCORCH" collapse perf "$tmp/exit.txt") || fail "collapse perf of exited tasks exited $?"
[ "$out" = ":-1____-1_[000]_341.273027:;f 7
:-1____-1_[001]_341.274:;f 7" ] || fail "exited tasks, as the script: $out"
"$SCORCH" top --format tsv "$tmp/exit.txt" | grep -q "^14	14	f$" || fail "top of exited tasks"

# a heatmap needs timestamps: folded stacks and perf script without times have none
printf 'main;f 3\n' >"$tmp/f.folded"
printf 'sh  5894 cpu-clock: \n\tffff f (/x)\n\n' >"$tmp/notime.txt"
for f in f.folded notime.txt; do
    "$SCORCH" heatmap "$tmp/$f" >"$tmp/out" 2>"$tmp/err"
    st=$?
    [ "$st" -eq 1 ] || fail "heatmap of $f: exit status $st, want 1 ($(cat "$tmp/out"))"
    grep -q "^scorch: cannot make a heatmap of '$tmp/$f': no sample has a timestamp" "$tmp/err" ||
        fail "heatmap of $f: $(cat "$tmp/err")"
    [ -s "$tmp/out" ] && fail "heatmap of $f printed a map"
done

# empty files: refused as go tool pprof refuses them, but an empty perf script collapses
# to nothing (as stackcollapse-perf.pl)
: >"$tmp/empty"
printf '' | gzip >"$tmp/empty.gz"
for f in empty empty.gz; do
    for cmd in top "convert --to folded" heatmap callgraph "list ."; do
        # shellcheck disable=SC2086
        "$SCORCH" $cmd "$tmp/$f" >"$tmp/out" 2>"$tmp/err"
        st=$?
        [ "$st" -eq 1 ] || fail "$cmd $f: exit status $st, want 1"
        [ "$(cat "$tmp/err")" = "scorch: cannot read '$tmp/$f': empty input" ] ||
            fail "$cmd $f: $(cat "$tmp/err")"
    done
done
out=$("$SCORCH" collapse perf "$tmp/empty") || fail "collapse perf of an empty file exited $?"
[ -z "$out" ] || fail "collapse perf of an empty file printed: $out"

# a bad file gets the same message from every command that reads it
python3 "$SCORCH_SRC/tests/e2e/cli_pprof.py" no-types "$tmp/no-types.pb" &&
    python3 "$SCORCH_SRC/tests/e2e/cli_pprof.py" bad-location "$tmp/bad-location.pb" ||
    fail "cannot write the bad profiles"
printf 'goroutine profile: total 2\n2 @ 0x1 zz\n#\t0x1\tmain.f+0x1\t/a.go:3\n' >"$tmp/goroutine.txt"
printf 'not\001a profile\n' >"$tmp/garbage"
for f in no-types.pb bad-location.pb goroutine.txt garbage; do
    want=""
    for cmd in top "convert --to folded" "convert --to pprof" heatmap callgraph "list ."; do
        # shellcheck disable=SC2086
        "$SCORCH" $cmd "$tmp/$f" >"$tmp/out" 2>"$tmp/err"
        st=$?
        [ "$st" -eq 1 ] || fail "$cmd $f: exit status $st, want 1"
        msg=$(cat "$tmp/err")
        case "$msg" in
        "scorch: cannot read '$tmp/$f': "*) ;;
        *) fail "$cmd $f: $msg" ;;
        esac
        [ -z "$want" ] || [ "$msg" = "$want" ] || fail "$cmd $f says '$msg', top said '$want'"
        want=$msg
    done
    case "$f:$want" in
    goroutine.txt:*"malformed profile format"*) ;;
    goroutine.txt:*) fail "goroutine text: $want" ;;
    esac
done

# a function without a name: top's <unknown> row, and no empty frame in folded output
python3 "$SCORCH_SRC/tests/e2e/cli_pprof.py" nameless-bin "$tmp/nameless.pb" || fail "nameless"
"$SCORCH" top --format tsv "$tmp/nameless.pb" >"$tmp/top" 2>"$tmp/err" ||
    fail "top of a nameless function: $(cat "$tmp/err")"
grep -q "^0	5	\[prog\]$" "$tmp/top" || fail "top of a nameless function: $(cat "$tmp/top")"
out=$("$SCORCH" convert --to folded "$tmp/nameless.pb") || fail "convert of a nameless function"
[ "$out" = "main;0x0;leaf 5
main;x 3" ] || fail "convert --to folded of a nameless function: $out"
echo ok
