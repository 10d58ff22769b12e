#!/bin/sh
# run.sh - runs one libFuzzer target: replays its regressions, then fuzzes for N seconds.
#
#   fuzz/run.sh build/fuzz/fuzz_pprof 300
#   FUZZ_RUNS=10000000 fuzz/run.sh build/fuzz/fuzz_pprof 3600   # stops at 10 M executions
#   FUZZ_OPTS="-detect_leaks=0 -entropic=0" fuzz/run.sh ...      # more libFuzzer flags
#
# Inputs: fuzz/regressions/<target>/ (every input that ever crashed, replayed first, each
# must pass) and fuzz/corpus/<target>/ (the committed seeds, read only). New inputs go to a
# work corpus beside the binary (<build>/corpus-work/<target>), never into the repository;
# crashes go to <build>/artifacts/<target>/. Exit: 0 clean, 1 on any crash, leak, timeout
# or out-of-memory, 77 when the binary is missing.
set -u

bin=${1:-}
secs=${2:-60}
if [ -z "$bin" ]; then
    echo "usage: $0 FUZZER-BINARY [SECONDS]" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "skip: fuzzer '$bin' is not built (run 'make fuzz')" >&2
    exit 77
fi

here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$bin")
target=${name#fuzz_}
build=$(cd "$(dirname "$bin")" && pwd)
work=$build/corpus-work/$target
artifacts=$build/artifacts/$target
seeds=$here/corpus/$target
regressions=$here/regressions/$target
mkdir -p "$work" "$artifacts"

# libFuzzer exits 77 on a crash by default, which CTest would take for "skipped": ask for 1.
# Inputs are small, so a second per input is already very slow; 2 GB of RSS is far above what
# the fuzz limits allow a decoder to use.
opts="-error_exitcode=1 -timeout_exitcode=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536
 -artifact_prefix=$artifacts/ -print_final_stats=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}${UBSAN_OPTIONS:+:}print_stacktrace=1:halt_on_error=1"

if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions" 2>/dev/null)" ]; then
    echo "fuzz/$target: replaying $(ls "$regressions" | wc -l) regression inputs" >&2
    # shellcheck disable=SC2086
    if ! "$bin" $opts "$regressions"/* >"$build/$target-regressions.log" 2>&1; then
        cat "$build/$target-regressions.log" >&2
        echo "fuzz/$target: a regression input fails again" >&2
        exit 1
    fi
fi

[ "$secs" -gt 0 ] 2>/dev/null || exit 0
dirs="$work"
[ -d "$seeds" ] && dirs="$dirs $seeds"
[ -d "$regressions" ] && dirs="$dirs $regressions"
echo "fuzz/$target: fuzzing for ${secs}s (work corpus $work)" >&2
# shellcheck disable=SC2086
"$bin" $opts ${FUZZ_OPTS:-} -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} $dirs >"$build/$target.log" 2>&1
rc=$?
tail -n 12 "$build/$target.log" >&2
if [ "$rc" -ne 0 ]; then
    echo "fuzz/$target: failed (exit $rc); input saved in $artifacts/, full log $build/$target.log" >&2
    exit 1
fi
exit 0
