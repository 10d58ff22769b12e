"""server_hostile.py - bad input over HTTP: each request gets a 4xx JSON {"error": ...}
naming the problem or the limit, the server never crashes, hangs or balloons, and it keeps
serving. Usage: server_hostile.py TMPDIR (env: SCORCH, SCORCH_SRC, SCORCH_TESTDATA)."""
import gzip
import json
import os
import subprocess
import random
import sys
import threading
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, expect_error, fail, main_wrapper, parse_tsv_rows,
                           pb_field, pb_num, pb_varint, raw_exchange, with_server)

SCORCH = os.environ["SCORCH"]
TD = os.environ.get("SCORCH_TESTDATA", "")
TMP = sys.argv[1]
MAX_BODY = 64 << 20          # the server's defaults (src/server/server.c)
MAX_DECOMPRESSED = 64 << 20
# what the server may use while refusing any of this (an ASan build needs more: its
# quarantine keeps freed memory; set SCORCH_RSS_BOUND_MB)
RSS_BOUND_MB = int(os.environ.get("SCORCH_RSS_BOUND_MB", "600"))
NOW = int(time.time())
RANGE = {"from": str(NOW - 600), "until": str(NOW + 60)}
# expected growth of scorch_http_errors_total by reason
want_errors = {}


class RssWatch:
    """Samples the server's VmRSS every few ms in a thread; peak in MiB."""

    def __init__(self, srv):
        self.srv, self.peak, self.stop = srv, 0.0, False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            self.peak = max(self.peak, self.srv.rss_mb())
            time.sleep(0.003)

    def done(self):
        self.stop = True
        self.t.join()
        return self.peak


def refused(srv, status, reason, method, path, params=None, body=None, headers=None, words=(),
            what=""):
    m0 = srv.metrics() if os.environ.get("DEBUG") else None
    msg = expect_error(srv, status, method, path, params, body=body, headers=headers,
                       words=words, what=what)
    want_errors[reason] = want_errors.get(reason, 0) + 1
    if m0:
        m1 = srv.metrics()
        moved = [k for k in m1 if "errors_total{" in k and m1[k] != m0.get(k)]
        if moved != ['scorch_http_errors_total{reason="%s"}' % reason]:
            print("DEBUG: %s (%s): %s" % (what or path, reason, moved))
    return msg


def alive(srv, what):
    check(srv.alive(), "the server died after %s:\n%s" % (what, srv.tail()))
    st, _, data = srv.request("GET", "/healthz", timeout=10)
    check(st == 200 and data.strip() == b"ok", "healthz after %s: %d" % (what, st))


def json_error(status, body, want_status, words, what):
    check(status in want_status, "%s: status %s, want %s: %r" % (what, status, want_status,
                                                                 body[:200]))
    try:
        msg = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        fail("%s: body is not {\"error\": ...}: %r" % (what, body[:200]))
    for w in words:
        check(w.lower() in msg.lower(), "%s: %r does not mention %r" % (what, msg, w))
    return msg


def gzip_bomb(gib=2):
    """gib GiB of zeros as one gzip member, compressed in 1 MiB steps (~2 MB out)."""
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    zero = bytes(1 << 20)
    out = [c.compress(zero) for _ in range(gib << 10)]
    out.append(c.flush())
    return b"".join(out)


