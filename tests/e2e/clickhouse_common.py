"""clickhouse_common.py - ClickHouse servers for tests and benchmarks: Debian's
clickhouse-server started from a copy of its /etc/clickhouse-server/config.xml with the ports,
paths and listen_host changed, on free loopback ports, several as the shards of one cluster.
Standard library only.

As a program (for shell tests and bench/clickhouse.sh):
  clickhouse_common.py up DIR N    starts N servers as the shards of cluster "scorch" under
                                   DIR, prints their HTTP URLs (one a line) once they answer
  clickhouse_common.py down DIR    stops the servers (and ZooKeeper) started under DIR
  clickhouse_common.py sql URL Q   runs a query, prints the answer
Exit 77 when clickhouse-server is not installed."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import free_ports  # noqa: E402

BINARY = "/usr/sbin/clickhouse-server"
CONFIG = "/etc/clickhouse-server/config.xml"
USERS = "/etc/clickhouse-server/users.xml"
CLUSTER = "scorch"


def available():
    return os.access(BINARY, os.X_OK) and os.path.exists(CONFIG) and os.path.exists(USERS)


def remote_servers(tcp_ports):
    """tcp_ports: a port per shard, or a list of ports (its replicas) per shard."""
    shards = ""
    for p in tcp_ports:
        reps = p if isinstance(p, (list, tuple)) else [p]
        shards += "<shard><internal_replication>true</internal_replication>%s</shard>" % "".join(
            "<replica><host>127.0.0.1</host><port>%d</port></replica>" % r for r in reps)
    return "<remote_servers><%s>%s</%s></remote_servers>" % (CLUSTER, shards, CLUSTER)


def make_config(text, root, http, tcp, inter, cluster_tcp_ports, zk_port=None, macros=None):
    """The package's config with this server's ports, paths and listen host, and a
    remote_servers section naming the cluster's shards; with zk_port, ZooKeeper on that
    loopback port and the macros {name: value} (shard, replica) of Replicated tables."""
    for tag, port in (("http_port", http), ("tcp_port", tcp), ("interserver_http_port", inter)):
        text, n = re.subn(r"<%s>\d+</%s>" % (tag, tag), "<%s>%d</%s>" % (tag, port, tag), text,
                          count=1)
        if n != 1:
            raise RuntimeError("%s: no <%s> to change" % (CONFIG, tag))
    text = text.replace("/var/lib/clickhouse/", root + "/data/")
    text = text.replace("/var/log/clickhouse-server/", root + "/log/")
    # listen on loopback only (IPv6 may be off): drop every listen_host, add ours
    text = re.sub(r"^\s*<listen_host>[^<]*</listen_host>\s*$", "", text, flags=re.M)
    text = re.sub(r"<remote_servers\b.*?</remote_servers>", remote_servers(cluster_tcp_ports),
                  text, count=1, flags=re.S)
    extra = "<listen_host>127.0.0.1</listen_host>"
    if zk_port:
        extra += ("<zookeeper><node><host>127.0.0.1</host><port>%d</port></node>"
                  "<session_timeout_ms>6000</session_timeout_ms></zookeeper>" % zk_port)
        extra += "<macros>%s</macros>" % "".join("<%s>%s</%s>" % (k, v, k)
                                                 for k, v in sorted(macros.items()))
        text = re.sub(r"<zookeeper\b.*?</zookeeper>", "", text, flags=re.S)
        text = re.sub(r"<macros\b.*?</macros>", "", text, flags=re.S)
        # replicas fetch parts from each other on loopback
        text = re.sub(r"<interserver_http_host>.*?</interserver_http_host>", "", text)
        extra += "<interserver_http_host>127.0.0.1</interserver_http_host>"
    text = text.replace("<yandex>", "<yandex>" + extra, 1)
    return text


def query(url, sql, body=None, timeout=30):
    """Runs sql (the body when body is None); the answer's bytes. Raises on an error."""
    if body is None:
        req = urllib.request.Request(url + "/", data=sql.encode())
    else:
        req = urllib.request.Request(url + "/?" + urllib.parse.urlencode({"query": sql}),
                                     data=body)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError("clickhouse %s: %s: %s" % (url, sql[:80],
                                                      e.read()[:300].decode("utf-8", "replace")))


