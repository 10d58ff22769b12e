"""server_tls.py - the server's TLS: HTTPS on the HTTP listener, gRPC over TLS (ALPN h2) on
the OTLP/gRPC one, from the same certificate and key. Usage: server_tls.py TMPDIR STUBS
(env: SCORCH); TMPDIR holds good.pem/.key, other.pem/.key and wrongname.pem/.key, STUBS the
protoc stubs of tests/proto (server_tls.sh)."""
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_common import (EMPTY_SETTINGS, PREFACE, UNKNOWN_FRAME, Server,  # noqa: E402
                           check, expect_error, grpc_port, main_wrapper, otlp_client,
                           otlp_request, parse_tsv_rows)

SCORCH = os.environ["SCORCH"]
TMP, STUBS = sys.argv[1], sys.argv[2]
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


# ---- gRPC over TLS ----

GRPC_MAX_CONNECTIONS = 128  # grpc.c's bound (docs/ingest.md)
GRPC_HANDSHAKE_S = 10  # a TLS handshake's bound there
ALERT_NO_APPLICATION_PROTOCOL = 120


def export(srv, svc, *args):
    """An OTLP export over gRPC (grpcio) to srv's gRPC port: otlp_client.py's answer."""
    return otlp_client(STUBS, "grpc", "127.0.0.1:%d" % srv.grpc_port,
                       otlp_request(STUBS, TMP, svc, T0), *args).strip()


def tls_connect(port, alpn):
    """A TLS connection trusting good.pem, offering alpn (None: no ALPN extension)."""
    ctx = context(pem("good", "pem"))
    if alpn is not None:
        ctx.set_alpn_protocols(alpn)
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        return ctx.wrap_socket(s, server_hostname="127.0.0.1")
    except BaseException:
        s.close()
        raise


def frames(sock):
    """HTTP/2 frames from sock as (type, flags, stream, payload), until the connection ends."""
    buf = b""
    while True:
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            n = int.from_bytes(buf[:3], "big")
            yield buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n]
            buf = buf[9 + n:]
        try:
            got = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLEOFError):
            got = b""
        if not got:
            return
        buf += got


def closed(sock):
    """Whether the peer ended the connection (EOF or reset) within the socket's timeout."""
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLEOFError):
        return True
    except socket.timeout:
        return False


def closed_read(s):
    """What the socket has, b"" at its end or a reset."""
    try:
        return s.recv(4096)
    except ConnectionResetError:
        return b""


