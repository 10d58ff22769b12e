#!/usr/bin/env python3
"""clickhouse_http.py ROOT TMP [SECONDS] [CONNS]: HTTP pushes (bench/ingest_load.py: distinct
~35 KB gzipped Go CPU profiles, 64 series) into a `scorch server` on SQLite (fsync'd) and
into one on ClickHouse (Debian's clickhouse-server on loopback ports, one shard), in the
same run: each one's profiles/s, and ClickHouse's CPU per profile (its process's CPU from
the load's start until its merges are done: inserts, the rollup view, merges).
Env SCORCH: the scorch binary (default ROOT/build/scorch), to measure another build."""
import os
import re
import subprocess
import sys
import time

ROOT, TMP = sys.argv[1], sys.argv[2]
SECONDS = sys.argv[3] if len(sys.argv) > 3 else "20"
CONNS = sys.argv[4] if len(sys.argv) > 4 else "8"
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import clickhouse_common as chc  # noqa: E402
from server_common import Server  # noqa: E402

SCORCH = os.environ.get("SCORCH") or os.path.join(ROOT, "build", "scorch")
HZ = os.sysconf("SC_CLK_TCK")


def ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def load(srv):
    out = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "bench", "ingest_load.py"),
                          "http://127.0.0.1:%d" % srv.port, "--seconds", SECONDS, "--conns",
                          CONNS, "--profiles", "200", "--series", "64", "--pid",
                          str(srv.proc.pid), "--quiet"], capture_output=True, text=True)
    text = out.stdout + out.stderr
    m = re.search(r": (\d+) profiles \((\d+) errors\), (\d+) profiles/s", text)
    if not m:
        sys.exit("ingest_load: %s" % text)
    cpu = re.search(r"server ([\d.]+)", text)
    return int(m.group(1)) - int(m.group(2)), float(m.group(3)), float(cpu.group(1)), text


def main():
    sq = Server(SCORCH, os.path.join(TMP, "sqlite"), os.path.join(TMP, "sqlite.log")).start()
    try:
        n_sq, rate_sq, cpu_sq, _ = load(sq)
    finally:
        sq.stop()
    ch = chc.cluster(os.path.join(TMP, "ch"), 1)[0]
    cfg = os.path.join(TMP, "ch.yaml")
    with open(cfg, "w") as f:
        f.write("storage: {engine: clickhouse, url: \"%s\"}\n" % ch.url)
    srv = Server(SCORCH, os.path.join(TMP, "chdata"), os.path.join(TMP, "ch.log"), cfg).start()
    try:
        t0 = ticks(ch.proc.pid)
        n_ch, rate_ch, cpu_ch, _ = load(srv)
        # pushes are acknowledged from scorch's local log: the rate that counts is that of
        # the inserts, so the time until every acknowledged push is in ClickHouse is added
        t_end = time.time()
        deadline = t_end + 600
        stored = 0
        while time.time() < deadline:
            stored = int(ch.sql("SELECT count() FROM scorch_profiles_local WHERE "
                                "type = 'cpu:cpu'").strip() or 0)
            if stored >= n_ch:
                break
            time.sleep(0.2)
        drain = time.time() - t_end
        rate_in = n_ch / (n_ch / rate_ch + drain)
        # what the load costs ClickHouse includes the merges of its parts: counted until
        # no merge runs (a minute at most)
        deadline = time.time() + 60
        while time.time() < deadline:
            if ch.sql("SELECT count() FROM system.merges").strip() == "0":
                break
            time.sleep(0.5)
        ch_cpu = (ticks(ch.proc.pid) - t0) / HZ
        inserts = ch.sql("SELECT count() FROM system.parts WHERE table = "
                         "'scorch_profiles_local'").strip()
    finally:
        srv.stop(timeout=120)
        ch.stop()
    print("sqlite:     %6.0f profiles/s  (%d acknowledged, scorch %.2f cores busy)"
          % (rate_sq, n_sq, cpu_sq))
    print("clickhouse: %6.0f profiles/s  (%d acknowledged at %.0f/s, all in ClickHouse %.1f s "
          "after the load; %d stored; scorch %.2f cores busy)"
          % (rate_in, n_ch, rate_ch, drain, stored, cpu_ch))
    print("clickhouse vs sqlite: %.2fx the push rate" % (rate_in / rate_sq))
    print("clickhouse CPU: %.1f s for %d profiles, %.2f ms a profile (inserts, rollups and "
          "merges; %s active parts after)" % (ch_cpu, n_ch, 1000 * ch_cpu / max(n_ch, 1),
                                              inserts))


if __name__ == "__main__":
    main()
