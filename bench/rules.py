"""What evaluating rules costs the server: 50 rules (25 recording, 25 alerting) over 20
services with an hour of one-minute CPU profiles each (recording: the top 20 functions of
the last 5 minutes; alerting: the changes of the last hour), evaluated every `interval` seconds
for `rounds` rounds; the server's CPU time (user + system, from /proc) over the run, per
round, and as a share of one core when the rules run every minute (the default
evaluation_interval). The rules' own figure (scorch_rule_evaluation_seconds_total, wall
time) is printed beside it. Goal: 50 rules every minute under 2% of a core.

usage: python3 bench/rules.py SCORCH [interval_s=10] [rounds=6]"""
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from server_common import Server, cpu_pprof  # noqa: E402

scorch = sys.argv[1]
interval = int(sys.argv[2]) if len(sys.argv) > 2 else 10
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
NSVC, NRULES = 20, 50
tmp = tempfile.mkdtemp(prefix="scorch-rules-bench-")
now = int(time.time()) // 60 * 60
t0 = now - 3600

lines = ["rules:"]
for k in range(NRULES // 2):
    svc = "svc%d" % (k % NSVC)
    lines += ["  - record: bench_cpu_%d" % k, "    type: cpu:cpu",
              "    query: '{service_name=\"%s\"}'" % svc, "    functions: top 20", "    range: 5m",
              "  - alert: BenchRegressed%d" % k, "    type: cpu:cpu",
              "    query: '{service_name=\"%s\"}'" % svc, "    range: 1h"]
lines += ["alerting:", "  evaluation_interval: %ds" % interval]
cfg = os.path.join(tmp, "rules.yaml")
with open(cfg, "w") as f:
    f.write("\n".join(lines) + "\n")

srv = Server(scorch, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"), config=cfg,
             extra=["--no-fsync"]).start()


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rule_seconds():
    return sum(v for k, v in srv.metrics().items()
               if k.startswith("scorch_rule_evaluation_seconds_total{"))


try:
    rng = random.Random(1)
    funcs = ["main.f%02d" % i for i in range(40)]
    for s in range(NSVC):
        for i in range(60):
            stacks = {"main.main;main.handle;%s" % fn: 1 + int(rng.expovariate(1 / 20.0))
                      for fn in funcs}
            srv.push(cpu_pprof(stacks), name="svc%d.cpu{env=bench}" % s,
                     **{"from": str(t0 + 60 * i), "until": str(t0 + 60 * i + 60)})
    # start on a round's boundary, then measure whole rounds
    time.sleep(interval - time.time() % interval + 1)
    c0, w0, r0 = cpu_s(srv.proc.pid), time.time(), rule_seconds()
    time.sleep(rounds * interval)
    c1, w1, r1 = cpu_s(srv.proc.pid), time.time(), rule_seconds()
    per_round = (c1 - c0) / rounds
    print("rules: %d (%d recording, %d alerting) over %d services, an hour of 1-min profiles"
          % (NRULES, NRULES // 2, NRULES // 2, NSVC))
    print("server CPU per evaluation round: %.3f s (over %d rounds, %.0f s)" % (per_round, rounds, w1 - w0))
    print("rules' own wall time per round (scorch_rule_evaluation_seconds_total): %.3f s" % ((r1 - r0) / rounds))
    m = srv.metrics()
    evals = sum(v for k, v in m.items() if k.startswith("scorch_rule_evaluations_total{"))
    fails = sum(v for k, v in m.items() if k.startswith("scorch_rule_evaluation_failures_total{"))
    series = sum(1 for k in m if k.startswith("bench_cpu_"))
    print("evaluations %d, failed %d; recorded series on /metrics: %d" % (evals, fails, series))
    share = per_round / 60 * 100
    print("every minute: %.2f%% of a core (goal < 2%%: %s)" % (share, "met" if share < 2 else "NOT met"))
finally:
    srv.kill()
