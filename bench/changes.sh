#!/bin/sh
# Benchmark: change detection over many services. bench/changes_bench.c writes 100 services x
# 24 h of one-minute CPU profiles (144,000, ~230 stacks each, steps planted in 15 services;
# fsync off), compacts them and times sc_plan_watch in process, under the server's read
# budget, for the last 24 h, 12 h, 6 h and 1 h at the default step. Then `scorch server`
# serves the same store and GET /api/v1/changes is asked the same ranges (type cpu:cpu, every
# service, the default step, q and functions): its status, step, findings and time, the first
# request (cold) and the best of two more. Goal: 24 h under 2 s; the ratio printed is the
# warm time over 2 s. There is no reference tool: no other self-hosted profiler finds
# changes by itself.
# usage: bench/changes.sh [SERVICES] [HOURS]   (defaults 100, 24)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/changes_bench" ] && [ -x "$root/build/scorch" ] || make -C "$root" build >/dev/null
tmp=$(mktemp -d /tmp/scorch-changes-XXXXXX)
srv=""
cleanup() {
    [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "== in process (sc_plan_watch, the server's read budget of 20,000 blocks)"
"$root/build/changes_bench" "$tmp/data" "${1:-100}" "${2:-24}" | tee "$tmp/bench.log"
end=$(sed -n 's/^end=//p' "$tmp/bench.log")

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/build/scorch" server --data "$tmp/data" --listen "127.0.0.1:$port" >"$tmp/server.log" 2>&1 &
srv=$!
i=0
until curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "the server did not come up" >&2; tail "$tmp/server.log" >&2; exit 1; }
    sleep 0.1
done

echo "== over HTTP (GET /api/v1/changes against scorch server --data, its defaults)"
python3 - "$port" "$end" <<'PY'
import json, sys, time, urllib.error, urllib.parse, urllib.request
port, end = sys.argv[1], int(sys.argv[2])
now = end + 37  # as the in-process queries: 37 s past the last minute, on no boundary
print("%-5s %6s %6s %5s %8s %7s %7s %6s" % ("range", "status", "step", "steps", "findings",
                                            "cold s", "warm s", "/ 2 s"))
for name, span in (("24h", 86400), ("12h", 43200), ("6h", 21600), ("1h", 3600)):
    q = urllib.parse.urlencode({"type": "cpu:cpu", "query": "{}", "from": now - span,
                                "until": now})
    times, body, status = [], b"", 0
    for _ in range(3):
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen("http://127.0.0.1:%s/api/v1/changes?%s" % (port, q),
                                        timeout=120) as r:
                body, status = r.read(), r.status
        except urllib.error.HTTPError as e:
            body, status = e.read(), e.code
        times.append(time.monotonic() - t0)
    d = json.loads(body)
    if status != 200:
        print("%-5s %6d  %s (%.2f s)" % (name, status, d.get("error"), times[0]))
        continue
    warm = min(times[1:])
    print("%-5s %6d %5ds %5d %8d %7.2f %7.2f %6.2f" % (name, status, d["step"],
          len(d["changes"][0]["timestamps"]) if d["changes"] else -1, len(d["changes"]),
          times[0], warm, warm / 2.0))
PY
