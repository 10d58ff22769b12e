"""server_tls.py - HTTPS for the HTTP listener. Usage: server_tls.py TMPDIR (env: SCORCH);
TMPDIR holds good.pem/.key, other.pem/.key and wrongname.pem/.key (server_tls.sh)."""
import os
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import Server, check, expect_error, main_wrapper, parse_tsv_rows  # noqa

SCORCH = os.environ["SCORCH"]
TMP = sys.argv[1]
NOW = int(time.time())
T0 = NOW - 600
RANGE = {"from": str(T0 - 60), "until": str(NOW + 60)}
TOKEN = "tls-%d-token" % os.getpid()


def pem(name, ext):
    return os.path.join(TMP, name + "." + ext)


def context(ca):
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = True
    return ctx


def handshake_fails(port, ctx, what):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        ctx.wrap_socket(s, server_hostname="127.0.0.1").close()
    except ssl.SSLCertVerificationError:
        return
    finally:
        s.close()
    check(False, "the handshake succeeded with %s" % what)


def serves_https(srv):
    # pushes and reads over HTTPS, the token checked as over HTTP
    st, _, data = srv.request("POST", "/ingest", {"name": "tlsapp", "format": "folded",
                                                  "from": str(T0)}, body=b"main;over_tls 4\n")
    check(st == 200, "a push over HTTPS: %d %r" % (st, data[:200]))
    tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query='{service_name="tlsapp"}',
                                                       type="cpu:samples", format="tsv",
                                                       **RANGE)).decode())
    check(tsv.get("over_tls") == (4, 4), "render over HTTPS: %s" % tsv)
    expect_error(srv, 401, "GET", "/api/v1/labels", headers={"Authorization": "Bearer x"},
                 words=["token"])
    st, _, _ = srv.request("GET", "/healthz", auth=False)
    check(st == 200, "healthz over HTTPS: %d" % st)
    # plain HTTP on the HTTPS port: no HTTP answer (the token would have gone in clear)
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            got = s.recv(4096)
        except (ConnectionResetError, socket.timeout):
            got = b""
    finally:
        s.close()
    check(not got.startswith(b"HTTP/"), "plain HTTP on the HTTPS port was answered: %r"
          % got[:80])
    # a client that trusts another certificate, or wants another name, does not connect
    handshake_fails(srv.port, context(pem("other", "pem")), "an untrusted certificate")


def refused_at_start(extra, cfg_text, words):
    args = [SCORCH, "server", "--data", os.path.join(TMP, "data-bad"), "--listen",
            "127.0.0.1:0"] + extra
    if cfg_text is not None:
        cfg = os.path.join(TMP, "bad.yaml")
        with open(cfg, "w") as f:
            f.write(cfg_text)
        args += ["--config", cfg]
    r = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=20)
    err = r.stderr.decode("utf-8", "replace")
    check(r.returncode != 0, "%s %s: started (exit %d)" % (extra, cfg_text, r.returncode))
    for w in words:
        check(w in err, "%s %s: the error %r does not say %r" % (extra, cfg_text, err, w))
    check("listening" not in err, "%s: it listened before refusing: %r" % (extra, err))


def main():
    tf = os.path.join(TMP, "token")
    with open(tf, "w") as f:
        f.write(TOKEN + "\n")
    # the config's server.tls, then the command line's flags
    cfg = os.path.join(TMP, "tls.yaml")
    with open(cfg, "w") as f:
        f.write("auth: {token_file: %s}\nserver: {tls: {cert_file: %s, key_file: %s}}\n"
                % (tf, pem("good", "pem"), pem("good", "key")))
    cfg_auth = os.path.join(TMP, "auth.yaml")
    with open(cfg_auth, "w") as f:
        f.write("auth: {token_file: %s}\n" % tf)
    for how, cf, extra in (("config", cfg, []),
                           ("flags", cfg_auth, ["--tls-cert", pem("good", "pem"), "--tls-key",
                                                pem("good", "key")])):
        srv = Server(SCORCH, os.path.join(TMP, "data-" + how), os.path.join(TMP, how + ".log"),
                     config=cf, extra=extra).start()
        try:
            with open(srv.log, "rb") as f:
                check(b"listening on https://127.0.0.1:" in f.read(),
                      "%s: the log does not say https" % how)
            srv.tls = context(pem("good", "pem"))
            srv.token = TOKEN
            serves_https(srv)
            rc, _ = srv.stop()
            check(rc == 0, "%s: exit %s after SIGTERM" % (how, rc))
        finally:
            srv.kill()
    wrong = Server(SCORCH, os.path.join(TMP, "data-wrongname"), os.path.join(TMP, "wn.log"),
                   extra=["--tls-cert", pem("wrongname", "pem"), "--tls-key",
                          pem("wrongname", "key")]).start()
    try:
        handshake_fails(wrong.port, context(pem("wrongname", "pem")),
                        "a certificate for another name")
    finally:
        wrong.kill()

    junk = os.path.join(TMP, "junk.pem")
    with open(junk, "w") as f:
        f.write("not a certificate\n")
    refused_at_start(["--tls-cert", pem("good", "pem")], None, ["--tls-key"])
    refused_at_start(["--tls-cert", os.path.join(TMP, "missing.pem"), "--tls-key",
                      pem("good", "key")], None, ["missing.pem", "certificate"])
    refused_at_start(["--tls-cert", junk, "--tls-key", pem("good", "key")], None,
                     ["junk.pem", "not PEM"])
    refused_at_start(["--tls-cert", pem("good", "pem"), "--tls-key", pem("other", "key")],
                     None, ["HTTPS", "good.pem", "other.key"])
    refused_at_start([], "server: {tls: {cert_file: %s}}\n" % pem("good", "pem"),
                     ["cert_file and key_file"])
    print("HTTPS from the config and the flags: push, render, 401 and healthz over TLS; plain "
          "HTTP unanswered; untrusted and wrong-name certificates fail the handshake; 5 bad "
          "setups refused at start")


main_wrapper(main)
