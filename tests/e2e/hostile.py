"""hostile.py - numbered hostile cases against a running `scorch server`: each crafted push
is refused with its status and a message naming the limit (or stored and read back right)
within 10 s, nothing refused is stored, every JSON answer is valid UTF-8, the server's
memory stays bounded and it keeps serving (2, 3, 4, 7, 8, 11); the heavy queries (1: the
call graph of a 300k-sample heap profile, another tenant's answering meanwhile, and SIGTERM
with a call graph's layout running; 6: a backtracking regex over long names; 10: every heavy
view and a diff's statistics under server.query_memory, eight heavy queries at once, 503
past server.max_queries), the drain (5: a keep-alive connection after SIGTERM) and the token
(9: empty refused, Basic refused), each with a bound on time and memory. Usage: hostile.py
TMPDIR (env: SCORCH)."""
import base64
import functools
import gzip
import http.client
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, enc, expect_error, fail, main_wrapper, pb_field as field,
                           pb_num as num, pb_varint as varint, with_server)

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
INT64_MAX = (1 << 63) - 1
# what the server may use while refusing any of this (a 60 MiB body is read whole first; an
# ASan build needs more: SCORCH_RSS_BOUND_MB)
RSS_BOUND_MB = int(os.environ.get("SCORCH_RSS_BOUND_MB", "400"))
NOW = int(time.time())


def pprof(fname=b"f", lines=1, time_nanos=0):
    """A pprof of one sample on one location of `lines` inlined lines of function fname."""
    loc = num(1, 1) + field(4, num(1, 1) + num(2, 7)) * lines
    body = (field(1, num(1, 1) + num(2, 2)) +                      # sample_type samples/count
            field(2, field(1, b"\x01") + field(2, varint(1))) +    # sample: location 1, 1
            field(4, loc) +
            field(5, num(1, 1) + num(2, 3)) +                      # function 1: name 3
            b"".join(field(6, x) for x in (b"", b"samples", b"count", fname)))
    if time_nanos:
        body += num(9, time_nanos)
    return gzip.compress(body, 1)


def valid_json(data, what):
    """Every answer scorch writes is valid UTF-8 JSON."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        fail("%s: not valid UTF-8 JSON (%s): %r" % (what, e, data[:200]))


def series(srv):
    return [s["labels"]["service_name"] for s in valid_json(srv.ok("/api/v1/series"), "series")]


def main():
    with_server(SCORCH, TMP, run_all)
    configured()
    heavy()
    budgeted()
    diff_stats_budget()
    admission()
    timeout()
    token()


@functools.lru_cache(maxsize=None)
def heap_pprof(nsamples, nfuncs=20000, depth=12, seed=1):
    """A Go-like heap profile (alloc_objects, alloc_space, inuse_objects, inuse_space) of
    nsamples samples, each a random stack of depth functions out of nfuncs: nearly every
    sample its own stack, the worst case for a merge, a flame graph and a call graph."""
    rnd = random.Random(seed)
    strings = [b"", b"alloc_objects", b"count", b"alloc_space", b"bytes", b"inuse_objects",
               b"inuse_space"]
    out = [field(1, num(1, 1) + num(2, 2)), field(1, num(1, 3) + num(2, 4)),
           field(1, num(1, 5) + num(2, 2)), field(1, num(1, 6) + num(2, 4))]
    for i in range(nfuncs):
        strings.append(b"example.com/service/pkg%d.(*T%d).Method%d" % (i % 300, i % 50, i))
        out.append(field(5, num(1, i + 1) + num(2, len(strings) - 1)))
        out.append(field(4, num(1, i + 1) + field(4, num(1, i + 1) + num(2, 10 + i % 500))))
    locs = [varint(i + 1) for i in range(nfuncs)]
    vals = [field(2, b"".join(varint(x) for x in (v, v * 64, v // 2, v * 32)))
            for v in range(1, 100)]
    for _ in range(nsamples):
        stack = b"".join(rnd.choices(locs, k=depth))
        out.append(field(2, b"\x0a" + varint(len(stack)) + stack + rnd.choice(vals)))
    out += [field(6, s) for s in strings]
    return gzip.compress(b"".join(out), 1)


def timed(what, bound_s, fn):
    """fn() within bound_s seconds (a hang detector on a loaded machine, not a speed test)."""
    t = time.time()
    out = fn()
    took = time.time() - t
    check(took < bound_s, "%s took %.1f s (the bound is %d s)" % (what, took, bound_s))
    return out, took


# a push or a refusal answered at once takes milliseconds (a 60 MiB body well under 1 s);
# the bound only tells a hang or a runaway (without the bounds, these took 15 to 300 s) from that
REQUEST_BOUND_S = 10


def bound_requests(srv, bound_s=REQUEST_BOUND_S):
    """From now on every request made through srv (push, ok, json, expect_error) must be
    answered within bound_s seconds."""
    plain = srv.request

    def request(method, path, params=None, **kw):
        t = time.time()
        out = plain(method, path, params, **kw)
        took = time.time() - t
        name = (params or {}).get("name")
        check(took < bound_s, "%s %s%s took %.1f s (the bound is %g s)" % (
            method, path, " (%r)" % name if name else "", took, bound_s))
        return out
    srv.request = request


def reset_peak(srv):
    """Starts the kernel's VmHWM of the server afresh (clear_refs 5) and returns VmRSS."""
    with open("/proc/%d/clear_refs" % srv.proc.pid, "w") as f:
        f.write("5")
    return srv.rss_mb()


