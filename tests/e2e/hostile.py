"""hostile.py - issue 15's per-input cases against a running `scorch server`: each crafted push
is refused with its status and a message naming the limit (or stored and read back right),
nothing refused is stored, every JSON answer is valid UTF-8, the server's memory stays
bounded and it keeps serving. Usage: hostile.py TMPDIR (env: SCORCH)."""
import gzip
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, expect_error, fail, main_wrapper, pb_field as field,
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


def configured():
    """The config's limits: section moves the limits the messages name."""
    cfg = os.path.join(TMP, "limits.yaml")
    with open(cfg, "w") as f:
        f.write("limits:\n  max_string: 1000\n  max_stack_depth: 10\n  max_age: 1h\n")
    srv = Server(SCORCH, os.path.join(TMP, "data2"), os.path.join(TMP, "server2.log"),
                 config=cfg).start()
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
    with open(cfg, "w") as f:
        f.write("limits:\n  max_strings: 5\n")
    r = subprocess.run([SCORCH, "server", "--config", cfg, "--data", os.path.join(TMP, "d3"),
                        "--listen", "127.0.0.1:0"], capture_output=True, timeout=30)
    check(r.returncode != 0 and b"unknown key 'limits.max_strings'" in r.stderr,
          "a bad limits key: exit %d, %r" % (r.returncode, r.stderr))
    print("ok: the config's limits: section moves the limits")


def run_all(srv):
    t0 = time.time()
    now = {"from": str(NOW), "until": str(NOW + 10)}

    def refused(status, words, body, what, **params):
        msg = expect_error(srv, status, "POST", "/ingest", params, body=body, words=words,
                           what=what)
        check(srv.alive(), "%s: the server died" % what)
        check(srv.rss_mb() < RSS_BOUND_MB, "%s: RSS %.0f MiB is over %d MiB" %
              (what, srv.rss_mb(), RSS_BOUND_MB))
        print("ok: %s: %s" % (what, msg))

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
    vals = [v for s in tl["series"] for v in s["values"]]
    check(max(vals) == INT64_MAX and min(vals) >= 0, "timeline values %r" % vals)
    folded = srv.ok("/api/v1/render", dict(q, format="folded"))
    check(folded.strip() == b"a;b %d" % INT64_MAX, "folded: %r" % folded)
    print("ok: INT64_MAX twice is INT64_MAX in the flame graph, top, timeline and folded")

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
