"""Record rules read by a real Prometheus: scorch evaluates a record rule every 2 s over
profiles pushed at explicit times, Debian's `prometheus` scrapes its /metrics every second,
and every value Prometheus stored for the rule's metric is what scorch's own
/api/v1/timeline?function=F&value=self says for the same 2 s step (Prometheus stores
scorch's scrape timestamp beside each value, and the rule's evaluation time comes in the
same scrape: scorch_rule_last_evaluation_timestamp_seconds). A window where the function
has no samples has no series (Prometheus marks it stale); a rule over its limit exports its
heaviest series and says how many it left out; a regex keeps the functions it matches."""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rules_common import prometheus, promql, push_cpu, wait_for  # noqa: E402
from server_common import Server, check, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
tmp = sys.argv[1]
STEP = 2
WINDOWS = 8
RULE = "scorch_test_fn_cpu"

CONFIG = """
rules:
  - record: %s
    type: cpu:cpu
    query: '{service_name=~"shop|auth"}'
    group_by: service_name
    functions: top 5
  - record: scorch_test_limited
    type: cpu:cpu
    functions: top 5
    limit: 1
  - record: scorch_test_regex
    type: cpu:cpu
    functions: 'auth\\..*'
    value: total
alerting: {evaluation_interval: %ds}
""" % (RULE, STEP)


def stacks(service, k):
    """Window k's stacks: main.work grows window by window (and is absent from shop's
    fourth window), the rest stays."""
    if service == "shop":
        s = {"main.main;main.idle": 25}
        if k != 3:
            s["main.main;main.work"] = 10 * (k + 1)
        return s
    return {"main.main;main.work": 7 + k, "main.main;auth.check": 40}


def series_samples(result, key):
    """{label value of key: {scrape time: value}} of a range vector query's result."""
    out = {}
    for r in result:
        out[r["metric"].get(key, "")] = {float(t): float(v) for t, v in r["values"]}
    return out


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def run():
    cfg = os.path.join(tmp, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                 config=cfg).start()
    prom = None
    try:
        prom = prometheus(tmp, srv.port)
        # the windows to come, on the rule's grid; every profile pushed before its window
        t0 = (int(time.time()) // STEP + 2) * STEP
        for k in range(WINDOWS):
            for svc in ("shop", "auth"):
                for s in range(STEP):
                    push_cpu(srv, svc, t0 + STEP * k + s, stacks(svc, k))
        last = t0 + STEP * WINDOWS
        check(time.time() < t0, "the pushes took longer than the first window's start")
        # Prometheus has stored the last window's evaluation
        wait_for("Prometheus scraping the evaluation at %d" % last, lambda: any(
            float(r["value"][1]) >= last for r in promql(
                prom, 'scorch_rule_last_evaluation_timestamp_seconds{rule="%s"}' % RULE,
                time.time())), 120)
        at = time.time()
        up = promql(prom, 'up{job="scorch"}', at)
        check(up and up[0]["value"][1] == "1", "Prometheus reads scorch's /metrics: %s" % up)
        span = "[%ds]" % (int(at - t0) + 60)
        evals = series_samples(promql(
            prom, 'scorch_rule_last_evaluation_timestamp_seconds{rule="%s"}%s' % (RULE, span),
            at), "rule")[RULE]
        values = series_samples(promql(prom, '%s{function="main.work"}%s' % (RULE, span), at),
                                "service_name")
        check(set(values) <= {"shop", "auth"}, "groups: %s" % sorted(values))
        tl = srv.json("/api/v1/timeline", {
            "query": '{service_name=~"shop|auth"}', "type": "cpu:cpu", "from": str(t0),
            "until": str(last), "step": str(STEP), "group_by": "service_name",
            "function": "main.work", "value": "self"})
        check(tl["timestamps"][0] == t0 and len(tl["timestamps"]) == WINDOWS,
              "timeline steps: %s" % tl["timestamps"])
        want = {s["labels"]["service_name"]: s["values"] for s in tl["series"]}
        check(set(want) == {"shop", "auth"}, "timeline groups: %s" % sorted(want))
        matched = {"shop": set(), "auth": set()}
        for scrape, e in sorted(evals.items()):
            e = int(round(e))
            k = (e - t0) // STEP - 1  # the window the evaluation read: [e - STEP, e)
            if (e - t0) % STEP or not 0 <= k < WINDOWS:
                continue
            for svc in ("shop", "auth"):
                w = want[svc][k]
                got = values.get(svc, {}).get(scrape)
                if got is None:
                    check(w is None or w == 0,
                          "%s window %d: the timeline says %s, Prometheus has no sample at %.3f"
                          % (svc, k, w, scrape))
                    continue
                check(w is not None and close(got, w),
                      "%s window %d (evaluated at %d, scraped at %.3f): Prometheus %r, the "
                      "timeline %r" % (svc, k, e, scrape, got, w))
                matched[svc].add(k)
        for svc in ("shop", "auth"):
            check(len(matched[svc]) >= 3, "%s: only windows %s seen in Prometheus"
                  % (svc, sorted(matched[svc])))
        # the window without main.work in shop has no value there
        check(want["shop"][3] in (0, None), "shop window 3: %s" % want["shop"][3])
        check(len({round(want["auth"][k], 3) for k in matched["auth"]}) >= 3,
              "the values change window by window: %s" % want["auth"])

        # the limit and the regex, on scorch's own /metrics
        m = srv.metrics()
        limited = [k for k in m if k.startswith("scorch_test_limited{")]
        check(len(limited) == 1, "a limit of 1 exports one series: %s" % limited)
        dropped = m.get('scorch_rule_series_dropped{rule="scorch_test_limited",kind="record"}')
        check(dropped is not None and dropped >= 1, "the series left out are counted: %s"
              % dropped)
        heaviest = max(v for k, v in m.items() if k.startswith(RULE + "{"))
        check(close(m[limited[0]], heaviest), "the one kept is the heaviest: %s" % limited)
        with open(srv.log, "rb") as f:
            check(b"record 'scorch_test_limited'" in f.read(), "the limit is said in the log")
        regex = [k for k in m if k.startswith("scorch_test_regex{")]
        check(regex and all('function="auth.check"' in k for k in regex),
              "the regex keeps auth.check only: %s" % regex)
        check(m.get('scorch_rule_evaluations_total{kind="record"}', 0) >= 3 * WINDOWS,
              "evaluations counted")
        check(m.get('scorch_rule_evaluation_failures_total{kind="record"}') == 0,
              "no evaluation failed")
        check(not math.isnan(m['scorch_rule_evaluation_seconds_total{kind="record"}']),
              "time spent counted")
    finally:
        if prom:
            prom.stop()
        rc, secs = srv.stop()
    check(rc == 0, "server exit status %s" % rc)


if __name__ == "__main__":
    main_wrapper(run)
    print("ok")
