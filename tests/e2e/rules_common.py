"""rules_common.py - what the rules' tests share: Debian's real `prometheus` and
`prometheus-alertmanager` on free loopback ports (each in its own session, stopped after,
whatever happens), a webhook receiver in the test's process, and CPU pushes at given times.
Standard library only."""
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import cpu_pprof, fail, free_ports  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
# Debian names Alertmanager's binary after its package; upstream's name is tried too
ALERTMANAGERS = ("/usr/bin/prometheus-alertmanager", "/usr/bin/alertmanager")


def skip(msg):
    print("SKIP: %s" % msg, file=sys.stderr)
    sys.exit(77)


def http_json(url, body=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


class Daemon:
    """A program on a free loopback port, in its own session (killed with its group)."""

    def __init__(self, args, log, port, ready_path):
        self.args, self.log, self.port, self.ready_path = args, log, port, ready_path
        self.proc = None

    def start(self, timeout=60):
        self.logf = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=self.logf, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail("%s exited with %d:\n%s" % (self.args[0], self.proc.returncode,
                                                 self.tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port,
                                                                       self.ready_path),
                                            timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        fail("%s did not answer %s within %d s:\n%s" % (self.args[0], self.ready_path, timeout,
                                                       self.tail()))

    def tail(self, n=15):
        with open(self.log, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc:
            self.logf.close()

    def url(self, path=""):
        return "http://127.0.0.1:%d%s" % (self.port, path)


def prometheus(tmp, scrape_port, scrape_interval="1s"):
    """Prometheus scraping 127.0.0.1:scrape_port/metrics every scrape_interval."""
    if not os.access(PROMETHEUS, os.X_OK):
        skip("%s is not installed (Debian's prometheus; scripts/install-deps.sh test)"
             % PROMETHEUS)
    port, = free_ports(1)
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global: {scrape_interval: %s, scrape_timeout: %s}\n"
                "scrape_configs:\n"
                "  - job_name: scorch\n"
                "    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
                % (scrape_interval, scrape_interval, scrape_port))
    return Daemon([PROMETHEUS, "--config.file=" + cfg,
                   "--storage.tsdb.path=" + os.path.join(tmp, "prom-data"),
                   "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
                  os.path.join(tmp, "prometheus.log"), port, "/-/ready").start()


def alertmanager(tmp, webhook_url):
    """Alertmanager (no cluster) whose one receiver is webhook_url, resolved alerts sent too,
    at once (group_wait and group_interval of a second)."""
    binary = next((b for b in ALERTMANAGERS if os.access(b, os.X_OK)), None)
    if not binary:
        skip("Alertmanager is not installed (Debian's prometheus-alertmanager; "
             "scripts/install-deps.sh test)")
    port, = free_ports(1)
    cfg = os.path.join(tmp, "alertmanager.yml")
    with open(cfg, "w") as f:
        f.write("route: {receiver: hook, group_by: ['...'], group_wait: 1s, "
                "group_interval: 1s, repeat_interval: 1h}\n"
                "receivers:\n"
                "  - name: hook\n"
                "    webhook_configs: [{url: '%s', send_resolved: true}]\n" % webhook_url)
    return Daemon([binary, "--config.file=" + cfg,
                   "--storage.path=" + os.path.join(tmp, "am-data"),
                   "--web.listen-address=127.0.0.1:%d" % port, "--cluster.listen-address=",
                   "--log.level=warn"],
                  os.path.join(tmp, "alertmanager.log"), port, "/-/ready").start()


class Receiver:
    """A webhook receiver: every JSON body POSTed to it, by path, in order of arrival."""

    def __init__(self):
        self.bodies = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                data = self.rfile.read(n)
                try:
                    doc = json.loads(data)
                except ValueError:
                    doc = {"unparsable": data.decode("utf-8", "replace")}
                with outer.lock:
                    outer.bodies.append((self.path, doc))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def got(self, path):
        with self.lock:
            return [d for p, d in self.bodies if p == path]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def promql(prom, query, at):
    """An instant query's result (a list of {metric, value(s)})."""
    url = prom.url("/api/v1/query?" + urllib.parse.urlencode({"query": query, "time": at}))
    doc = http_json(url)
    if doc.get("status") != "success":
        fail("PromQL %s: %s" % (query, doc))
    return doc["data"]["result"]


def push_cpu(srv, service, t, stacks, dur=1):
    """One CPU profile of service covering [t, t + dur) (stacks: {"a;b": samples})."""
    srv.push(cpu_pprof(stacks), name=service + ".cpu",
             **{"from": str(t), "until": str(t + dur)})


def wait_for(what, cond, timeout, every=0.5):
    """cond()'s first truthy value within timeout seconds, else a failure naming what."""
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > deadline:
            fail("%s: not within %d s" % (what, timeout))
        time.sleep(every)