class ClickHouse:
    """One clickhouse-server process in root (its config, data and logs)."""

    def __init__(self, root, http, tcp, inter, cluster_tcp_ports, zk_port=None, macros=None):
        self.root, self.http, self.tcp, self.inter = root, http, tcp, inter
        self.url = "http://127.0.0.1:%d" % http
        self.proc = None
        os.makedirs(os.path.join(root, "log"), exist_ok=True)
        with open(CONFIG) as f:
            text = f.read()
        with open(os.path.join(root, "config.xml"), "w") as f:
            f.write(make_config(text, root, http, tcp, inter, cluster_tcp_ports, zk_port,
                                macros))
        shutil.copy(USERS, os.path.join(root, "users.xml"))

    def start(self):
        self.out = open(os.path.join(self.root, "log", "stdout.log"), "ab")
        self.proc = subprocess.Popen([BINARY, "--config-file=" + os.path.join(self.root,
                                                                             "config.xml")],
                                     cwd=self.root, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.out, start_new_session=True)
        with open(os.path.join(self.root, "pid"), "w") as f:
            f.write("%d\n" % self.proc.pid)
        return self

    def wait(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("clickhouse-server exited with %d:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            try:
                if query(self.url, "SELECT 1", timeout=2).strip() == b"1":
                    return self
            except (OSError, RuntimeError):
                pass
            time.sleep(0.1)
        raise RuntimeError("clickhouse-server on %s did not answer within %d s:\n%s"
                           % (self.url, timeout, self.log_tail()))

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, n=15):
        path = os.path.join(self.root, "log", "clickhouse-server.err.log")
        try:
            with open(path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def sql(self, q):
        return query(self.url, q).decode()


def cluster(root, n):
    """n servers, the shards of cluster CLUSTER, started and answering."""
    ports = free_ports(3 * n)
    tcp = [ports[3 * i + 1] for i in range(n)]
    servers = [ClickHouse(os.path.join(root, "ch%d" % i), ports[3 * i], ports[3 * i + 1],
                          ports[3 * i + 2], tcp) for i in range(n)]
    for s in servers:
        s.start()
    try:
        for s in servers:
            s.wait()
    except Exception:
        for s in servers:
            s.stop(signal.SIGKILL)
        raise
    return servers


ZK_JARS = ("zookeeper-3", "zookeeper-jute", "slf4j-api", "netty", "log4j-1", "log4j12",
           "commons-cli", "commons-io", "metrics-core", "snappy", "jline", "audience-annotations")


def zookeeper_available():
    return os.path.isdir("/usr/share/zookeeper") and shutil.which("java") is not None


class ZooKeeper:
    """Debian's ZooKeeper, standalone, on a loopback port (no systemd here: by hand)."""

    def __init__(self, root, port):
        self.root, self.port = root, port
        os.makedirs(os.path.join(root, "data"), exist_ok=True)
        with open(os.path.join(root, "zoo.cfg"), "w") as f:
            f.write("tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\n"
                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                    "4lw.commands.whitelist=srvr,ruok\n" % (os.path.join(root, "data"), port))
        self.proc = None

    def start(self):
        jars = [os.path.join("/usr/share/java", j) for j in sorted(os.listdir("/usr/share/java"))
                if j.endswith(".jar") and any(j.startswith(p) for p in ZK_JARS)]
        self.out = open(os.path.join(self.root, "zk.log"), "ab")
        self.proc = subprocess.Popen(["java", "-Xmx256m", "-cp", ":".join(jars),
                                      "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                      os.path.join(self.root, "zoo.cfg")],
                                     stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.out, start_new_session=True)
        with open(os.path.join(self.root, "pid"), "w") as f:
            f.write("%d\n" % self.proc.pid)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                import socket
                with socket.create_connection(("127.0.0.1", self.port), 1) as s:
                    s.sendall(b"srvr")
                    if b"Mode" in s.recv(1000):
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("zookeeper exited with %d" % self.proc.returncode)
            time.sleep(0.2)
        raise RuntimeError("zookeeper did not answer on %d within 60 s" % self.port)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def replicated(root, layout, zk_port):
    """Servers for shards of layout[i] replicas each (macros shard/replica, ZooKeeper on
    zk_port), one cluster: [[server of shard 0 replica 0, ...], ...], started."""
    n = sum(layout)
    ports = free_ports(3 * n)
    tcp, k = [], 0
    for reps in layout:
        tcp.append([ports[3 * (k + r) + 1] for r in range(reps)])
        k += reps
    out, k = [], 0
    for i, reps in enumerate(layout):
        row = []
        for r in range(reps):
            row.append(ClickHouse(os.path.join(root, "ch%d" % k), ports[3 * k], ports[3 * k + 1],
                                  ports[3 * k + 2], tcp, zk_port,
                                  {"shard": "%02d" % (i + 1), "replica": "r%d" % (r + 1)}))
            k += 1
        out.append(row)
    flat = [s for row in out for s in row]
    for s in flat:
        s.start()
    try:
        for s in flat:
            s.wait()
    except Exception:
        for s in flat:
            s.stop(signal.SIGKILL)
        raise
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if not available():
        print("SKIP: clickhouse-server is not installed (scripts/install-deps.sh test)",
              file=sys.stderr)
        sys.exit(77)
    cmd, root = sys.argv[1], sys.argv[2]
    if cmd == "up":
        servers = cluster(root, int(sys.argv[3]) if len(sys.argv) > 3 else 1)
        for s in servers:
            print(s.url)
    elif cmd == "down":
        for d in sorted(os.listdir(root)):
            pidf = os.path.join(root, d, "pid")
            if (d.startswith("ch") or d == "zk") and os.path.exists(pidf):
                with open(pidf) as f:
                    pid = int(f.read())
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                for _ in range(300):
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        break
                    time.sleep(0.1)
                else:
                    os.kill(pid, signal.SIGKILL)
    elif cmd == "sql":
        sys.stdout.write(query(root, sys.argv[3]).decode())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