def peak_mb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        return [int(l.split()[1]) / 1024.0 for l in f if l.startswith("VmHWM:")][0]


def heavy():
    """1: the call graph of a 300k-sample heap profile at the default nodecount answers in
    bounded time while another tenant's tiny one answers meanwhile; 6: (a+)+$ over 1,000
    names of 3,000 characters is stopped by the request's regex budget."""
    srv = Server(SCORCH, os.path.join(TMP, "heavy"), os.path.join(TMP, "heavy.log")).start()
    try:
        now = {"from": str(NOW), "until": str(NOW + 10)}
        # 500 functions: each is in about 2% of the samples, so the graph keeps nodes
        srv.push(heap_pprof(300000, nfuncs=500), name="heap300k", format="pprof", **now)
        other = {"X-Scope-OrgID": "other"}
        srv.push(b"main;small 5\nmain;other 3\n", headers=other, name="tiny", **now)
        span = {"from": str(NOW - 60), "until": str(NOW + 60)}
        big = dict(span, query='{service_name="heap300k"}', type="heap:alloc_space")
        small = dict(span, query='{service_name="tiny"}', type="cpu:cpu", format="dot")
        res = {}

        def run_big():
            res["big"] = srv.request("GET", "/api/v1/callgraph", big, timeout=120)
        t = threading.Thread(target=run_big)
        t0 = time.time()
        t.start()
        time.sleep(0.2)
        (st, _, dot), took = timed("another tenant's tiny call graph", 20, lambda: srv.request(
            "GET", "/api/v1/callgraph", small, headers=other, timeout=60))
        check(st == 200 and b"small" in dot, "the tiny call graph: %d %r" % (st, dot[:200]))
        t.join(120)
        check("big" in res, "the 300k-sample call graph did not answer in 120 s")
        st, _, svg = res["big"]
        check(st == 200 and b"<svg" in svg and b"Method" in svg,
              "the 300k-sample call graph: %d %r" % (st, svg[:300]))
        print("ok: 1: a 300k-sample heap call graph in %.1f s; another tenant's in %.1f s "
              "meanwhile" % (time.time() - t0, took))

        names = b"".join(b"main;" + b"a" * 3000 + b"%04d 1\n" % i for i in range(1000))
        srv.push(names, name="longnames", format="folded", **now)
        q = dict(span, query='{service_name="longnames"}', type="cpu:cpu", focus="(a+)+$")
        # the regexes get 1 s of matching in all (without it, 15.5 s): a bound
        # well under that, with room for the merge of 1,000 names on a loaded machine
        msg, took = timed("(a+)+$ over 1,000 long names", 8, lambda: expect_error(
            srv, 400, "GET", "/api/v1/render", q, words=("ms of matching", "(a+)+"),
            what="a backtracking focus"))
        print("ok: 6: (a+)+$ over 1,000 3,000-character names stopped in %.1f s: %s" %
              (took, msg))

        # a client that hangs up stops its query (the server does not work on for nobody)
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /api/v1/render?%s HTTP/1.1\r\nHost: x\r\n\r\n" %
                  enc(dict(span, query='{service_name="heap300k"}', type="heap:alloc_space"))
                  .encode())
        time.sleep(0.3)
        s.close()
        gone = 'scorch_query_stopped_total{reason="client_gone"}'
        deadline = time.time() + 30
        while srv.metrics().get(gone, 0) < 1 and time.time() < deadline:
            time.sleep(0.05)
        check(srv.metrics().get(gone, 0) == 1, "a render whose client hung up was not stopped")
        print("ok: 1: a render of the 300k samples stops when its client hangs up")

        # 10, its second half: new frames in every push do not stay in the server's memory
        # (the store's caches are bounded; freed heap goes back after a big request)
        rss = []
        for k in range(4):
            lines = "".join("main;svc%d_h%d;leaf_function_number_%d_%d 1\n" % (k, i % 1000, k, i)
                            for i in range(200000))
            srv.push(lines.encode(), name="frames", format="folded", **now)
            rss.append(srv.rss_mb())
        # kept, the 600k frames after the first push would add 200 MiB or more (3M once
        # took 1.1 GB); the store's caches (2^19 entries each) are emptied when
        # full, so RSS saws within about their size
        check(max(rss) < rss[0] + 96, "RSS after four pushes of 200k new frames: %s MiB" %
              " ".join("%.0f" % r for r in rss))
        print("ok: 10: RSS after each of four pushes of 200k new frames: %s MiB" %
              " ".join("%.0f" % r for r in rss))
        check(srv.alive(), "the server died")
    finally:
        srv.kill()


