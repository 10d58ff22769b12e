#!/bin/sh
# long.sh - the long fuzz run: every target (or those named) through run.sh until it has
# executed RUNS inputs (10 M by default) or run CAP seconds (3600), one after another; then
# a table of executions, seconds, rate and result per target.
#
#   make fuzz && fuzz/long.sh                    # every target
#   RUNS=1000000 CAP=600 fuzz/long.sh pprof otlp  # some, smaller
#
# Exit 1 when any target failed (its input is in build/fuzz/artifacts/<target>/).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${FUZZ_BUILD:-$here/../build/fuzz}
runs=${RUNS:-10000000}
cap=${CAP:-3600}
if [ $# -eq 0 ]; then
    set -- $(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
fi
rc=0
table=""
for t in "$@"; do
    start=$(date +%s)
    if FUZZ_RUNS=$runs sh "$here/run.sh" "$build/fuzz_$t" "$cap" >/dev/null 2>&1; then
        result=ok
    else
        result=FAILED rc=1
    fi
    secs=$(($(date +%s) - start))
    n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" 2>/dev/null |
        grep -o '[0-9]*$' | tail -n 1)
    n=${n:-0}
    line=$(printf '%-12s %12s %7s %9s  %s' "$t" "$n" "$secs" "$((n / (secs > 0 ? secs : 1)))/s" "$result")
    echo "$line" >&2
    table="$table$line
"
done
printf '%-12s %12s %7s %9s  %s\n' target executions seconds rate result
printf '%s' "$table"
exit $rc
