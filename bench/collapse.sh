#!/bin/sh
# collapse.sh - `scorch collapse perf` against stackcollapse-perf.pl (and inferno-collapse-perf
# when it is on PATH) on the same ~35 MB perf script, in the same run: checks that the outputs
# agree and prints the best of 3 wall times, MB/s and the ratios.
#
# usage: bench/collapse.sh [FLAMEGRAPH_DIR]    (or FLAMEGRAPH_DIR=... bench/collapse.sh)
# env:   SCORCH (default build/scorch), SCORCH_TESTDATA (default ../shared/testdata),
#        BENCH_MB (input size, default 35), BENCH_FLAGS (e.g. "--all --tid")
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch=${SCORCH:-$root/build/scorch}
testdata=${SCORCH_TESTDATA:-$root/../shared/testdata}
fg=${1:-${FLAMEGRAPH_DIR:-}}
mb=${BENCH_MB:-35}
flags=${BENCH_FLAGS:-}
src=$testdata/perf/system-wide-go-xz.perf.txt

[ -x "$scorch" ] || { echo "no scorch binary at '$scorch' (run 'make build')" >&2; exit 1; }
[ -f "$src" ] || { echo "no test data at '$src' (set SCORCH_TESTDATA)" >&2; exit 1; }
if [ -n "$fg" ] && [ ! -f "$fg/stackcollapse-perf.pl" ]; then
    echo "no stackcollapse-perf.pl in '$fg'" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
input=$tmp/input.perf.txt
: > "$input"
while [ "$(wc -c < "$input")" -lt $((mb * 1000000)) ]; do
    cat "$src" >> "$input"
done
bytes=$(wc -c < "$input")
echo "input: $bytes bytes ($(basename "$src") repeated), flags: ${flags:-none}, $(nproc) CPUs"

# best_of OUT CMD...: runs CMD three times with stdout to OUT; prints the best wall time (s).
best_of() {
    out=$1
    shift
    perl -MTime::HiRes=time -e '
        my $out = shift; my $best = 1e9;
        for (1 .. 3) {
            my $t = time;
            open(my $save, ">&", \*STDOUT) or die; open(STDOUT, ">", $out) or die;
            my $rc = system(@ARGV);
            open(STDOUT, ">&", $save) or die;
            die "failed: @ARGV\n" if $rc;
            my $d = time - $t; $best = $d if $d < $best;
        }
        printf "%.4f\n", $best;' "$out" "$@"
}

report() { # name seconds
    perl -e 'printf "%-26s %9.1f ms %9.1f MB/s\n", $ARGV[0], $ARGV[1] * 1e3, $ARGV[2] / $ARGV[1] / 1e6' \
        "$1" "$2" "$bytes"
}

# shellcheck disable=SC2086
t_scorch=$(best_of "$tmp/scorch.out" "$scorch" collapse perf $flags "$input")
report "scorch collapse perf" "$t_scorch"
sort "$tmp/scorch.out" > "$tmp/scorch.sorted"

compare() { # name seconds output
    if sort "$3" | cmp -s - "$tmp/scorch.sorted"; then
        same="outputs agree"
    else
        same="OUTPUTS DIFFER"
        status=1
    fi
    report "$1" "$2"
    perl -e 'printf "  scorch is %.1fx faster (%s)\n", $ARGV[0] / $ARGV[1], $ARGV[2]' \
        "$2" "$t_scorch" "$same"
}

status=0
if [ -n "$fg" ]; then
    # shellcheck disable=SC2086
    t_perl=$(best_of "$tmp/perl.out" perl "$fg/stackcollapse-perf.pl" $flags "$input")
    compare "stackcollapse-perf.pl" "$t_perl" "$tmp/perl.out"
else
    echo "(pass a FlameGraph checkout, or set FLAMEGRAPH_DIR, to compare with stackcollapse-perf.pl)"
fi
if command -v inferno-collapse-perf > /dev/null 2>&1; then
    # shellcheck disable=SC2086
    t_inf=$(best_of "$tmp/inferno.out" inferno-collapse-perf $flags "$input")
    compare "inferno-collapse-perf" "$t_inf" "$tmp/inferno.out"
fi
exit $status