BUDGET_MB = 32


def push_big_and_tiny(srv):
    """Pushes 300k distinct heap stacks as "heap" and one stack as "tiny"; returns the range
    that holds them and the query parameters of the big one."""
    now = {"from": str(NOW), "until": str(NOW + 10)}
    srv.push(heap_pprof(300000, seed=2), name="heap", format="pprof", **now)
    srv.push(b"main;small 5\n", name="tiny", **now)
    span = {"from": str(NOW - 60), "until": str(NOW + 60)}
    return span, dict(span, query='{service_name="heap"}', type="heap:alloc_space")


def budgeted():
    """10: with server.query_memory at 32 MiB, each heavy view (a flame graph, a call graph
    and a diff of 300k distinct stacks, about half a GiB unbudgeted; one stored profile; a
    heatmap of 14,401 x 1,000 cells) is refused with a 400 naming the key, a small one still
    answers, and eight of the big ones at once keep the server within max_queries x the
    budget; 5: after SIGTERM a keep-alive connection gets 503 and Connection: close, and
    the server exits within its shutdown bound."""
    srv = with_config("budget", "server:\n  query_memory: %dMiB\n  max_queries: 4\n"
                      "  shutdown_timeout: 2s\n" % BUDGET_MB)
    try:
        span, big = push_big_and_tiny(srv)
        # one timed sample 4 h before another: their heatmap in 1 ms rows is 14,401 x 1,000
        # counts (58 MB, about 140 MiB held unbudgeted); one of them alone is one column
        perf = (b"prog 100 [000] 1000.000100:     1000000 cpu-clock:\n"
                b"\t4005d0 main.hot (/bin/prog)\n\t400100 main.main (/bin/prog)\n\n")
        for t in (NOW - 4 * 3600, NOW):
            srv.push(perf, name="timed", format="perf_script", **{"from": str(t)})
        heat = {"query": '{service_name="timed"}', "type": "cpu:cpu-clock", "rows": "1000",
                "from": str(NOW - 5 * 3600), "until": str(NOW + 60)}
        tiny = dict(span, query='{service_name="tiny"}', type="cpu:cpu")

        def diff(q):
            return dict(q, base_query=q["query"], base_from=q["from"], base_until=q["until"])
        # each heavy view on its own path is held to the budget (were one not, it would
        # answer 200: each of these holds hundreds of MiB unbudgeted), and answers something
        # small under it
        words = ("%d MiB" % BUDGET_MB, "server.query_memory")
        views = (("a flame graph", "/api/v1/render", big, tiny),
                 ("a call graph", "/api/v1/callgraph", big, tiny),
                 ("a diff with its statistics", "/api/v1/diff", diff(big), diff(tiny)),
                 ("a heatmap", "/api/v1/heatmap", heat, dict(heat, **{"from": str(NOW - 60)})))
        for what, path, over, small in views:
            msg, took = timed("%s over the budget" % what, 30, lambda: expect_error(
                srv, 400, "GET", path, over, words=words, what="%s over the budget" % what))
            srv.ok(path, small)
            print("ok: 10: %s over the budget refused in %.1f s, a small one answered" %
                  (what, took))
        # one stored profile is as heavy as a merge of it
        expect_error(srv, 400, "GET", "/api/v1/profile",
                     {"type": "heap:alloc_space", "series": '{service_name="heap"}',
                      "time": str(NOW)}, words=words, what="one stored profile over the budget")
        m = srv.metrics()
        check(0 < m["scorch_query_memory_peak_bytes"] <= BUDGET_MB << 20,
              "query memory peak %r" % m.get("scorch_query_memory_peak_bytes"))
        base = reset_peak(srv)
        got = []

        def one(path):
            st, _, data = srv.request("GET", path, big, timeout=120)
            got.append((path, st, data))
        paths = ["/api/v1/render", "/api/v1/callgraph", "/api/v1/diff", "/api/v1/heatmap"] * 2
        threads = [threading.Thread(target=one, args=(p,)) for p in paths]
        def run_all_eight():
            for x in threads:
                x.start()
            for x in threads:
                x.join(120)
        _, took = timed("eight heavy queries", 120, run_all_eight)
        check(len(got) == 8, "%d of 8 heavy queries answered" % len(got))
        for path, st, data in got:
            ok = (st == 400 and b"server.query_memory" in data) or (st == 503 and b"busy" in data)
            # the heatmap of a profile without timestamps is small: it may answer
            check(ok or (st == 200 and path == "/api/v1/heatmap"),
                  "%s under the budget: %d %r" % (path, st, data[:200]))
        peak = peak_mb(srv)
        bound = base + 4 * BUDGET_MB + 96
        check(peak < bound, "8 heavy queries: peak RSS %.0f MiB over %.0f MiB (RSS before "
              "%.0f + 4 x %d MiB + slack)" % (peak, bound, base, BUDGET_MB))
        print("ok: 10: %s; 8 heavy queries at once in %.1f s (%s), peak RSS %.0f MiB from %.0f "
              "(bound %.0f)" % (msg, took, " ".join(str(s) for _, s, _ in got), peak, base, bound))

        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        r.read()
        check(r.status == 200 and not r.will_close, "keep-alive /healthz: %d" % r.status)
        srv.proc.send_signal(signal.SIGTERM)
        t0 = time.time()
        time.sleep(0.3)
        try:
            conn.request("GET", "/api/v1/series")
            r = conn.getresponse()
            body = r.read()
            check(r.status == 503 and r.getheader("Connection", "").lower() == "close",
                  "a request on a kept-alive connection after SIGTERM: %d %s %r" %
                  (r.status, r.getheader("Connection"), body[:100]))
        except (ConnectionError, http.client.HTTPException):
            pass  # the connection was already closed: no request served either way
        try:
            srv.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            fail("the server did not exit within 30 s of SIGTERM (shutdown_timeout 2s)")
        print("ok: 5: after SIGTERM a kept-alive connection is refused; exit in %.1f s, "
              "status %d" % (time.time() - t0, srv.proc.returncode))
    finally:
        srv.kill()


