"""clickhouse_faults.py - a `scorch server` on the ClickHouse backend against a fake
ClickHouse that misbehaves on purpose: slow (no answer in time), endless answers, errors,
overload, gone. Usage: clickhouse_faults.py TMPDIR (env: SCORCH, SCORCH_SRC).

Every request scorch sends is bounded in time (storage.write_timeout, query_timeout) and
every answer it reads in size (storage.max_answer). Pushes are acknowledged from the local
log whatever ClickHouse does, until the log is full (storage.log_limit): then ingest
answers 503 with Retry-After saying why the shard is behind; queries say what failed,
memory stays flat, and the server goes back to work by itself when ClickHouse does."""
import http.server
import json
import os
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, expect_error, fail, main_wrapper  # noqa: E402

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]


class Fake:
    mode = "ok"
    requests = []
    aborted = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        # no connection outlives the fake's shutdown ("gone" means gone)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        qs = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        sql = qs.get("query", [body.decode("utf-8", "replace")])[0]
        Fake.requests.append(sql)
        mode = Fake.mode
        if sql.startswith("CREATE") or mode == "ok":
            return self.answer(200, b"")
        if mode == "hang":
            time.sleep(20)
            return self.answer(200, b"")
        if mode == "error":
            return self.answer(500, b"Code: 62, e.displayText() = DB::Exception: Syntax error: "
                                    b"failed at position 1, e.what() = DB::Exception\n")
        if mode == "busy":
            return self.answer(500, b"Code: 252, e.displayText() = DB::Exception: Too many "
                                    b"parts (300). Merges are processing significantly slower "
                                    b"than inserts., e.what() = DB::Exception\n")
        if mode == "huge":
            # an endless answer: scorch must stop reading at its bound
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 34))
            self.end_headers()
            chunk = b"\x05hello" * 10000
            try:
                for _ in range(1 << 20):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                Fake.aborted += 1
            return None
        return self.answer(500, b"unknown mode")


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def push(srv, n=0):
    return srv.request("POST", "/ingest", {"name": "app{env=x}", "format": "folded",
                                           "from": str(int(time.time()) - 60)},
                       body=b"main;f%d 1\n" % n, timeout=60)


def expect_503(srv, what, words, within=30):
    """Pushes until one is refused (the log fills up): 503, Retry-After, the words. Every
    push before it is acknowledged fast, ClickHouse or not. The seconds it took."""
    t0 = time.time()
    n = 0
    while True:
        t = time.time()
        st, hdr, data = push(srv, n)
        n += 1
        check(time.time() - t < 5, "%s: a push took %.1f s" % (what, time.time() - t))
        if st == 200:
            check(time.time() - t0 < within, "%s: no push refused within %d s" % (what, within))
            continue
        check(st == 503, "%s: ingest status %d, want 503: %s" % (what, st, data[:200]))
        check(hdr.get("retry-after") == "1", "%s: Retry-After %r"
              % (what, hdr.get("retry-after")))
        msg = json.loads(data)["error"]
        # the shard's own failure is named once its flusher has seen it
        if all(w in msg for w in words):
            return time.time() - t0, n - 1
        check(time.time() - t0 < within, "%s: the error %r does not say %r"
              % (what, msg, [w for w in words if w not in msg]))
        time.sleep(0.2)


def drained(srv, what, within=30):
    """Pushes until one is acknowledged again (the log drained into ClickHouse)."""
    t0 = time.time()
    while True:
        st, _, data = push(srv)
        if st == 200:
            return time.time() - t0
        check(st == 503, "%s: ingest status %d: %s" % (what, st, data[:200]))
        check(time.time() - t0 < within, "%s: pushes still refused after %d s" % (what, within))
        time.sleep(0.2)


def main():
    try:
        faults()
    finally:
        for x in STARTED:
            x.kill()


STARTED = []


