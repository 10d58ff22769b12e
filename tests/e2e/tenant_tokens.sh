#!/bin/sh
# tenant_tokens.sh - one token per tenant (auth.tenants): over every way in (/ingest raw and
# multipart, Connect push, OTLP/HTTP, OTLP/gRPC metadata) a tenant's token stores in its own
# tenant only and another tenant's X-Scope-OrgID is refused (403 / PERMISSION_DENIED); every
# token-taking route of the route table answers a tenant's token as the server's token
# answers for that tenant (tests/e2e/tenant_tokens.py does the work).
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd protoc "Debian's protobuf-compiler (scripts/install-deps.sh installs it)"
need_python grpc google.protobuf
e2e_tmp
mkdir "$tmp/stubs"
protoc -I "$SCORCH_SRC/tests/proto" --python_out="$tmp/stubs" scorch_otlp.proto || fail "protoc"
"$py" -B "$SCORCH_SRC/tests/e2e/tenant_tokens.py" "$tmp" "$tmp/stubs"
rc=$?
[ "$rc" -eq 0 ] || tail -n 20 "$tmp"/*.log >&2
exit "$rc"