def grpc_over_tls(srv):
    # grpcio verifying the certificate (IP SAN 127.0.0.1), ALPN h2: stored, read over HTTPS
    out = export(srv, "grpc-tls", "--ca", pem("good", "pem"), "--token", TOKEN)
    check(out.startswith("ok 0"), "an export over gRPC+TLS: %s" % out)
    tsv = parse_tsv_rows(srv.ok("/api/v1/render", dict(query='{service_name="grpc-tls"}',
                                                       type="cpu:samples", format="tsv",
                                                       **RANGE)).decode())
    check(tsv.get("main.grpc_tls") == (2, 2), "the gRPC+TLS export read back: %s" % tsv)
    # the token is checked as in clear
    out = export(srv, "grpc-tls-bad", "--ca", pem("good", "pem"), "--token", "wrong")
    check(out.startswith("error UNAUTHENTICATED"), "gRPC+TLS with a wrong token: %s" % out)
    # a client that trusts another certificate, or speaks h2c, does not get through
    out = export(srv, "grpc-tls-other", "--ca", pem("other", "pem"), "--token", TOKEN)
    check(out.startswith("error UNAVAILABLE"), "gRPC+TLS trusting another certificate: %s" % out)
    out = export(srv, "grpc-h2c", "--token", TOKEN)
    check(out.startswith("error UNAVAILABLE"), "h2c on the TLS port: %s" % out)
    for svc in ("grpc-tls-bad", "grpc-tls-other", "grpc-h2c"):
        st, _, data = srv.request("GET", "/api/v1/render", dict(
            query='{service_name="%s"}' % svc, type="cpu:samples", format="tsv", **RANGE))
        check(st != 200 or not parse_tsv_rows(data.decode()), "%s was stored: %r" % (svc, data))
    # h2c's preface on the TLS port: a TLS alert record and the end, no HTTP/2 frame
    s = socket.create_connection(("127.0.0.1", srv.grpc_port), timeout=20)
    try:
        s.sendall(PREFACE + EMPTY_SETTINGS)
        got = b"".join(iter(lambda: closed_read(s), b""))
    finally:
        s.close()
    check(got[:1] == b"\x15" and len(got) == 7 and got[5] == 2,
          "h2c on the TLS port: want one fatal TLS alert, got %r" % got[:40])
    # ALPN: h2 is chosen; a client that offers only http/1.1, or no ALPN, is refused in the
    # handshake with the no_application_protocol alert
    t = tls_connect(srv.grpc_port, ["http/1.1", "h2"])
    try:
        check(t.selected_alpn_protocol() == "h2", "ALPN chose %r" % t.selected_alpn_protocol())
        check(t.version() in ("TLSv1.2", "TLSv1.3"), "TLS version %s" % t.version())
        t.sendall(PREFACE + EMPTY_SETTINGS)
        first = next(frames(t), None)
        check(first and first[0] == 4 and first[2] == 0,
              "no SETTINGS frame first over TLS: %r" % (first,))
    finally:
        t.close()
    for alpn in (["http/1.1"], None):
        try:
            tls_connect(srv.grpc_port, alpn).close()
            check(False, "a handshake with ALPN %s succeeded" % alpn)
        except ssl.SSLError as e:
            check("no application protocol" in str(e).lower(),
                  "ALPN %s: not refused with no_application_protocol: %s" % (alpn, e))


def silent_clients_dropped(srv):
    # every connection slot taken by clients that never handshake: one more is closed at
    # once; after the handshake's bound they are all dropped and an export gets through
    socks = []
    try:
        for _ in range(GRPC_MAX_CONNECTIONS):
            socks.append(socket.create_connection(("127.0.0.1", srv.grpc_port), timeout=20))
        t0 = time.time()
        try:
            tls_connect(srv.grpc_port, ["h2"]).close()
            check(False, "a connection past %d was served" % GRPC_MAX_CONNECTIONS)
        except (ssl.SSLError, ConnectionResetError, OSError) as e:
            check(not isinstance(e, socket.timeout), "a connection past the limit hung")
        # the bound plus a generous margin for a loaded machine: a slot held forever fails
        for s in socks:
            s.settimeout(max(1.0, t0 + GRPC_HANDSHAKE_S * 3 - time.time()))
            check(closed(s), "a client that never handshook was not dropped in %d s"
                  % (GRPC_HANDSHAKE_S * 3))
    finally:
        for s in socks:
            s.close()
    out = export(srv, "grpc-tls-after", "--ca", pem("good", "pem"), "--token", TOKEN)
    check(out.startswith("ok 0"), "an export after the silent clients: %s" % out)


