#!/bin/sh
# startup.sh - what a run costs before it does anything: `scorch --version` and `scorch top`
# of a small pprof file (4 stacks), in CPU time (perf stat's task-clock, the mean of 50 runs),
# with the number of shared libraries the binary maps at start (ldd). Given a second binary
# (e.g. one built from an older commit), the two are measured in turn, ROUNDS times each, so
# the machine's neighbours weigh on both alike; prints every round and the median.
#
# usage: bench/startup.sh [OTHER_SCORCH [ROUNDS]]     (default: build/scorch alone, 5 rounds)
# env:   SCORCH (default build/scorch)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
scorch=${SCORCH:-$root/build/scorch}
other=${1:-}
rounds=${2:-5}
[ -x "$scorch" ] || { echo "no scorch binary at '$scorch' (run 'make build')" >&2; exit 1; }
[ -z "$other" ] || [ -x "$other" ] || { echo "no binary at '$other'" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed (linux-perf)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
printf 'main;parse;lex 30\nmain;parse 10\nmain;eval;alloc 55\nmain;eval 5\n' >"$tmp/a.folded"
"$scorch" convert --to pprof "$tmp/a.folded" -o "$tmp/small.pb.gz"

# cpu_ms BIN ARGS...: the mean task-clock of 50 runs, in ms
cpu_ms() {
    perf stat -r 50 -x, -e task-clock -o "$tmp/stat" "$@" >/dev/null 2>&1 ||
        { echo "perf stat $* failed" >&2; exit 1; }
    awk -F, '$3 ~ /task-clock/ {printf "%.2f", $1}' "$tmp/stat"
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bins=$scorch
[ -z "$other" ] || bins="$other $scorch"
i=0
for b in $bins; do
    i=$((i + 1))
    echo "binary $i: $b ($(ldd "$b" | wc -l) shared objects at start)"
    : >"$tmp/version.$i"
    : >"$tmp/top.$i"
done
r=0
while [ "$r" -lt "$rounds" ]; do
    r=$((r + 1))
    i=0
    line="round $r:"
    for b in $bins; do
        i=$((i + 1))
        v=$(cpu_ms "$b" --version)
        t=$(cpu_ms "$b" top "$tmp/small.pb.gz")
        echo "$v" >>"$tmp/version.$i"
        echo "$t" >>"$tmp/top.$i"
        line="$line  binary $i: --version $v ms, top $t ms"
    done
    echo "$line"
done
i=0
for b in $bins; do
    i=$((i + 1))
    echo "median, binary $i: --version $(median <"$tmp/version.$i") ms of CPU," \
        "top small.pb.gz $(median <"$tmp/top.$i") ms of CPU"
done
