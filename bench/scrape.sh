#!/bin/sh
# Benchmark: 200 simulated Go targets scraped every 15 s. One python3 asyncio process
# (tests/e2e/fake_pprof_target.py, mode "go") serves real profiles from
# ../shared/testdata/pprof on 200 loopback ports: CPU profiles after ?seconds=10, heap and
# allocs from the mem-*.pb.gz files, target-side ?seconds=15 deltas for allocs, mutex and
# block, as Go does. The scraper library runs in bench/scrape_bench.c (its own process), all
# seven profile types per target: 1,400 tasks, ~93 requests a second.
#
# Prints the schedule jitter two ways: the scraper's own (how late each request started
# against its slot) and the targets' (each request's arrival against the best grid of its
# target and type, so it includes the fake targets' delays), and the CPU of the scraper:
# its scraping thread (libcurl multi: schedule and I/O), its worker threads (gunzip, decode,
# type selection, deltas, encode) and the whole scrape_bench process; the fake targets run in
# another process and are not counted. The sink counts profiles (no store) unless
# BENCH_STORE=1, which writes them into a store in a temporary directory (the server's sink).
#
# usage: bench/scrape.sh [SECONDS]   (default 150; env N=targets, IV=interval seconds)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
td=${SCORCH_TESTDATA:-$root/../shared/testdata}
[ -d "$td/pprof" ] || { echo "bench/scrape.sh: needs ../shared/testdata/pprof" >&2; exit 77; }
dur=${1:-150}
n=${N:-200}
iv=${IV:-15}
[ -x "$root/build/scrape_bench" ] || make -C "$root" build >/dev/null
tmp=$(mktemp -d)
fpid=""
cleanup() {
    [ -z "$fpid" ] || kill "$fpid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
ports=$(python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$n")
args=""
for p in $ports; do args="$args $p=go"; done
# shellcheck disable=SC2086
python3 "$root/tests/e2e/fake_pprof_target.py" --log "$tmp/arrivals.log" --profiles "$td/pprof" \
    $args >"$tmp/fake.out" 2>&1 &
fpid=$!
i=0
until grep -q ready "$tmp/fake.out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 100 ] || { cat "$tmp/fake.out"; echo "the fake targets did not start" >&2; exit 1; }
    sleep 0.1
done
{
    echo "scrape_configs:"
    echo "  - job_name: bench"
    echo "    scrape_interval: ${iv}s"
    echo "    cpu_seconds: 10"
    echo "    targets:"
    for p in $ports; do echo "      - 127.0.0.1:$p"; done
} >"$tmp/bench.yaml"
store=""
[ -z "${BENCH_STORE:-}" ] || store="$tmp/store"
echo "scraping $n targets x 7 profile types every ${iv}s for ${dur}s ..." >&2
t_start=$(date +%s.%N)
# shellcheck disable=SC2086
"$root/build/scrape_bench" "$tmp/bench.yaml" "$dur" $store >"$tmp/bench.out"
t_end=$(date +%s.%N)
python3 - "$tmp/bench.out" "$tmp/arrivals.log" "$iv" "$t_start" "$t_end" "${BENCH_STORE:-}" <<'EOF'
import sys
out = dict(l.split(None, 1) for l in open(sys.argv[1]).read().splitlines())
iv, t0, t1 = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
by = {}
for line in open(sys.argv[2]):
    t, port, path, status = line.split()
    t = float(t)
    if t0 <= t <= t1:
        by.setdefault((port, path.split("?")[0]), []).append(t)
devs = []
for ts in by.values():
    off = sorted(t % iv for t in ts)[len(ts) // 2]
    devs += [abs((t - off + iv / 2) % iv - iv / 2) for t in ts]
devs.sort()
p99 = devs[int(0.99 * (len(devs) - 1))] if devs else float("nan")
wall = float(out["wall_s"])
st, wk, sk, pr = (float(out[k]) for k in ("scrape_thread_cpu_s", "worker_threads_cpu_s",
                                          "sink_cpu_s", "process_cpu_s"))
print("targets x types          %s tasks, %s requests, %s scrapes, %s errors, %s skipped slots"
      % (out["tasks"], out["requests_started"], out["scrapes"], out["errors"], out["skipped"]))
print("profiles to the sink     %s (%.1f MB of pprof, %s samples)%s"
      % (out["profiles"], int(out["profile_bytes"]) / 1e6, out["samples"],
         "" if out["backlog_dropped"] == "0"
         else ", %s dropped (backlog)" % out["backlog_dropped"]))
print("jitter, scraper side     max %.1f ms, p99 <= %.0f ms (request start after its slot)"
      % (1000 * float(out["lag_max_s"]), 1000 * float(out["lag_p99_le_s"])))
print("jitter, target side      max %.1f ms, p99 %.1f ms over %d arrivals (vs each task's grid)"
      % (1000 * devs[-1], 1000 * p99, len(devs)))
print("cpu, scraping thread     %.3f s in %.0f s = %.2f%% of one core"
      % (st, wall, 100 * st / wall))
print("cpu, worker threads      %.3f s = %.2f%% (gunzip, decode, select, delta, encode)"
      % (wk - sk, 100 * (wk - sk) / wall))
print("cpu, the sink            %.3f s = %.2f%% (%s)"
      % (sk, 100 * sk / wall, "the store's writes" if sys.argv[6] else "counting only"))
print("cpu, scrape_bench total  %.3f s = %.2f%% of one core (everything, the sink included)"
      % (pr, 100 * pr / wall))
scraper = 100 * (st + wk - sk) / wall
ok = devs and devs[-1] < 1.0 and scraper < 5
print("goal: jitter < 1 s and the scraper (thread + workers, no sink) < 5%% of a core "
      "(%.2f%%): %s" % (scraper, "met" if ok else "NOT met"))
EOF
