"""tenant_tokens.py - one token per tenant (auth.tenants) over every way in and every route.

A server with the server's token and two tenants' tokens (one from a token_file, one inline)
and the OTLP/gRPC listener. Each way a profile comes in (/ingest raw, /ingest multipart as
Pyroscope's clients send it, OTLP/HTTP protobuf, Connect push JSON, OTLP/gRPC metadata) is
tried with: a tenant's token alone (stored in its tenant), with its own X-Scope-OrgID (the
same), with another tenant's (403 / PERMISSION_DENIED, nothing stored), as Basic auth's
password (refused: 401 / UNAUTHENTICATED), the server's token with a tenant header (that tenant), and a wrong token (401 /
UNAUTHENTICATED). Where each push landed is then read with the server's token tenant by
tenant: a service is in exactly the tenant expected, refused ones nowhere. Every
token-taking route of the route table in src/server/server.c is then read with a tenant's
token: 200 and the same bytes the server's token gets for that tenant; 403 naming both
tenants when the header names the other; the scrape targets (the server's) 403 to a tenant;
the UI's cookie maps like the header.
Usage: tenant_tokens.py TMPDIR STUBS (env: SCORCH, SCORCH_SRC)."""
import base64
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (Server, check, expect_error, fail, grpc_port, main_wrapper,  # noqa
                           otlp_client, otlp_request as otlp_build, run)

SCORCH = os.environ["SCORCH"]
SRC = os.environ["SCORCH_SRC"]
TMP, STUBS = sys.argv[1], sys.argv[2]
NOW = int(time.time()) // 60 * 60
T0 = NOW - 1200
RANGE = {"from": str(T0 - 60), "until": str(NOW + 60)}
TOK = {"server": "srv-%d-token" % os.getpid(), "acme": "acme-%d-token" % os.getpid(),
       "beta": "beta-%d-token" % os.getpid()}
TENANTS = ("", "acme", "beta")  # "" is the default tenant


def bearer(who):
    return "Bearer " + TOK[who]


def basic(who):
    return "Basic " + base64.b64encode(("anyuser:" + TOK[who]).encode()).decode()


# (case, Authorization, X-Scope-OrgID or None, the tenant it lands in, or the refusal)
CASES = [
    ("own", bearer("acme"), None, "acme"),
    ("ownhdr", bearer("acme"), "acme", "acme"),
    ("other", bearer("acme"), "beta", 403),
    ("basic", basic("beta"), None, 401),  # Basic auth is refused, even with a token
    ("basicother", basic("beta"), "acme", 401),
    ("bearerbeta", bearer("beta"), None, "beta"),
    ("server", bearer("server"), "beta", "beta"),
    ("serverdef", bearer("server"), None, ""),
    ("wrong", "Bearer " + TOK["acme"] + "x", None, 401),
    ("none", None, None, 401),
]


def pprof_of(folded, name):
    src = os.path.join(TMP, name + ".folded")
    out = os.path.join(TMP, name + ".pb.gz")
    with open(src, "w") as f:
        f.write(folded)
    run([SCORCH, "convert", "--to", "pprof", src, "-o", out])
    with open(out, "rb") as f:
        return f.read()


def headers(auth, org, extra=None):
    h = dict(extra or {})
    if auth:
        h["Authorization"] = auth
    if org is not None:
        h["X-Scope-OrgID"] = org
    return h


def want_status(want):
    return 200 if isinstance(want, str) else want


def push_ingest(srv, svc, auth, org):
    st, _, data = srv.request("POST", "/ingest", dict(name=svc, format="folded", **{
        "from": str(T0)}), body=("main;%s 5\n" % svc).encode(), headers=headers(auth, org),
        auth=False)
    return st, data


def push_multipart(srv, svc, auth, org):
    prof = pprof_of("main;%s 5\n" % svc, svc)
    b = "----scorch%d" % os.getpid()
    body = ("--%s\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile."
            "pprof\"\r\nContent-Type: application/octet-stream\r\n\r\n" % b).encode() + prof + \
        ("\r\n--%s--\r\n" % b).encode()
    st, _, data = srv.request("POST", "/ingest", dict(name=svc + ".cpu", **{"from": str(T0)}),
                              body=body, headers=headers(
                                  auth, org, {"Content-Type": "multipart/form-data; boundary="
                                              + b}), auth=False)
    return st, data


