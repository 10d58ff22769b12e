"""Alert rules with a real Alertmanager: a service's profiles over the last minute have a step
in one function (main.hot three times heavier from half a minute ago), another service's
(the A/A one) do not change; scorch evaluates an alert rule every second over the last
minute. Debian's Alertmanager receives the alert for the step (alertname, the group's
label, function, kind, the configured label, a summary, a description and a link to the
diff view of before against after the change) and hands it to its own webhook receiver;
scorch's webhook gets it as a firing document. As time goes on with main.hot at its new
level, the step leaves the window: scorch resolves the alert (Alertmanager notifies it
resolved, the webhook gets a resolved document). Nothing is ever said about the A/A
service."""
import os
import random
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rules_common import Receiver, alertmanager, http_json, push_cpu, wait_for  # noqa: E402
from server_common import Server, check, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
tmp = sys.argv[1]
RANGE = 60
EXTERNAL = "http://scorch.test:4040"
NAME = "FunctionRegressed"


def config(am_url, hook_url):
    return """
rules:
  - alert: %s
    type: cpu:cpu
    query: '{service_name=~"shop|calm"}'
    group_by: service_name
    range: %ds
    step: 1s
    kinds: [step]
    min_change_pct: 20
    labels: {severity: warning}
alerting:
  alertmanagers: ['%s']
  webhooks: ['%s']
  evaluation_interval: 1s
  external_url: '%s'
""" % (NAME, RANGE, am_url, hook_url, EXTERNAL)


class Pusher:
    """A profile a second for both services: shop's main.hot at 20 samples before step_at
    and 60 from then on, everything else steady; a little noise everywhere."""

    def __init__(self, srv, step_at):
        self.srv, self.step_at = srv, step_at
        self.rnd = random.Random(7)
        self.stop = threading.Event()
        self.error = None

    def push(self, t):
        n = self.rnd.randint
        hot = 20 if t < self.step_at else 60
        push_cpu(self.srv, "shop", t, {"main.main;main.hot": hot + n(-2, 2),
                                        "main.main;main.steady": 50 + n(-3, 3)})
        push_cpu(self.srv, "calm", t, {"main.main;main.a": 30 + n(-3, 3),
                                        "main.main;main.b": 30 + n(-3, 3)})

    def run(self, t):
        try:
            while not self.stop.is_set():
                # each second's profile as that second begins
                while time.time() < t and not self.stop.is_set():
                    time.sleep(0.05)
                self.push(t)
                t += 1
        except Exception as e:  # noqa: BLE001 - reported by the test's thread
            self.error = e


def ours(alert):
    lb = alert["labels"]
    return lb.get("function") == "main.hot" and lb.get("service_name") == "shop" and \
        lb.get("kind") == "step"


def alerts_in(docs, status):
    return [a for d in docs if d.get("status") == status for a in d.get("alerts", [])]


def check_link(url, step_at):
    check(url.startswith(EXTERNAL + "/?view=diff&"), "the diff link: %s" % url)
    q = dict(urllib.parse.parse_qsl(url.split("?", 1)[1]))
    check(q.get("type") == "cpu:cpu", "the link's type: %s" % q)
    check('service_name="shop"' in q.get("query", "") and "shop|calm" in q["query"],
          "the link selects the group: %s" % q.get("query"))
    check(q.get("search") == "main.hot", "the link searches the function: %s" % q)
    bf, bu, f, u = (int(q[k]) for k in ("base_from", "base_until", "from", "until"))
    check(bf < bu <= f < u, "base before new: %s" % q)
    # before the change against after it: the split within a few steps of the real one
    check(abs(f - step_at) <= 5, "the change at %d, the link splits at %d" % (step_at, f))


def run():
    recv = Receiver()
    am = alertmanager(tmp, recv.url("/am"))
    cfg = os.path.join(tmp, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write(config(am.url(), recv.url("/scorch")))
    srv = Server(SCORCH, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"),
                 config=cfg).start()
    pusher = None
    try:
        now = int(time.time())
        step_at = now - RANGE // 2
        pusher = Pusher(srv, step_at)
        for t in range(now - RANGE, now):
            pusher.push(t)
        threading.Thread(target=pusher.run, args=(now,), daemon=True).start()

        # Alertmanager has it, with its labels, texts and link
        flt = urllib.parse.urlencode({"filter": 'alertname="%s"' % NAME})

        def am_alerts():
            return [a for a in http_json(am.url("/api/v2/alerts?" + flt)) if ours(a)]
        got = wait_for("the alert in Alertmanager", am_alerts, 90)[0]
        lb, an = got["labels"], got["annotations"]
        check(lb.get("alertname") == NAME and lb.get("severity") == "warning",
              "labels: %s" % lb)
        check(set(lb) == {"alertname", "service_name", "function", "kind", "severity"},
              "no other labels: %s" % sorted(lb))
        check("main.hot" in an.get("summary", "") and "shop" in an["summary"],
              "summary: %s" % an.get("summary"))
        check("cores" in an.get("description", "") and "%" in an["description"],
              "description: before -> after in cores, the change: %s" % an.get("description"))
        check_link(an.get("diff_url", ""), step_at)
        check(got.get("generatorURL") == an["diff_url"], "generatorURL: %s" % got)
        # scorch's webhook: a firing document with it; Alertmanager's receiver too
        fired = wait_for("a firing document on the webhook",
                         lambda: [a for a in alerts_in(recv.got("/scorch"), "firing")
                                  if ours(a)], 30)
        check(fired[0]["status"] == "firing" and fired[0]["annotations"]["diff_url"] ==
              an["diff_url"], "the webhook's alert: %s" % fired[0])
        wait_for("Alertmanager notifying it",
                 lambda: [a for a in alerts_in(recv.got("/am"), "firing") if ours(a)], 30)

        # main.hot stays at its new level: once the step has left the window, resolved
        wait_for("a resolved document on the webhook",
                 lambda: [a for a in alerts_in(recv.got("/scorch"), "resolved") if ours(a)],
                 RANGE + 90)
        wait_for("Alertmanager notifying it resolved",
                 lambda: [a for a in alerts_in(recv.got("/am"), "resolved") if ours(a)], 30)
        check(not am_alerts(), "Alertmanager's active alerts still hold it")
        check(pusher.error is None, "pushing: %s" % pusher.error)

        # never a word about the A/A service
        said = [a for _, d in recv.bodies for a in d.get("alerts", [])]
        said += http_json(am.url("/api/v2/alerts?" + flt))
        calm = [a["labels"] for a in said if a["labels"].get("service_name") == "calm"]
        check(not calm, "alerts for the unchanged service: %s" % calm[:3])
        m = srv.metrics()
        check(m.get('scorch_alert_notifications_total{to="alertmanager"}', 0) >= 2,
              "notifications counted: %s" % {k: v for k, v in m.items() if "alert" in k})
        check(m.get('scorch_alert_notification_failures_total{to="alertmanager"}') == 0 and
              m.get('scorch_alert_notification_failures_total{to="webhook"}') == 0,
              "no notification failed")
    finally:
        if pusher:
            pusher.stop.set()
        rc, secs = srv.stop()
        am.stop()
        recv.stop()
    check(rc == 0, "server exit status %s" % rc)


if __name__ == "__main__":
    main_wrapper(run)
    print("ok")
