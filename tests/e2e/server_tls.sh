#!/bin/sh
# server_tls.sh - the server's TLS (server.tls / --tls-cert, --tls-key): HTTPS through
# libmicrohttpd's GnuTLS and OTLP/gRPC over TLS with GnuTLS (ALPN h2). With a certificate
# made here (openssl, for IP 127.0.0.1) a client that trusts it pushes and reads over HTTPS
# with the token; plain HTTP on that port gets no answer; a client that does not trust it,
# or wants another name, fails the handshake. Over gRPC (Debian's python3-grpcio) an export
# that verifies the certificate is stored and read back over HTTPS; h2c and a client that
# offers no "h2" are refused in the handshake, clients that never handshake are dropped
# after the handshake's bound (all 128 connection slots), SIGTERM sends GOAWAY over TLS. A
# missing, non-PEM or mismatched key or certificate stops the server at start with a
# one-line error naming it (tests/e2e/server_tls.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd openssl "Debian's openssl (scripts/install-deps.sh installs it)"
need_cmd protoc "Debian's protobuf-compiler (scripts/install-deps.sh installs it)"
need_python grpc google.protobuf
e2e_tmp
mkdir "$tmp/stubs"
protoc -I "$SCORCH_SRC/tests/proto" --python_out="$tmp/stubs" scorch_otlp.proto || fail "protoc"
mk() { # mk NAME SUBJECT SAN: a self-signed EC certificate and its key
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "$2" -addext "subjectAltName=$3" -keyout "$tmp/$1.key" -out "$tmp/$1.pem" \
        2>"$tmp/openssl.log" || fail "openssl req: $(cat "$tmp/openssl.log")"
}
mk good /CN=scorch-test IP:127.0.0.1
mk other /CN=scorch-other IP:127.0.0.1
mk wrongname /CN=elsewhere DNS:elsewhere.example
"$py" -B "$SCORCH_SRC/tests/e2e/server_tls.py" "$tmp" "$tmp/stubs"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
