#!/bin/sh
# server_tls.sh - HTTPS through libmicrohttpd's GnuTLS (server.tls / --tls-cert, --tls-key):
# with a certificate made here (openssl, for IP 127.0.0.1) a client that trusts it pushes and
# reads over HTTPS with the token; plain HTTP on that port gets no answer; a client that does
# not trust it, or wants another name, fails the handshake; a missing, non-PEM or mismatched
# key or certificate stops the server at start with an error naming it
# (tests/e2e/server_tls.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd python3 "python3"
need_cmd openssl "Debian's openssl (scripts/install-deps.sh installs it)"
e2e_tmp
mk() { # mk NAME SUBJECT SAN: a self-signed EC certificate and its key
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "$2" -addext "subjectAltName=$3" -keyout "$tmp/$1.key" -out "$tmp/$1.pem" \
        2>"$tmp/openssl.log" || fail "openssl req: $(cat "$tmp/openssl.log")"
}
mk good /CN=scorch-test IP:127.0.0.1
mk other /CN=scorch-other IP:127.0.0.1
mk wrongname /CN=elsewhere DNS:elsewhere.example
python3 -B "$SCORCH_SRC/tests/e2e/server_tls.py" "$tmp"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