def pprof_field_cut(raw):
    """Offsets inside the last top-level protobuf fields of raw (cuts a decoder must see)."""
    cuts, i = [], 0
    while i < len(raw):
        start = i
        k, n = 0, 0
        while True:  # key varint
            c = raw[i]
            i += 1
            k |= (c & 0x7F) << n
            n += 7
            if c < 0x80:
                break
        t = k & 7
        if t == 2:
            ln, n = 0, 0
            while True:
                c = raw[i]
                i += 1
                ln |= (c & 0x7F) << n
                n += 7
                if c < 0x80:
                    break
            if ln > 8:
                cuts.append(i + ln // 2)  # the middle of a length-delimited field
            i += ln
        elif t == 0:
            while raw[i] & 0x80:
                i += 1
            i += 1
        elif t == 1:
            i += 8
        elif t == 5:
            i += 4
        del start
    return cuts


def main():
    with_server(SCORCH, TMP, run_all)


def run_all(srv):
    t0 = time.time()
    m0 = srv.metrics()
    rnd = random.Random(7)
    gaps = set()
    accepted = [2]  # pushes stored: the good multipart one and the last one, and below
    good = b"main;work 3\nmain;idle 1\n"
    pprof = None
    if TD and os.path.isdir(os.path.join(TD, "pprof")):
        with open(os.path.join(TD, "pprof", "cpu-sort.pb.gz"), "rb") as f:
            pprof = f.read()
    else:
        # a pprof scorch makes from folded text, so the test runs without the shared data
        src = os.path.join(TMP, "in.folded")
        with open(src, "wb") as f:
            f.write(b"".join(b"main;f%d;g%d %d\n" % (i, i % 5, i + 1) for i in range(300)))
        out = os.path.join(TMP, "in.pb.gz")
        subprocess.run([SCORCH, "convert", "--to", "pprof", src, "-o", out], check=True)
        with open(out, "rb") as f:
            pprof = f.read()
    raw = gzip.decompress(pprof)

    def push_params(fmt, name="hostile{job=x}"):
        return {"name": name, "format": fmt, "from": str(NOW - 100), "until": str(NOW - 90)}

    # ---- truncated pprof: gzip cut anywhere, protobuf cut inside a field ----
    cuts = sorted({1, 2, 10, 17, 18, 100, len(pprof) // 3, len(pprof) // 2, len(pprof) - 8,
                   len(pprof) - 1})
    for c in cuts:
        refused(srv, 400, "format", "POST", "/ingest", push_params("pprof"), body=pprof[:c],
                words=["gzip"] if c >= 18 else ["truncated"],
                what="gzip pprof cut at %d of %d" % (c, len(pprof)))
    pcuts = pprof_field_cut(raw)
    pick = sorted(set(pcuts[:3] + pcuts[len(pcuts) // 2:len(pcuts) // 2 + 2] + pcuts[-3:]))
    for c in pick:
        refused(srv, 400, "format", "POST", "/ingest", push_params("pprof"), body=raw[:c],
                what="protobuf cut at %d of %d" % (c, len(raw)))
    alive(srv, "truncated pprof")
    print("truncated: %d gzip cuts and %d protobuf cuts refused" % (len(cuts), len(pick)))

    # ---- random bytes in every format ----
    for fmt in ("pprof", "folded", "perf_script", "lines"):
        for n in (1, 100, 65536):
            body = bytes(rnd.getrandbits(8) for _ in range(n))
            if fmt == "lines" or (n == 1 and fmt != "pprof"):
                continue  # any bytes are lines; one byte may be a folded count
            what = "%d random bytes as %s" % (n, fmt)
            if fmt != "pprof":
                # Text formats skip lines they cannot read, as FlameGraph's scripts do, and
                # perf script's loose line shapes find "samples" in random text; a body
                # without one readable stack is refused (400), never stored empty.
                st, _, data = srv.request("POST", "/ingest", push_params(fmt), body=body)
                if st == 200:
                    accepted[0] += 1
                    check(json.loads(data)["samples"] > 0,
                          "%s: stored with 0 samples instead of refused" % what)
                    continue
                json_error(st, data, (400,), [], what)
                want_errors["format"] = want_errors.get("format", 0) + 1
                continue
            msg = refused(srv, 400, "format", "POST", "/ingest", push_params(fmt), body=body,
                          what=what)
    big = os.urandom(32 << 20)
    w = RssWatch(srv)
    refused(srv, 400, "format", "POST", "/ingest", push_params("pprof"), body=big,
            what="32 MiB of random bytes as pprof")
    peak_random = w.done()
    alive(srv, "random bytes")
    print("random bytes: refused in each format (last: %s); 32 MiB of them: peak RSS %.0f MiB"
          % (msg, peak_random))

    # ---- a gzip bomb: 2 GiB of zeros in ~2 MB ----
    tb = time.time()
    bomb = gzip_bomb(2)
    gen = time.time() - tb
    check(len(bomb) < MAX_BODY, "the bomb is larger than the body limit")
    w = RssWatch(srv)
    for fmt in ("pprof", "folded"):
        tq = time.time()
        msg = refused(srv, 413, "limit", "POST", "/ingest", push_params(fmt), body=bomb,
                      words=[str(MAX_DECOMPRESSED)], what="gzip bomb as " + fmt)
        check(time.time() - tq < 20, "the bomb took %.1f s to refuse" % (time.time() - tq))
    # a multipart push of the bomb, as Pyroscope's clients send profiles
    mp, ctype = multipart([("profile", bomb)])
    refused(srv, 413, "limit", "POST", "/ingest", push_params("pprof"), body=mp,
            headers={"Content-Type": ctype}, words=["inflates"], what="multipart gzip bomb")
    peak_bomb = w.done()
    # inflating stops at the decompressed limit: a few times 64 MiB at most
    check(peak_bomb < RSS_BOUND_MB / 3, "RSS reached %.0f MiB refusing a gzip bomb" % peak_bomb)
    alive(srv, "the gzip bomb")
    print("gzip bomb: %d bytes (made in %.1f s), refused: %s; peak RSS %.0f MiB"
          % (len(bomb), gen, msg, peak_bomb))
    # three at once: memory stays bounded across requests too
    w = RssWatch(srv)
    res = [None] * 3

    def one(i):
        try:
            res[i] = srv.request("POST", "/ingest", push_params("pprof"), body=bomb)[::2]
        except OSError as e:
            res[i] = (None, str(e).encode())

    ths = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(3)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(60)
    peak3 = w.done()
    for st, body in res:
        json_error(st, body, (413, 503), [], "concurrent gzip bombs")
        want_errors["limit"] = want_errors.get("limit", 0) + (st == 413)
        want_errors["busy"] = want_errors.get("busy", 0) + (st == 503)
    check(peak3 < RSS_BOUND_MB, "RSS reached %.0f MiB with 3 gzip bombs at once" % peak3)
    alive(srv, "concurrent gzip bombs")
    print("3 concurrent gzip bombs: %s; peak RSS %.0f MiB" % ([r[0] for r in res], peak3))

    # valid pprofs that inflate to 60 MB of deep stacks (4096 frames a sample): decoding
    # takes ~5 times that, so three at once would need ~900 MiB; the server decodes them
    # one after another (its ingest budget) and stores all three
    deep = deep_pprof(15000, 4096)
    w = RssWatch(srv)
    res = [None] * 3

    def one_deep(i):
        try:
            res[i] = srv.request("POST", "/ingest", dict(push_params("pprof", "deep%d" % i)),
                                 body=deep, timeout=120)[::2]
        except OSError as e:
            res[i] = (None, str(e).encode())

    ths = [threading.Thread(target=one_deep, args=(i,), daemon=True) for i in range(3)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    peak_deep = w.done()
    for st, body in res:
        check(st == 200, "a deep-stack pprof: %s %r" % (st, body[:200]))
    accepted[0] += 3
    check(peak_deep < RSS_BOUND_MB, "RSS reached %.0f MiB decoding 3 deep-stack pprofs at once"
          % peak_deep)
    alive(srv, "deep-stack pprofs")
    print("3 concurrent deep-stack pprofs (%d bytes, 60 MB inflated): stored; peak RSS %.0f MiB"
          % (len(deep), peak_deep))

    # ---- bodies over the body limit ----
    w = RssWatch(srv)
    head = ("POST /ingest?name=big&format=pprof HTTP/1.1\r\nHost: x\r\n"
            "Content-Length: %d\r\n\r\n" % (MAX_BODY + 1)).encode()
    st, body = raw_exchange(srv.port, head, [bytes(1 << 16)])
    json_error(st, body, (413,), [str(MAX_BODY)], "declared Content-Length over the limit")
    want_errors["limit"] = want_errors.get("limit", 0) + 1
    head = ("POST /ingest?name=big&format=pprof HTTP/1.1\r\nHost: x\r\n"
            "Content-Length: 99999999999999999999999\r\n\r\n").encode()
    st, body = raw_exchange(srv.port, head)
    # libmicrohttpd refuses a length it cannot represent itself (not counted by scorch)
    check(st in (400, 413), "an absurd Content-Length: status %s" % st)

    def chunked(total):
        for c in chunked_parts(total):
            yield c
        yield b"0\r\n\r\n"

    head = (b"POST /ingest?name=big&format=pprof HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    tq = time.time()
    st, body = raw_exchange(srv.port, head, chunked(MAX_BODY + (1 << 20)))
    json_error(st, body, (413,), [str(MAX_BODY)], "chunked body over the limit")
    want_errors["limit"] = want_errors.get("limit", 0) + 1
    chunk_secs = time.time() - tq
    mp, ctype = multipart([("profile", bytes(MAX_BODY + 1))])
    head = ("POST /ingest?name=big&format=pprof HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\n"
            "Transfer-Encoding: chunked\r\n\r\n" % ctype).encode()
    st, body = raw_exchange(srv.port, head, [b"%x\r\n" % len(mp), mp, b"\r\n0\r\n\r\n"])
    json_error(st, body, (413,), [str(MAX_BODY)], "multipart part over the limit")
    want_errors["limit"] = want_errors.get("limit", 0) + 1
    peak_body = w.done()
    check(peak_body < RSS_BOUND_MB, "RSS reached %.0f MiB refusing big bodies" % peak_body)
    alive(srv, "big bodies")
    print("bodies over %d bytes: 413 declared and chunked (%.1f s); peak RSS %.0f MiB"
          % (MAX_BODY, chunk_secs, peak_body))

    # bodies in flight together past the server's total (256 MiB): the last ones get 503
    w = RssWatch(srv)
    n_up, each = 5, 60 << 20
    barrier = threading.Barrier(n_up, timeout=60)
    res = [None] * n_up

    def upload(i):
        def chunks():
            first = 50 << 20
            for c in chunked_parts(first):
                yield c
            barrier.wait()
            for c in chunked_parts(each - first):
                yield c
            yield b"0\r\n\r\n"
        head = (b"POST /ingest?name=up&format=pprof HTTP/1.1\r\nHost: x\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        try:
            res[i] = raw_exchange(srv.port, head, chunks())
        except Exception as e:  # reported below
            res[i] = (None, repr(e).encode())

    ths = [threading.Thread(target=upload, args=(i,), daemon=True) for i in range(n_up)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    peak_up = w.done()
    busy = 0
    for st, body in res:
        msg = json_error(st, body, (400, 503), [], "%d concurrent 60 MiB bodies" % n_up)
        if st == 503:
            check("busy" in msg, "503 without 'busy': %r" % msg)
        busy += st == 503
        reason = "busy" if st == 503 else "format"
        want_errors[reason] = want_errors.get(reason, 0) + 1
    # one passes the total; once it lets go of its bytes the others fit
    check(1 <= busy <= 2, "%d bodies of 60 MiB at once: %d refused as busy, want 1 (or 2)"
          % (n_up, busy))
    check(peak_up < RSS_BOUND_MB, "RSS reached %.0f MiB with %d bodies of 60 MiB in flight"
          % (peak_up, n_up))
    alive(srv, "concurrent big bodies")
    print("%d concurrent 60 MiB bodies: %d answered 503 busy; peak RSS %.0f MiB"
          % (n_up, busy, peak_up))

    # ---- names: label counts and lengths ----
    many = "app{" + ",".join("l%d=v" % i for i in range(60)) + "}"
    refused(srv, 413, "limit", "POST", "/ingest", dict(push_params("folded"), name=many),
            body=good, words=["labels", "48"], what="60 labels")
    thousands = "app{" + ",".join("label_%d=value_%d" % (i, i) for i in range(3000)) + "}"
    refused(srv, 413, "limit", "POST", "/ingest", dict(push_params("folded"), name=thousands),
            body=good, words=["labels"], what="3000 labels (%d bytes)" % len(thousands))
    refused(srv, 413, "limit", "POST", "/ingest",
            dict(push_params("folded"), name="app{a=%s}" % ("v" * 5000)), body=good,
            words=["longer than", "1024"], what="a 5000-byte label value")
    refused(srv, 413, "limit", "POST", "/ingest", dict(push_params("folded"), name="a" * 5000),
            body=good, words=["longer than", "1024"], what="a 5000-byte application name")
    refused(srv, (400, 413), None, "POST", "/ingest",
            dict(push_params("folded"), name="app{%s=v}" % ("n" * 5000)), body=good,
            words=["label"], what="a 5000-byte label name")
    # a query string far beyond any limit: refused before it reaches a handler
    head = ("GET /api/v1/series?query=%s HTTP/1.1\r\nHost: x\r\n\r\n"
            % ("x" * (4 << 20))).encode()
    st, body = raw_exchange(srv.port, head)
    check(st is None or 400 <= st < 500, "a 4 MiB URL: status %s" % st)
    alive(srv, "label limits")
    print("names: label count and lengths refused; a 4 MiB URL gets %s" % st)

    # ---- selectors, times, ranges, limits on queries ----
    r = dict(type="cpu:samples", **RANGE)
    bad_selectors = ['{a=', '{a="x"', '{="x"}', '{a~"x"}', '{a="x",,b="y"}', 'a="x"',
                     '{a="x"} junk', '{a=~"("}', '{a="\\q"}', '{a!!"x"}', '{' * 100]
    for sel in bad_selectors:
        for path in ("/api/v1/render", "/api/v1/series", "/api/v1/timeline"):
            msg = refused(srv, 400, "bad_request", "GET", path, dict(r, query=sel),
                          what="selector %r on %s" % (sel, path))
            check("offset" in msg or "at " in msg, "selector %r: %r does not say where"
                  % (sel, msg))
    long_sel = "{" + ",".join('l%d="v"' % i for i in range(2000)) + "}"
    refused(srv, 400, "limit", "GET", "/api/v1/render", dict(r, query=long_sel),
            words=["longer than"], what="a 2000-matcher selector")
    for name in ("from", "until"):
        for bad in ("yesterday", "now-", "now-5q", "12abc", "-", "99999999999999999999999"):
            refused(srv, 400, "bad_request", "GET", "/api/v1/render",
                    dict(r, **{name: bad}), words=[name], what="%s=%s" % (name, bad))
        refused(srv, 400, "bad_request", "GET", "/api/v1/series",
                dict(query="{}", **{name: "garbage"}), words=[name], what="series " + name)
        refused(srv, 400, "bad_request", "POST", "/ingest",
                dict(push_params("folded"), **{name: "garbage"}), body=good, words=[name],
                what="ingest %s=garbage" % name)
    for path in ("/api/v1/render", "/api/v1/series", "/api/v1/timeline", "/api/v1/heatmap"):
        refused(srv, 400, "bad_request", "GET", path,
                dict(r, **{"from": str(NOW), "until": str(NOW - 60)}),
                words=["until", "from"], what="from > until on " + path)
        # any range is allowed: a query's cost is bounded by its read budget instead
        st, _, body = srv.get(path, dict(r, **{"from": "now-30d", "until": "now"}))
        check(st == 200, "a 30-day range on %s: %d %r" % (path, st, body[:200]))
    st, _, body = srv.get("/api/v1/diff", dict(r, base_from="now-30d", base_until="now-29d",
                                               **{"from": "now-31d"}))
    check(st == 200, "a 30-day range in a diff: %d %r" % (st, body[:200]))
    refused(srv, 400, "bad_request", "GET", "/api/v1/render", dict(r, maxNodes="1000000"),
            words=["maxNodes", "100000"], what="maxNodes over the bound")
    for mn in ("abc", "-1", "0", "99999999999999999999"):
        refused(srv, 400, "bad_request", "GET", "/api/v1/render", dict(r, maxNodes=mn),
                words=["maxNodes"], what="maxNodes=" + mn)
    refused(srv, 400, "limit", "GET", "/api/v1/timeline",
            dict(r, step="1s", **{"from": "now-6d", "until": "now"}),
            words=["steps", "10000"], what="518400 timeline steps")
    refused(srv, 400, "bad_request", "GET", "/api/v1/timeline", dict(r, step="1ms"),
            words=["step", "1s"], what="a step under a second")
    refused(srv, 400, "bad_request", "GET", "/api/v1/timeline", dict(r, step="soon"),
            words=["step"], what="step=soon")
    refused(srv, 400, "bad_request", "GET", "/api/v1/heatmap", dict(r, rows="100000"),
            words=["rows"], what="rows=100000")
    refused(srv, 400, "bad_request", "GET", "/api/v1/render", dict(RANGE),
            words=["type"], what="render without type")
    refused(srv, 400, "bad_request", "GET", "/api/v1/render", dict(r, format="exe"),
            words=["format"], what="an unknown render format")
    refused(srv, 400, "bad_request", "GET", "/api/v1/render", dict(r, focus="("),
            words=["focus"], what="a bad focus regex")
    refused(srv, 400, "bad_request", "GET", "/api/v1/label_values", {},
            words=["name"], what="label_values without name")
    refused(srv, 415, "unsupported", "POST", "/ingest", push_params("nope"), body=good,
            words=["nope"], what="format=nope")
    refused(srv, 400, "bad_request", "POST", "/ingest", push_params("folded", name=""),
            body=good, words=["name"], what="an empty name")
    refused(srv, 400, "bad_request", "POST", "/ingest",
            dict(push_params("folded"), sampleRate="-5"), body=good, words=["sampleRate"],
            what="sampleRate=-5")
    refused(srv, 400, "bad_request", "GET", "/api/v1/labels",
            headers={"X-Scope-OrgID": "t" * 500}, words=["X-Scope-OrgID"],
            what="a 500-byte tenant")
    # series x steps: the values a timeline holds are bounded (4M); 450 series x 10000
    # steps is refused, the default step widens to fit
    t_many = NOW - 3000
    for i in range(450):
        srv.push(b"m;x 1\n", name="many{i=\"%d\"}" % i, format="folded",
                 **{"from": str(t_many + i), "until": str(t_many + i + 1)})
    accepted[0] += 450
    week = {"type": "cpu:samples", "query": '{service_name="many"}', "from": "now-6d",
            "until": "now"}
    refused(srv, 400, "limit", "GET", "/api/v1/timeline", dict(week, step="52s"),
            words=["450 series", "points"], what="450 series x 9969 steps")
    # each series: one sample over one second, a rate of 1/s in the step that holds it
    tl = srv.json("/api/v1/timeline", week)
    check(len(tl["series"]) == 450 and
          sum(v for x in tl["series"] for v in x["values"] if v is not None) == 450,
          "the default step over 450 series: %d lines" % len(tl["series"]))
    check(450 * len(tl["timestamps"]) <= 1 << 22, "the default step is not widened")
    # grouped: the series take turns (a second each, one after another), so the line reads
    # one series' rate, 1/s, in each step that holds any, not their sum
    tl = srv.json("/api/v1/timeline", dict(week, group_by="service_name"))
    vals = [v for v in tl["series"][0]["values"] if v is not None] if tl["series"] else []
    check([x["labels"] for x in tl["series"]] == [{"service_name": "many"}] and
          1 <= len(vals) <= 2 and all(abs(v - 1) < 1e-9 for v in vals),
          "group_by over 450 series taking turns: %s" % vals)
    alive(srv, "bad queries")
    print("queries: %d broken selectors say where; bad times, ranges and limits refused"
          % len(bad_selectors))

    # ---- methods, paths, multipart ----
    for method, path in (("GET", "/ingest"), ("PUT", "/ingest"), ("POST", "/api/v1/render"),
                         ("DELETE", "/api/v1/series"), ("POST", "/metrics"),
                         ("PUT", "/healthz")):
        st, hdr, data = srv.request(method, path, body=b"" if method != "GET" else None)
        json_error(st, data, (405,), ["method", method], "%s %s" % (method, path))
        check("allow" in hdr, "%s %s: a 405 without an Allow header" % (method, path))
        want_errors["not_found"] = want_errors.get("not_found", 0) + 1
    for method, path in (("GET", "/api/v1/nope"), ("GET", "/api/v2/render"),
                         ("POST", "/nope"), ("GET", "/nope.html"), ("GET", "/../etc/passwd"),
                         ("GET", "/api/v1/render/extra")):
        refused(srv, 404, "not_found", method, path, body=b"" if method != "GET" else None,
                what="%s %s" % (method, path))
    mp, ctype = multipart([("other", pprof)])
    refused(srv, 400, "bad_request", "POST", "/ingest", push_params("pprof"), body=mp,
            headers={"Content-Type": ctype}, words=["profile"], what="multipart without profile")
    mp, ctype = multipart([("profile", pprof)])
    # the profile part ends early: the pprof decoder finds it truncated
    refused(srv, 400, "format", "POST", "/ingest", push_params("pprof"),
            body=mp[:len(mp) // 2], headers={"Content-Type": ctype},
            what="multipart cut in the middle")
    refused(srv, 400, "bad_request", "POST", "/ingest", push_params("pprof"), body=b"junk",
            headers={"Content-Type": "multipart/form-data"}, what="multipart without boundary")
    # and a correct multipart push works
    st, _, data = srv.request("POST", "/ingest", push_params("pprof", "multipart{job=x}"),
                              body=mp, headers={"Content-Type": ctype})
    check(st == 200, "a good multipart push: %d %s" % (st, data[:200]))
    alive(srv, "methods and multipart")
    print("methods: 405 with Allow; unknown paths 404; multipart checked")

    # ---- still serving: a good push and its query ----
    srv.push(good, **push_params("folded", "after{job=x}"))
    tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query='{service_name="after"}',
                                                       format="tsv", **r)).decode())
    check(tsv == {"main": (0, 4), "work": (3, 3), "idle": (1, 1)}, "render after: %s" % tsv)

    # ---- /metrics: errors by reason ----
    m1 = srv.metrics()
    reasons = set(want_errors) | {k.split('"')[1] for k in m1 if "http_errors_total{" in k}
    got = {}
    for reason in reasons:
        if reason is None:
            continue
        k = 'scorch_http_errors_total{reason="%s"}' % reason
        got[reason] = int(m1.get(k, 0) - m0.get(k, 0))
    loose = want_errors.pop(None, 0)  # either bad_request or limit
    for reason, n in want_errors.items():
        g = got.get(reason, 0)
        if reason in ("bad_request", "limit"):
            check(n <= g <= n + loose, "errors{reason=%s} moved by %d, want %d..%d"
                  % (reason, g, n, n + loose))
        else:
            check(g == n, "errors{reason=%s} moved by %d, want %d" % (reason, g, n))
    for g in ("scorch_http_body_bytes", "scorch_ingest_admitted_bytes"):
        check(m1[g] == 0, "%s is %d with nothing in flight" % (g, m1[g]))
    moved = m1["scorch_ingest_profiles_total"] - m0["scorch_ingest_profiles_total"]
    check(moved == accepted[0], "ingest counter moved by %d, want %d" % (moved, accepted[0]))
    print("metrics: errors by reason %s" % sorted((k, v) for k, v in got.items() if v))
    rc, secs = srv.stop()
    check(rc == 0, "exit status %s after SIGTERM" % rc)

    # ---- a query's work budget (server.max_read_blocks) instead of a range cap ----
    cfg = os.path.join(TMP, "budget.yaml")
    with open(cfg, "w") as f:
        f.write("server:\n  max_read_blocks: 3\n  max_read_rows: 2\n")
    small = Server(SCORCH, os.path.join(TMP, "budget-data"), os.path.join(TMP, "budget.log"),
                   cfg).start()
    for i in range(5):
        small.push(b"main;f 1\n", name="budget", format="folded",
                   **{"from": str(NOW - 300 + i), "until": str(NOW - 299 + i)})
    b = {"type": "cpu:samples", "query": '{service_name="budget"}', "from": "now-1h"}
    msg = refused(small, 400, "limit", "GET", "/api/v1/render", dict(b, format="tsv"),
                  words=["max_read_blocks", "3"], what="a query over its read budget")
    tsv = small.ok("/api/v1/render", dict(b, format="tsv", **{"from": str(NOW - 298),
                                                            "until": str(NOW - 296)}))
    check(tsv.decode().splitlines()[1:] == ["2\t2\tmain", "2\t2\tf"][1:] or b"\tf" in tsv,
          "two profiles fit the budget: %r" % tsv)
    print("budget: %s" % msg)
    # and what one answer may hold: three distinct stacks in two blocks is over 2 rows
    for i, stack in enumerate((b"main;x 1\n", b"main;y 1\n", b"main;z 1\n")):
        small.push(stack, name="rows", format="folded",
                   **{"from": str(NOW - 200 + i * 0), "until": str(NOW - 199)})
    refused(small, 400, "limit", "GET", "/api/v1/render",
            {"type": "cpu:samples", "query": '{service_name="rows"}', "from": str(NOW - 201),
             "until": str(NOW - 198), "format": "tsv"},
            words=["max_read_rows", "2"], what="an answer over its rows budget")
    small.stop()

    # (an empty token refused at start: hostile.py)
    for g in sorted(gaps):
        print("NOTE: known gap: %s" % g)
    print("ok in %.1f s" % (time.time() - t0))


def deep_pprof(nsamples, depth):
    """A gzipped pprof of one function whose samples are each depth frames deep."""
    field, num, varint = pb_field, pb_num, pb_varint
    head = (field(1, num(1, 1) + num(2, 2)) +                     # sample_type samples/count
            field(4, num(1, 1) + field(4, num(1, 1))) +           # location 1: function 1
            field(5, num(1, 1) + num(2, 3)) +                     # function 1: name "f"
            b"".join(field(6, x) for x in (b"", b"samples", b"count", b"f")))
    sample = field(2, field(1, b"\x01" * depth) + field(2, varint(1)))
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    out = [c.compress(head)] + [c.compress(sample) for _ in range(nsamples)]
    out.append(c.flush())
    return b"".join(out)


def chunked_parts(total, step=1 << 20):
    """total zero bytes as HTTP/1.1 chunks (without the last, empty chunk)."""
    blk = bytes(step)
    sent = 0
    while sent < total:
        n = min(step, total - sent)
        yield b"%x\r\n" % n + blk[:n] + b"\r\n"
        sent += n


def multipart(parts):
    boundary = "scorchboundary%d" % random.Random(1).getrandbits(32)
    out = []
    for name, data in parts:
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                    "Content-Type: application/octet-stream\r\n\r\n" % (boundary, name, name))
                   .encode())
        out.append(data)
        out.append(b"\r\n")
    out.append(("--%s--\r\n" % boundary).encode())
    return b"".join(out), "multipart/form-data; boundary=" + boundary


main_wrapper(main)