def diff_stats_budget():
    """10: a diff's statistics are held to server.query_memory as its merges are: the flame
    graph diff of three profiles of 10k distinct stacks, without its statistics and with
    them, each measured unbudgeted on a server of its own (scorch_query_memory_peak_bytes:
    about 30 and 40 MiB), then with the budget halfway between: the first answers, the
    second is refused naming the key (were the statistics computed off the budget, both
    would answer)."""
    q = {"query": '{service_name="mid"}', "type": "heap:alloc_space", "format": "flame",
         "from": str(NOW - 3600), "until": str(NOW + 60)}
    q.update(base_query=q["query"], base_from=q["from"], base_until=q["until"])
    plain_q = dict(q, stats="0")

    def fresh(budget, fn):
        """fn(srv) on a server of the same store started afresh (what a query finds in the
        store's caches changes what it allocates)."""
        srv = with_config("stats", "server:\n  query_memory: %s\n" % budget)
        try:
            return fn(srv)
        finally:
            srv.kill()

    def push(srv):
        for k in range(3):
            t = NOW - 600 * k
            srv.push(heap_pprof(10000, seed=3), name="mid", format="pprof",
                     **{"from": str(t), "until": str(t + 10)})
    fresh("8GiB", push)

    def peak(params):
        def run(srv):
            srv.ok("/api/v1/diff", params, timeout=120)
            return srv.metrics()["scorch_query_memory_peak_bytes"]
        return fresh("8GiB", run)
    plain, stats = peak(plain_q), peak(q)
    budget_mb = int((plain + stats) / 2) >> 20
    check(plain + (2 << 20) < budget_mb << 20 < stats - (2 << 20),
          "a diff's statistics add %.1f MiB to its %.1f MiB: too little to tell them by" %
          ((stats - plain) / 2**20, plain / 2**20))
    budget = "%dMiB" % budget_mb
    _, took = fresh(budget, lambda srv: timed(
        "a diff without statistics under the budget", 60,
        lambda: srv.ok("/api/v1/diff", plain_q)))
    msg, took2 = fresh(budget, lambda srv: timed(
        "a diff whose statistics pass the budget", 60, lambda: expect_error(
            srv, 400, "GET", "/api/v1/diff", q,
            words=("%d MiB" % budget_mb, "server.query_memory"),
            what="a diff whose statistics pass the budget")))
    print("ok: 10: a diff holds %.1f MiB, %.1f with its statistics: at %d MiB the first "
          "answers (%.1f s), the second is refused (%.1f s): %s" %
          (plain / 2**20, stats / 2**20, budget_mb, took, took2, msg))


