#!/bin/sh
# man.sh - the manual pages, from the same text as --help: scorch(1) and scorch-CMD(1) for
# each command `scorch --help` lists (help2man over the built binary's --help), and
# scorch.yaml(5) from docs/config.md (scripts/md2man.awk).
# Usage: scripts/man.sh SCORCH_BINARY OUTDIR VERSION
# Writes OUTDIR/man1/*.1 and OUTDIR/man5/scorch.yaml.5. SOURCE_DATE_EPOCH, when set, dates
# them (reproducible builds); else the last commit's date, else today.
set -eu
bin=$1 out=$2 version=$3
src=$(cd "$(dirname "$0")/.." && pwd)
command -v help2man >/dev/null 2>&1 ||
    { echo "man.sh: help2man is missing (scripts/install-deps.sh build installs it)" >&2; exit 1; }
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/man1" "$out/man5"

# The commands and their one-line summaries, as `scorch --help` lists them: the block of
# "  name   summary" lines after "Commands:", up to the blank line that ends it.
"$bin" --help | awk '/Commands:/ {on = 1; next} on && /^  [a-z][a-z-]*  +[^ ]/ {print; seen = 1; next}
    on && seen {exit}' >"$tmp/commands"
[ -s "$tmp/commands" ] || { echo "man.sh: no commands in '$bin --help'" >&2; exit 1; }

# help2man reads "Usage:" (with "or:" lines) and "Options:" as its sections; scorch writes
# them in lower case, and wraps a long usage line with an indented continuation.
cat >"$tmp/shape.awk" <<'AWK'
NR == 1 { sub(/^usage: /, "Usage: "); usage = 1 }
usage && /^$/ { usage = 0; print line; line = "" }
usage && NR > 1 {
    if ($0 ~ /^ +scorch /) { print line; sub(/^ +/, ""); line = "   or: " $0 }
    else { sub(/^ +/, ""); line = line " " $0 }
    next
}
usage { line = $0; next }
/^options:$/ { print "Options:"; next }
{ print }
END { if (usage) print line }
AWK

see_also() { # the other pages, for SEE ALSO
    {
        echo "[SEE ALSO]"
        pages=$( (echo scorch; awk '{print "scorch-" $1}' "$tmp/commands") | grep -vx "$1" |
            sed 's/$/(1)/')
        echo "$pages" | sed 's/^/.BR /; s/(1)$/ (1),/'
        echo ".BR scorch.yaml (5)"
        echo ".PP"
        echo "The documentation in docs/ of the source tree: cli.md, api.md, config.md, record.md, service.md."
    } >"$tmp/$1.h2m"
}

# one wrapper per page: --help prints the command's help in help2man's shape
page() { # NAME SUMMARY HELP-COMMAND...
    name=$1 summary=$2
    shift 2
    {
        echo '#!/bin/sh'
        echo "if [ \"\$1\" = --version ]; then echo '$name $version'; exit 0; fi"
        echo "$*"
    } >"$tmp/$name"
    chmod +x "$tmp/$name"
    see_also "$name"
    help2man --no-info --section=1 --source="scorch $version" --manual="scorch manual" \
        --name="$summary" --include="$tmp/$name.h2m" --output="$out/man1/$name.1" "$tmp/$name"
}

page scorch "keeps profiles and shows them" "'$bin' --help | awk -f '$tmp/shape.awk'"
while read -r cmd summary; do
    help="'$bin' $cmd --help | awk -f '$tmp/shape.awk'"
    # collapse has one collapser below it, with its own options
    [ "$cmd" = collapse ] &&
        help="{ '$bin' collapse --help; echo; '$bin' collapse perf --help; } | awk -f '$tmp/shape.awk'"
    page "scorch-$cmd" "$summary" "$help"
done <"$tmp/commands"

# the table of every setting is written from the binary's own table, below the prose
sed '/<!-- settings:begin -->/,/<!-- settings:end -->/d' "$src/docs/config.md" >"$tmp/config.md"
awk -v title=scorch.yaml -v section=5 -v date="$date" -v source="scorch $version" \
    -v name_line='scorch.yaml \- the configuration file of scorch server and scorch agent' \
    -f "$src/scripts/md2man.awk" "$tmp/config.md" >"$out/man5/scorch.yaml.5"
{
    echo ".SH EVERY SETTING"
    echo "Key (flag): what it is. What it accepts. Its default. From \\fBscorch settings\\fR."
    "$bin" settings --man
} >>"$out/man5/scorch.yaml.5"
