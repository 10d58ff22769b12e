#!/bin/sh
# format_docs.sh - the docs name every input format of the table (src/formats/format.c), as
# the binary prints them: each description of `scorch --help` is in docs/cli.md's format
# table or its notes, and the /ingest names of `scorch ingest --help` are docs/cli.md's
# `format=` and `--format` lists and docs/openapi.yaml's enum, in the table's order. A row
# added without its docs fails here.
set -u
. "$SCORCH_SRC/tests/lib.sh"
cli=$SCORCH_SRC/docs/cli.md
api=$SCORCH_SRC/docs/openapi.yaml

# "  pprof, V8 .cpuprofile, ... or JFR;" after "Inputs, gzipped or not, may be"
descs=$("$SCORCH" --help | sed -n '/^Inputs, gzipped or not, may be$/{n;p;}' |
    sed 's/^ *//; s/;$//; s/ or /, /' | tr -d '\n')
[ -n "$descs" ] || fail "no format list in scorch --help"
# cli.md's part before its first "## " heading (the table and its notes), backticks dropped
head=$(sed -n '1,/^## /p' "$cli" | tr -d '`' | tr '\n' ' ' | tr -s ' ')
echo "$descs" | tr ',' '\n' | sed 's/^ *//' | while IFS= read -r d; do
    [ -n "$d" ] || continue
    echo "$head" | grep -q -F -e "$d" ||
        fail "docs/cli.md's formats do not name '$d'"
done || exit 1

names=$("$SCORCH" ingest --help | sed -n '/^  --format FMT/{n;p;}' | sed 's/^ *//')
[ -n "$names" ] || fail "no format names in scorch ingest --help"
pipe=$(echo "$names" | sed 's/, /|/g')
grep -q -F "format=$pipe\`" "$cli" || fail "docs/cli.md does not list format=$pipe"
grep -q -F "\`--format $pipe\`" "$cli" || fail "docs/cli.md's ingest does not list --format $pipe"
grep -q -F "enum: [$names]" "$api" || fail "docs/openapi.yaml's format enum is not [$names]"
echo "ok: the docs list the formats $descs"