def goaway_on_sigterm(srv, burst):
    # SIGTERM with a TLS connection open: GOAWAY (NO_ERROR) over TLS, the end, exit 0. With
    # burst, the client writes 1 MiB as the server stops, more than it reads before it says
    # goodbye: the GOAWAY must still arrive (a close with unread bytes sends a reset, and the
    # client's kernel drops what the client had not read yet)
    t = tls_connect(srv.grpc_port, ["h2"])
    try:
        t.sendall(PREFACE + EMPTY_SETTINGS)
        fr = frames(t)
        check(next(fr, (None,))[0] == 4, "no SETTINGS from the server")
        srv.proc.send_signal(signal.SIGTERM)
        if burst:
            try:
                t.sendall(UNKNOWN_FRAME * 64)
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
                check(False, "SIGTERM: the server reset a client that was still writing")
        goaway = [f for f in fr if f[0] == 7]
    finally:
        t.close()
    check(len(goaway) == 1 and struct.unpack(">I", goaway[0][3][4:8])[0] == 0,
          "SIGTERM%s: want one GOAWAY with NO_ERROR over TLS, got %r"
          % (" as the client writes 1 MiB" if burst else "", goaway))
    rc, _ = srv.stop()
    check(rc == 0, "exit %s after SIGTERM with a gRPC+TLS connection" % rc)


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
    check("listening" not in err and "OTLP/gRPC on" not in err,
          "%s: it listened before refusing: %r" % (extra, err))
    check(len(err.strip().splitlines()) == 1 and err.startswith("scorch: "),
          "%s %s: not a one-line error: %r" % (extra, cfg_text, err))


def main():
    tf = os.path.join(TMP, "token")
    with open(tf, "w") as f:
        f.write(TOKEN + "\n")
    # the config's server.tls, then the command line's flags
    cfg = os.path.join(TMP, "tls.yaml")
    with open(cfg, "w") as f:
        f.write("auth: {token_file: %s}\nserver: {tls: {cert_file: %s, key_file: %s}}\n"
                "otlp: {grpc_listen: '127.0.0.1:0'}\n" % (tf, pem("good", "pem"), pem("good", "key")))
    cfg_auth = os.path.join(TMP, "auth.yaml")
    with open(cfg_auth, "w") as f:
        f.write("auth: {token_file: %s}\n" % tf)
    for how, cf, extra in (("config", cfg, []),
                           ("flags", cfg_auth, ["--tls-cert", pem("good", "pem"), "--tls-key",
                                                pem("good", "key"), "--otlp-grpc-listen",
                                                "127.0.0.1:0"])):
        srv = Server(SCORCH, os.path.join(TMP, "data-" + how), os.path.join(TMP, how + ".log"),
                     config=cf, extra=extra).start()
        try:
            with open(srv.log, "rb") as f:
                log = f.read()
            check(b"listening on https://127.0.0.1:" in log, "%s: the log does not say https" % how)
            check(b"(TLS, ALPN h2)" in log, "%s: the log does not say gRPC is over TLS" % how)
            srv.tls = context(pem("good", "pem"))
            srv.token = TOKEN
            srv.grpc_port = grpc_port(srv)
            serves_https(srv)
            grpc_over_tls(srv)
            if how == "config":
                silent_clients_dropped(srv)
            goaway_on_sigterm(srv, burst=how == "flags")
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
                     None, ["good.pem", "other.key", "not the key"])
    # the same with the gRPC listener: refused before either listens
    grpc = ["--otlp-grpc-listen", "127.0.0.1:0"]
    refused_at_start(grpc + ["--tls-cert", pem("good", "pem"), "--tls-key",
                             os.path.join(TMP, "missing.key")], None, ["missing.key", "key"])
    refused_at_start(grpc + ["--tls-cert", pem("good", "pem"), "--tls-key", pem("other", "key")],
                     None, ["good.pem", "other.key", "not the key"])
    refused_at_start([], "server: {tls: {cert_file: %s}}\n" % pem("good", "pem"),
                     ["cert_file and key_file"])
    print("HTTPS from the config and the flags: push, render, 401 and healthz over TLS; plain "
          "HTTP unanswered; untrusted and wrong-name certificates fail the handshake; "
          "OTLP/gRPC over TLS (ALPN h2): stored and read back, wrong token UNAUTHENTICATED, "
          "untrusted certificate and h2c refused, no h2 in ALPN refused with "
          "no_application_protocol, %d silent clients dropped within the handshake bound, "
          "GOAWAY on SIGTERM; 7 bad setups refused at start with a one-line error"
          % GRPC_MAX_CONNECTIONS)


main_wrapper(main)