def layout_workers(srv):
    """The pids of the server's children (its call graph layout workers), from /proc."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == srv.proc.pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass  # ended meanwhile
    return out


def stalled_layout(srv, params, stopped, tries=3):
    """Sends the call graph of params on a socket of its own and stops (SIGSTOP) its layout
    worker once it runs (for a few hundred ms): a layout that never ends, as Graphviz's
    once took 300 s, its query still holding its slot. The pids stopped are added
    to stopped (the caller kills those left at the end). Returns the socket."""
    for _ in range(tries):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
        s.sendall(b"GET /api/v1/callgraph?%s HTTP/1.1\r\nHost: x\r\n\r\n" %
                  enc(params).encode())
        deadline = time.time() + 30
        while time.time() < deadline:
            kids = layout_workers(srv)
            if kids:
                for pid in kids:
                    os.kill(pid, signal.SIGSTOP)
                stopped += kids
                return s
            if select.select([s], [], [], 0.002)[0]:
                break  # answered before its worker was seen: again
        s.close()
    fail("a call graph's layout worker was not seen running in %d tries" % tries)


def gone(pid, within_s):
    """Whether process pid has ended (and been reaped) within within_s seconds."""
    deadline = time.time() + within_s
    while os.path.exists("/proc/%d" % pid):
        if time.time() > deadline:
            return False
        time.sleep(0.05)
    return True


def admission():
    """10: with server.max_queries at 1, a call graph whose layout never ends (its worker
    stopped) holds the only slot: another heavy query waits its 5 s and gets 503 with
    Retry-After naming server.max_queries, while /healthz and the label names answer at
    once; its client hanging up kills the worker and frees the slot. 1: SIGTERM with such a
    call graph running makes the server kill the worker and exit 0 within its shutdown
    bound (server.shutdown_timeout, 5 s, plus slack), its client answered or closed, not
    left hanging (without the bound, the server needed SIGKILL). server.layout_timeout at 120 s: no
    deadline ends the layout within these bounds."""
    srv = with_config("admission", "server:\n  max_queries: 1\n  layout_timeout: 120s\n")
    stopped = []
    try:
        now = {"from": str(NOW), "until": str(NOW + 10)}
        # 500 functions: a graph of about 500 nodes, whose layout takes a few hundred ms
        srv.push(heap_pprof(5000, nfuncs=500, seed=4), name="graph", format="pprof", **now)
        srv.push(b"main;small 5\n", name="tiny", **now)
        span = {"from": str(NOW - 60), "until": str(NOW + 60)}
        graph = dict(span, query='{service_name="graph"}', type="heap:alloc_space",
                     nodecount="2000")
        tiny = dict(span, query='{service_name="tiny"}', type="cpu:cpu")
        held = stalled_layout(srv, graph, stopped)
        for path in ("/healthz", "/api/v1/labels"):
            timed("%s with the only query slot held" % path, 5, lambda: srv.ok(path))
        (st, hdr, data), took = timed("a heavy query past server.max_queries", 20,
                                      lambda: srv.request("GET", "/api/v1/render", tiny))
        check(st == 503 and "retry-after" in hdr and b"server.max_queries" in data and
              b"busy" in data, "a heavy query past server.max_queries: %d %s %r" %
              (st, hdr.get("retry-after"), data[:200]))
        print("ok: 10: with max_queries 1 held, a heavy query waited %.1f s for 503 "
              "(Retry-After %s): %s; /healthz and the label names answered meanwhile" %
              (took, hdr["retry-after"], valid_json(data, "busy")["error"]))
        held.close()
        check(gone(stopped[-1], 10), "the stalled layout's worker outlived its client by 10 s")
        timed("a heavy query after the held one's client hung up", 10,
              lambda: srv.ok("/api/v1/render", tiny))
        print("ok: 10: the held query's client hung up: its layout worker killed, the slot free")

        held = stalled_layout(srv, graph, stopped)
        srv.proc.send_signal(signal.SIGTERM)
        t0 = time.time()
        bound = 5 + 25
        try:
            rc = srv.proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            fail("SIGTERM with a call graph's layout running: the server did not exit "
                 "within %d s (shutdown_timeout 5 s)" % bound)
        took = time.time() - t0
        check(rc == 0, "SIGTERM with a call graph's layout running: exit status %d" % rc)
        check(gone(stopped[-1], 5), "the layout worker outlived the server")
        held.settimeout(10)
        answer = b""
        try:
            while True:
                b = held.recv(65536)
                if not b:
                    break
                answer += b
        except ConnectionResetError:
            pass
        except socket.timeout:
            fail("the call graph's client still waits 10 s after the server exited")
        # an answer is 503 with Retry-After (the server stopping is no fault of the request's
        # nor a failure of the server's: it was 500)
        check(not answer or (answer.startswith(b"HTTP/1.1 503") and b"Retry-After" in answer
                             and b"the server is stopping" in answer),
              "the call graph's client got %r" % answer[:300])
        print("ok: 1: SIGTERM with a call graph's layout running: exit 0 in %.1f s, the "
              "client %s" % (took, answer.decode("latin-1").replace("\r\n", " | ")[-300:]
                             if answer else "closed"))
    finally:
        # a worker still stopped (a check failed first) is not left behind
        for pid in stopped:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                if state == "T" and os.readlink("/proc/%d/exe" % pid) == \
                        os.path.realpath(SCORCH):
                    os.kill(pid, signal.SIGKILL)
            except (OSError, IndexError):
                pass  # gone
        srv.kill()


def timeout():
    """1: with server.query_timeout at 1 s, a flame graph of 300k distinct stacks (seconds of
    work) is stopped with a 503 naming the key; a small query still answers."""
    srv = with_config("timeout", "server:\n  query_timeout: 1s\n")
    try:
        span, big = push_big_and_tiny(srv)
        msg, took = timed("a query past its time budget", 30, lambda: expect_error(
            srv, 503, "GET", "/api/v1/render", big, words=("1 s", "server.query_timeout"),
            what="a flame graph past its time"))
        srv.ok("/api/v1/render", dict(span, query='{service_name="tiny"}', type="cpu:cpu"))
        check(srv.metrics().get('scorch_query_stopped_total{reason="timeout"}') == 1,
              "the timeout is not counted")
        print("ok: 1: %s (answered in %.1f s)" % (msg, took))
    finally:
        srv.kill()


def token():
    """9: an empty token is refused at start; Basic auth is refused even with the token."""
    refused_at_start("emptytoken", 'auth:\n  token: ""\n', b"auth.token is empty")
    srv = with_config("token", "auth:\n  token: s3cret\n")
    bound_requests(srv)
    try:
        basic = "Basic " + base64.b64encode(b"user:s3cret").decode()
        st, _, _ = srv.request("GET", "/api/v1/series", headers={"Authorization": basic},
                               auth=False)
        check(st == 401, "Basic auth with the token: %d, want 401" % st)
        st, _, _ = srv.request("GET", "/api/v1/series",
                               headers={"Authorization": "Bearer s3cret"}, auth=False)
        check(st == 200, "the bearer token: %d" % st)
        print("ok: 9: an empty token refused at start, Basic refused, Bearer taken")
    finally:
        srv.kill()


def with_config(name, yaml):
    """A server started with yaml as its config, its data and log named name in TMP."""
    cfg = os.path.join(TMP, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(yaml)
    return Server(SCORCH, os.path.join(TMP, name), os.path.join(TMP, name + ".log"),
                  config=cfg).start()


def refused_at_start(name, yaml, words):
    """`scorch server` with yaml as its config exits non-zero before listening, saying words."""
    cfg = os.path.join(TMP, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(yaml)
    r = subprocess.run([SCORCH, "server", "--config", cfg, "--data", os.path.join(TMP, name),
                        "--listen", "127.0.0.1:0"], capture_output=True, timeout=30)
    check(r.returncode != 0 and words in r.stderr,
          "config %r: exit %d, %r" % (yaml, r.returncode, r.stderr[-200:]))


def configured():
    """The config's limits: section moves the limits the messages name."""
    srv = with_config("limits", "limits:\n  max_string: 1000\n  max_stack_depth: 10\n"
                      "  max_age: 1h\n")
    bound_requests(srv)
    try:
        now = {"from": str(NOW), "until": str(NOW + 10)}
        expect_error(srv, 413, "POST", "/ingest", dict(now, name="c", format="folded"),
                     body=b"a;" + b"x" * 1001 + b" 1\n",
                     words=("1001 bytes", "limit of 1000", "limits.max_string"))
        srv.push(b"a;" + b"x" * 1000 + b" 1\n", name="c", format="folded", **now)
        expect_error(srv, 413, "POST", "/ingest", dict(now, name="c", format="pprof"),
                     body=pprof(lines=11), words=("11 lines", "limit of 10"))
        expect_error(srv, 400, "POST", "/ingest", {"name": "c", "from": str(NOW - 7200)},
                     body=b"a 1\n", words=("more than 1h before now", "limits.max_age"))
        srv.push(b"a 1\n", name="c", **{"from": str(NOW - 1800)})
    finally:
        srv.kill()
    refused_at_start("badlimits", "limits:\n  max_strings: 5\n",
                     b"unknown key 'limits.max_strings'")
    print("ok: the config's limits: section moves the limits")