def push_connect(srv, svc, auth, org):
    prof = pprof_of("main;%s 5\n" % svc, svc)
    req = {"series": [{"labels": [{"name": "__name__", "value": "process_cpu"},
                                  {"name": "service_name", "value": svc}],
                       "samples": [{"rawProfile": base64.b64encode(prof).decode()}]}]}
    st, _, data = srv.request("POST", "/push.v1.PusherService/Push", body=json.dumps(req).encode(),
                              headers=headers(auth, org, {"Content-Type": "application/json",
                                                          "Connect-Protocol-Version": "1"}),
                              auth=False)
    return st, data


def otlp_request(svc):
    return otlp_build(STUBS, TMP, svc, T0)


def push_otlp_http(srv, svc, auth, org):
    with open(otlp_request(svc), "rb") as f:
        body = f.read()
    st, _, data = srv.request("POST", "/v1development/profiles", body=body,
                              headers=headers(auth, org,
                                              {"Content-Type": "application/x-protobuf"}),
                              auth=False)
    return st, data


GRPC_CODES = {200: "ok 0 ", 401: "error UNAUTHENTICATED", 403: "error PERMISSION_DENIED"}


def push_grpc(srv, svc, auth, org):
    args = ["grpc", "127.0.0.1:%d" % srv.grpc_port, otlp_request(svc)]
    if auth:
        args += ["--authorization", auth]
    if org is not None:
        args += ["--tenant", org]
    out = otlp_client(STUBS, *args).strip()
    for st, prefix in GRPC_CODES.items():
        if out.startswith(prefix.strip()):
            return st, out.encode()
    return None, out.encode()


WAYS = [("ingest", push_ingest), ("multipart", push_multipart), ("connect", push_connect),
        ("otlphttp", push_otlp_http), ("grpc", push_grpc)]


def services(srv, tenant):
    """service_name values of a tenant, read with the server's token."""
    return set(srv.json("/api/v1/label_values", {"name": "service_name"},
                        headers=headers(bearer("server"), tenant)))


def main():
    tf = {}
    for who in ("server", "acme"):
        tf[who] = os.path.join(TMP, who + ".token")
        with open(tf[who], "w") as f:
            f.write(TOK[who] + "\n")
    cfg = os.path.join(TMP, "scorch.yaml")
    with open(cfg, "w") as f:
        f.write("auth:\n  token_file: %s\n  tenants:\n    acme: {token_file: %s}\n"
                "    beta: {token: %s}\notlp: {grpc_listen: '127.0.0.1:0'}\n"
                % (tf["server"], tf["acme"], TOK["beta"]))
    srv = Server(SCORCH, os.path.join(TMP, "data"), os.path.join(TMP, "server.log"),
                 config=cfg).start()
    try:
        srv.grpc_port = grpc_port(srv)
        pushes(srv)
        reads(srv)
    finally:
        srv.kill()


def pushes(srv):
    landed = {}  # service -> tenant
    for way, fn in WAYS:
        for case, auth, org, want in CASES:
            svc = "%s-%s" % (way, case)
            st, data = fn(srv, svc, auth, org)
            check(st == want_status(want), "%s %s: status %s, want %s: %s"
                  % (way, case, st, want_status(want), data[:200]))
            if st == 403 and way != "grpc":
                msg = json.loads(data)
                msg = msg.get("error") or msg.get("message")
                check("'beta'" in msg and "'acme'" in msg and "X-Scope-OrgID" in msg,
                      "%s %s: the 403 does not name both tenants: %s" % (way, case, msg))
            if isinstance(want, str):
                landed[svc] = want
    seen = {t: services(srv, t) for t in TENANTS}
    for way, _ in WAYS:
        for case, _, _, want in CASES:
            svc = "%s-%s" % (way, case)
            where = [t for t in TENANTS if svc in seen[t]]
            expect = [want] if isinstance(want, str) else []
            check(where == expect, "%s %s is stored in tenants %s, want %s"
                  % (way, case, where, expect))
    print("pushes: %d ways x %d cases; %d stored, each in its token's tenant only; refusals "
          "stored nothing" % (len(WAYS), len(CASES), len(landed)))


def routes():
    """(method, path) of the route table's token-taking routes (the open ones excluded)."""
    text = open(os.path.join(SRC, "src/server/server.c")).read()
    table = text[text.index("routes[] = {"):]
    table = table[:table.index("\n};")]
    out = []
    for m in re.finditer(r'\{"([A-Z]+)", "([^"]+)", \w+, (\d)', table):
        if m.group(3) == "0":
            out.append((m.group(1), m.group(2)))
    return out


