#!/bin/sh
# openapi.sh - docs/openapi.yaml parses as OpenAPI 3.0 (operations with responses, every $ref
# resolves), and the documentation covers the server exactly: every route in the route table
# of src/server/server.c is an operation in openapi.yaml and a "METHOD PATH" heading in
# docs/api.md, and openapi.yaml has no path the server lacks. YAML is read with PyYAML, else
# with js-yaml from tests/pyroscope/node_modules (npm installs it there); skips without both.
set -eu

src=${SCORCH_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/lib.sh"
need_cmd python3 "python3 checks the documents"
tmp=$(mktemp -d /tmp/scorch-openapi-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# the route table: {"GET", "/api/v1/render", handler, open, query},
sed -n '/routes\[\] = {/,/^};/p' "$src/src/server/server.c" |
    sed -n 's/^ *{"\([A-Z]*\)", *"\(\/[^"]*\)".*/\1 \2/p' | sort -u >"$tmp/routes"
[ -s "$tmp/routes" ] || fail "no routes found in src/server/server.c (did the table change shape?)"
echo "routes in server.c: $(wc -l <"$tmp/routes")" >&2

# YAML -> JSON
if python3 -c 'import yaml' 2>/dev/null; then
    python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
        "$src/docs/openapi.yaml" >"$tmp/openapi.json" || fail "docs/openapi.yaml does not parse (PyYAML)"
elif command -v node >/dev/null 2>&1 && [ -d "$src/tests/pyroscope/node_modules/js-yaml" ]; then
    NODE_PATH="$src/tests/pyroscope/node_modules" node -e '
        const fs = require("fs"), yaml = require("js-yaml");
        process.stdout.write(JSON.stringify(yaml.load(fs.readFileSync(process.argv[1], "utf8"))));
    ' "$src/docs/openapi.yaml" >"$tmp/openapi.json" || fail "docs/openapi.yaml does not parse (js-yaml)"
else
    skip "no YAML parser: PyYAML (python3-yaml) or js-yaml in tests/pyroscope/node_modules"
fi

python3 - "$tmp/openapi.json" "$tmp/routes" "$src/docs/api.md" <<'PY'
import json, re, sys

doc = json.load(open(sys.argv[1]))
routes = [l.split() for l in open(sys.argv[2]) if l.strip()]
api_md = open(sys.argv[3]).read()
errors = []

if not str(doc.get("openapi", "")).startswith("3.0"):
    errors.append("openapi.yaml: 'openapi' is not 3.0.x")
for k in ("title", "version"):
    if not doc.get("info", {}).get(k):
        errors.append("openapi.yaml: info.%s is missing" % k)
paths = doc.get("paths") or {}
methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
for p, item in paths.items():
    if not p.startswith("/"):
        errors.append("openapi.yaml: path %r does not start with /" % p)
    for m, op in item.items():
        if m in methods and not (op or {}).get("responses"):
            errors.append("openapi.yaml: %s %s has no responses" % (m.upper(), p))


def refs(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "$ref":
                yield v
            else:
                yield from refs(v)
    elif isinstance(x, list):
        for v in x:
            yield from refs(v)


for r in refs(doc):
    node = doc
    if not r.startswith("#/"):
        errors.append("openapi.yaml: external $ref %s" % r)
        continue
    for part in r[2:].split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    if node is None:
        errors.append("openapi.yaml: $ref %s does not resolve" % r)

# every route documented in both
for method, path in routes:
    if method.lower() not in (paths.get(path) or {}):
        errors.append("openapi.yaml: no %s %s (it is in server.c's route table)" % (method, path))
    if not re.search(r"^#+ .*%s %s\b" % (method, re.escape(path)), api_md, re.M):
        errors.append("docs/api.md: no heading '%s %s' (it is in server.c's route table)" %
                      (method, path))
# and nothing documented that the server lacks ("/" is the UI, served outside the table)
known = {p for _, p in routes} | {"/"}
for p in paths:
    if p not in known:
        errors.append("openapi.yaml: %s is not a route of the server" % p)

for e in errors:
    print("FAIL: " + e, file=sys.stderr)
print("openapi.yaml: %d paths, %d routes checked, %d problems" %
      (len(paths), len(routes), len(errors)), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