def run_all(srv):
    t0 = time.time()
    now = {"from": str(NOW), "until": str(NOW + 10)}
    # every case here is one request answered at once (2, 3, 4, 7, 8, 11)
    bound_requests(srv)

    def refused(status, words, body, what, **params):
        msg, took = timed(what, REQUEST_BOUND_S, lambda: expect_error(
            srv, status, "POST", "/ingest", params, body=body, words=words, what=what))
        check(srv.alive(), "%s: the server died" % what)
        check(srv.rss_mb() < RSS_BOUND_MB, "%s: RSS %.0f MiB is over %d MiB" %
              (what, srv.rss_mb(), RSS_BOUND_MB))
        print("ok: %s (%.2f s): %s" % (what, took, msg))

    # 2: a 60 MiB function name, folded and in a pprof
    big = b"x" * (60 << 20)
    refused(413, ("limits.max_string", "62914560 bytes"), b"main;" + big + b" 1\n",
            "60 MiB frame (folded)", name="bigname", format="folded", **now)
    refused(413, ("limits.max_string",), pprof(fname=big), "60 MiB function name (pprof)",
            name="bigname", format="pprof", **now)
    del big
    # 3: one location with 1M inlined lines; 4,096 lines pass, 4,097 do not
    refused(413, ("location 1", "1000000 lines", "limits.max_stack_depth"), pprof(lines=10**6),
            "1M inlined lines", name="inlined", format="pprof", **now)
    refused(413, ("limits.max_stack_depth",), pprof(lines=4097), "4,097 inlined lines",
            name="inlined", format="pprof", **now)
    srv.push(pprof(lines=4096), name="inlined4096", format="pprof", **now)
    # 4: times outside the window: year 2500 (once wrapped to 1915), 2100, 1970, a pprof's
    # own time from 1970, and from after until
    refused(400, ("'from'", "16725225600", "2262"), b"a 1\n", "year 2500 from",
            name="times", **{"from": "16725225600"})
    refused(400, ("2100-01-01", "ahead", "limits.max_ahead"), b"a 1\n", "year 2100 from",
            name="times", **{"from": "4102444800"})
    refused(400, ("1970-01-01", "limits.max_age"), b"a 1\n", "1970 from", name="times",
            **{"from": "100"})
    refused(400, ("1970-01-01", "limits.max_age"), pprof(time_nanos=10**9), "1970 pprof time",
            name="times", format="pprof")
    refused(400, ("'until'", "before 'from'"), b"a 1\n", "from after until", name="times",
            **{"from": str(NOW), "until": str(NOW - 60)})
    # 11: random bytes without a format, 'bad}' as a name, the stacks limit's words
    rnd = random.Random(15)
    noise = bytes(rnd.getrandbits(8) for _ in range(1 << 16))
    refused(400, ("not clearly", "'format'"), noise, "random bytes, no format", name="noise",
            **now)
    refused(400, ("bad}", "'}'"), b"a 1\n", "bad} as a name", name="bad}", **now)
    lines = b"a;b 1\n" * ((1 << 20) + 1)
    refused(413, ("1048576 stack lines", "limits.max_samples"), lines, "2^20+1 stack lines",
            name="manylines", format="folded", **now)
    # nothing refused was stored
    names = series(srv)
    for n in ("bigname", "inlined", "times", "noise", "bad", "manylines"):
        check(n not in names, "refused push %r was stored: %s" % (n, names))
    check("inlined4096" in names, "the 4,096-line push is missing: %s" % names)
    # a gzip body is admitted at its trailer's size and held to it: a multi-member body
    # (whose trailer tells only the last member) is measured and decoded again, whole; a
    # trailer that lies is refused as corrupt
    big_member = gzip.compress(b"".join(b"main;f%d 1\n" % i for i in range(50000)), 1)
    st, _, data = srv.request("POST", "/ingest", dict(now, name="members", format="folded"),
                              body=big_member + gzip.compress(b"main;last 1\n"))
    check(st == 200 and json.loads(data)["samples"] == 50001,
          "a two-member gzip push: %d %r" % (st, data[:200]))
    liar = bytearray(gzip.compress(b"main;x 1\n" * 200000, 1))
    liar[-4:] = (1000).to_bytes(4, "little")
    refused(400, ("corrupt gzip",), bytes(liar), "a gzip trailer that claims too little",
            name="liar", format="folded", **now)
    # past the real limit it is the limit's 413, however little the trailer claims
    over = gzip.compress(b"\0" * ((64 << 20) + 1), 6) + gzip.compress(b"main;last 1\n")
    refused(413, ("inflates to more than 67108864 bytes",), over,
            "a two-member gzip push past the limit whose trailer claims 12 bytes",
            name="overlimit", format="folded", **now)
    names = series(srv)
    check(names.count("members") == 1 and "liar" not in names and "overlimit" not in names,
          "gzip pushes held to their claim: %s" % names)
    print("ok: a two-member gzip push stored whole; a lying gzip trailer refused; past the "
          "limit 413")
    # a folded body without a format is still folded (Pyroscope's default)
    srv.push(b"main;work 3\n", name="plain", **now)

    # 8: INT64_MAX pushed twice saturates everywhere it is summed
    for _ in range(2):
        srv.push(b"a;b %d\n" % INT64_MAX, name="sat", format="folded", units="objects", **now)
    q = {"query": '{service_name="sat"}', "type": "cpu:objects", "from": str(NOW - 60),
         "until": str(NOW + 60)}
    flame = valid_json(srv.ok("/api/v1/render", q), "render")
    check(flame["total"] == INT64_MAX, "flame total %r, want INT64_MAX" % flame["total"])
    top = valid_json(srv.ok("/api/v1/render", dict(q, format="top")), "top")
    check(top["total"] == INT64_MAX and all(r["cum"] == INT64_MAX for r in top["rows"]),
          "top: %r" % top)
    tl = valid_json(srv.ok("/api/v1/timeline", q), "timeline")
    # one capture (two pushes at one instant, 10 s each) of INT64_MAX: saturated, never
    # wrapped negative, per second of its 10 s (JSON's ten digits: 9.223372037e+17)
    vals = [v for s in tl["series"] for v in s["values"] if v is not None]
    check(vals and abs(min(vals) - INT64_MAX / 10) <= 1e-9 * INT64_MAX,
          "timeline values %r" % vals)
    folded = srv.ok("/api/v1/render", dict(q, format="folded"))
    check(folded.strip() == b"a;b %d" % INT64_MAX, "folded: %r" % folded)
    print("ok: INT64_MAX twice is INT64_MAX in the flame graph, top, timeline and folded")
    # a query range whose length does not fit int64 (1678 to 2262) is refused, as is one
    # past 100 years; a century is answered, with a step that would overflow a sum too
    for frm, unt in (("1678-01-01T00:00:00Z", "2262-01-01T00:00:00Z"),
                     ("1900-01-01T00:00:00Z", "2001-01-01T00:00:00Z")):
        for path in ("/api/v1/render", "/api/v1/timeline"):
            expect_error(srv, 400, "GET", path, dict(q, **{"from": frm, "until": unt}),
                         words=["100 years"], what="%s from %s to %s" % (path, frm, unt))
    century = dict(q, **{"from": "1971-01-01T00:00:00Z", "until": "2070-01-01T00:00:00Z"})
    tl = valid_json(srv.ok("/api/v1/timeline", dict(century, step="9223372036s")), "timeline")
    check(abs(max(v for s in tl["series"] for v in s["values"] if v is not None) -
              INT64_MAX / 10) <= 1e-9 * INT64_MAX, "a century's timeline in one huge step: %r" % tl)
    print("ok: a range over 100 years refused (400), a century in one huge step answered")

    # 7: invalid UTF-8 in label values and frame names comes back as U+FFFD in valid JSON
    srv.push(b"ma\xffin;b\xc3\x28 5\n", format="folded", name=b"utf{env=a\xff\xfeb}", **now)
    lv = valid_json(srv.ok("/api/v1/label_values", {"name": "env"}), "label_values")
    check("a\ufffd\ufffdb" in lv, "label_values: %r" % lv)
    ser = valid_json(srv.ok("/api/v1/series"), "series")
    check(any(s["labels"].get("env") == "a\ufffd\ufffdb" for s in ser), "series: %r" % ser)
    q = {"query": '{service_name="utf"}', "type": "cpu:cpu", "from": str(NOW - 60),
         "until": str(NOW + 60)}
    flame = valid_json(srv.ok("/api/v1/render", q), "render")
    check("ma\ufffdin" in flame["names"] and "b\ufffd(" in flame["names"],
          "flame names %r" % flame["names"])
    for fmt in ("top", "speedscope"):
        valid_json(srv.ok("/api/v1/render", dict(q, format=fmt)), fmt)
    valid_json(srv.ok("/api/v1/profiles", q), "profiles")
    # an error quoting the bad bytes is valid JSON too
    st, _, data = srv.request("POST", "/ingest", {"name": b"u\xff}"}, body=b"a 1\n")
    check(st == 400 and "\ufffd" in valid_json(data, "error")["error"], "error: %r" % data)
    print("ok: invalid UTF-8 comes back as U+FFFD in valid JSON")

    check(srv.alive(), "the server died")
    with open("/proc/%d/status" % srv.proc.pid) as f:
        peak = [int(l.split()[1]) / 1024.0 for l in f if l.startswith("VmHWM:")][0]
    check(peak < RSS_BOUND_MB, "peak RSS %.0f MiB is over %d MiB" % (peak, RSS_BOUND_MB))
    print("ok in %.1f s, peak RSS %.0f MiB" % (time.time() - t0, peak))


if __name__ == "__main__":
    main_wrapper(main)