def reads(srv):
    r = dict(query="{}", type="cpu:samples", **RANGE)
    one = {}  # a tenant's one stored profile, for /api/v1/profile
    for tenant, svc in (("acme", "ingest-own"), ("beta", "ingest-bearerbeta")):
        prof = srv.json("/api/v1/profiles", dict(r, query='{service_name="%s"}' % svc),
                        headers=headers(bearer(tenant), None))["profiles"]
        check(len(prof) == 1, "%s's profiles of %s: %s" % (tenant, svc, prof))
        one[tenant] = dict(type="cpu:samples", series=prof[0]["series"], time=prof[0]["time_ns"])
    params = {
        "/api/v1/profile_types": {}, "/api/v1/labels": {},
        "/api/v1/label_values": {"name": "service_name"}, "/api/v1/series": dict(RANGE, query="{}"),
        "/api/v1/render": dict(r, format="tsv"), "/api/v1/timeline": dict(r, step="60s"),
        "/api/v1/diff": dict(r, format="tsv"), "/api/v1/heatmap": r,
        "/api/v1/callgraph": dict(r, format="dot"),
        "/api/v1/source": dict(r, function="main.main"), "/api/v1/profiles": r,
        "/api/v1/targets": {}, "/api/v1/changes": dict(r, step="60s"), "/api/v1/markers": r,
    }
    tested = 0
    for method, path in routes():
        if method != "GET":
            continue  # the pushes above covered every POST route
        check(path in params or path == "/api/v1/profile",
              "route %s %s is not covered by this test" % (method, path))
        p = params.get(path)
        if path == "/api/v1/targets":
            expect_error(srv, 403, "GET", path, headers=headers(bearer("acme"), None),
                         words=["acme", "scrape targets"])
            st, _, _ = srv.request("GET", path, headers=headers(bearer("server"), None))
            check(st == 200, "targets with the server's token: %d" % st)
            tested += 1
            continue
        for tenant in ("acme", "beta"):
            tok = bearer(tenant)
            other = "beta" if tenant == "acme" else "acme"
            if path == "/api/v1/profile":
                p = one[tenant]
            as_server = srv.ok(path, p, headers=headers(bearer("server"), tenant))
            for org in (None, "", tenant):
                got = srv.ok(path, p, headers=headers(tok, org))
                check(got == as_server, "%s with %s's token (X-Scope-OrgID %r) answers other "
                      "than the server's token for %s" % (path, tenant, org, tenant))
            got = srv.ok(path, p, headers={"Cookie": "scorch_token=" + TOK[tenant]})
            check(got == as_server, "%s with %s's cookie" % (path, tenant))
            expect_error(srv, 403, "GET", path, p, headers=headers(tok, other),
                         words=["'%s'" % tenant, "'%s'" % other, "X-Scope-OrgID"],
                         what="%s with %s's token for %s" % (path, tenant, other))
            expect_error(srv, 401, "GET", path, p, headers=headers(tok + "x", tenant),
                         words=["token"])
        tested += 1
    # the answers really are the tenants' own: acme's single profile is not beta's
    expect_error(srv, 404, "GET", "/api/v1/profile", one["acme"],
                 headers=headers(bearer("beta"), None))
    acme = set(srv.json("/api/v1/label_values", {"name": "service_name"},
                        headers=headers(bearer("acme"), None)))
    beta = set(srv.json("/api/v1/label_values", {"name": "service_name"},
                        headers=headers(bearer("beta"), None)))
    check(acme and beta and not acme & beta, "acme %s and beta %s overlap" % (acme, beta))
    check("ingest-own" in acme and "ingest-bearerbeta" in beta, "tenants' services: %s %s"
          % (acme, beta))
    # the UI loads with a tenant's token; /metrics and /healthz need none
    st, _, data = srv.request("GET", "/", headers=headers(bearer("acme"), None), auth=False)
    check(st == 200 and b"<html" in data.lower(), "the UI with a tenant's token: %d" % st)
    for path in ("/metrics", "/healthz"):
        st, _, _ = srv.request("GET", path, auth=False)
        check(st == 200, "%s without a token: %d" % (path, st))
    m = srv.metrics()
    check(m['scorch_http_errors_total{reason="auth"}'] > 0, "auth refusals are not counted")
    print("reads: %d routes answer a tenant's token as the server's token for that tenant, "
          "refuse another tenant's header (403) and a wrong token (401)" % tested)


main_wrapper(main)