def start(name, config):
    """A scorch server with this configuration (its log NAME.log), stopped at the end."""
    cfg = os.path.join(TMP, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(config)
    srv = Server(SCORCH, os.path.join(TMP, "unused"), os.path.join(TMP, name + ".log"), cfg)
    STARTED.append(srv)
    return srv.start()


def faults():
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    p = port.getsockname()[1]
    port.close()
    fake = ThreadingServer(("127.0.0.1", p), Handler)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % p
    srv = start("server", "storage: {engine: clickhouse, url: \"%s\", write_timeout: 1s, "
                "query_timeout: 2s, max_answer: 2MiB, log_limit: 64KiB}\n" % url)
    check(any(r.startswith("CREATE TABLE") for r in Fake.requests), "no tables created")
    st, _, data = push(srv)
    check(st == 200, "ingest with a working clickhouse: %d %s" % (st, data[:200]))
    # inserted from the local log within a flush (half a second; longer on a loaded machine)
    deadline = time.time() + 30
    while not any(r.startswith("INSERT INTO default.scorch_ingest_local") and "RowBinary" in r
                  for r in Fake.requests):
        check(time.time() < deadline, "no RowBinary insert into the profiles: %s"
              % Fake.requests[-5:])
        time.sleep(0.1)

    # a hung ClickHouse holds no push: they wait in the local log until it is full
    Fake.mode = "hang"
    took, n = expect_503(srv, "clickhouse not answering", ["unavailable", "local log is full",
                                                           "no answer in time"])
    print("slow clickhouse: %d pushes acknowledged from the local log, then 503 after %.1f s "
          "(log_limit 64KiB)" % (n, took))
    expect_error(srv, 503, "GET", "/api/v1/labels", words=["unavailable"], what="labels, slow")

    Fake.mode = "busy"
    expect_503(srv, "too many parts", ["unavailable", "Too many parts"])

    Fake.mode = "error"
    expect_503(srv, "an error", ["local log is full", "Syntax error"])
    expect_error(srv, 500, "GET", "/api/v1/labels", words=["clickhouse", "Syntax error"],
                 what="labels, error")
    Fake.mode = "ok"
    print("log drained %.1f s after clickhouse answered again" % drained(srv, "back from errors"))

    Fake.mode = "huge"
    rss0 = srv.rss_mb()
    for path, params in (("/api/v1/labels", {}),
                         ("/api/v1/series", {"query": "{}", "from": "now-1h"}),
                         ("/api/v1/render", {"query": "{}", "type": "cpu:samples",
                                             "format": "tsv", "from": "now-1h"})):
        st, _, data = srv.get(path, params, timeout=60)
        check(400 <= st < 500, "%s, endless answer: status %d: %s" % (path, st, data[:200]))
        msg = json.loads(data)["error"]
        check("larger than 2 MiB" in msg, "%s, endless answer: %r" % (path, msg))
    check(srv.rss_mb() < rss0 + 64, "memory grew from %.0f to %.0f MiB on endless answers"
          % (rss0, srv.rss_mb()))
    check(srv.alive(), "the server died on endless answers")

    # gone: nothing listens
    fake.shutdown()
    fake.server_close()
    Fake.mode = "ok"
    expect_503(srv, "clickhouse gone", ["unavailable", "127.0.0.1:%d" % p])
    expect_error(srv, 503, "GET", "/api/v1/profile_types", words=["unavailable"],
                 what="types, clickhouse gone")
    # back: the same server inserts its log and takes pushes again, by itself
    inserts0 = sum(1 for r in Fake.requests if r.startswith("INSERT INTO default.scorch_ingest"))
    fake = ThreadingServer(("127.0.0.1", p), Handler)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    drained(srv, "clickhouse back")
    # a push is acknowledged as soon as the log has room; the flusher's retry comes after its
    # backoff (at most 5 s): wait for it, not for the acknowledgement
    t0 = time.time()
    while (sum(1 for r in Fake.requests if r.startswith("INSERT INTO default.scorch_ingest"))
           <= inserts0 and time.time() - t0 < 30):
        time.sleep(0.2)
    check(sum(1 for r in Fake.requests if r.startswith("INSERT INTO default.scorch_ingest"))
          > inserts0, "the local log was not inserted within 30 s of clickhouse coming back")
    rc, _ = srv.stop()
    check(rc == 0, "server exit status %s" % rc)

    # a query's own time (server.query_timeout, 1 s) bounds its requests to ClickHouse,
    # not only storage.query_timeout (6 s): a hung ClickHouse costs the query its budget
    srv2 = start("budget", "server: {query_timeout: 1s}\nstorage: {engine: clickhouse, "
                 "url: \"%s\", query_timeout: 6s}\n" % url)
    Fake.mode = "hang"
    t0 = time.time()
    st, _, data = srv2.get("/api/v1/render", {"query": "{}", "type": "cpu:samples",
                                               "format": "tsv", "from": "now-1h"}, timeout=60)
    took = time.time() - t0
    check(st == 503 and "server.query_timeout" in json.loads(data)["error"],
          "render against a hung clickhouse: %d %s" % (st, data[:200]))
    # the bound: the budget plus the 100 ms floor of a request and a loaded machine's
    # scheduling, well under storage.query_timeout's 6 s (which it took before)
    check(took < 4, "render against a hung clickhouse took %.1f s (query_timeout 1s)" % took)
    print("hung clickhouse: a query answered 503 after %.1f s (server.query_timeout 1s)" % took)
    Fake.mode = "ok"
    srv2.kill()
    fake.shutdown()

    # configurations that cannot work are refused at start, saying why
    for args, words in ((["--storage", "clickhouse"], ["clickhouse-url"]),
                        (["--storage", "clickhouse", "--clickhouse-url", "ftp://x"],
                         ["--clickhouse-url", "http:// or https:// URL", "ftp://x"]),
                        (["--storage", "mysql"], ["'--storage' must be one of sqlite, clickhouse"])):
        r = Server(SCORCH, os.path.join(TMP, "unused"), os.path.join(TMP, "bad.log"), None,
                   args)
        STARTED.append(r)
        try:
            r.start(timeout=10)
            fail("server started with %s" % args)
        except Exception as e:  # noqa: BLE001 - Fail is what start raises
            for w in words:
                check(w in str(e), "%s: %s does not say %r" % (args, e, w))
    print("faults: slow, busy, failing, endless and gone clickhouse answered as they should")


if __name__ == "__main__":
    main_wrapper(main)
