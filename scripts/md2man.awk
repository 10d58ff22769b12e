# md2man.awk - the restricted Markdown of docs/config.md as a man page (roff, man macros):
# '## X' sections, '### X' subsections, paragraphs, ``` blocks, '- ' lists ('- `key` (...):
# text' items become tagged paragraphs), `code` and **bold** in bold, [text](link) as text.
# Usage: awk -v title=NAME -v section=5 -v date=D -v source=S -v name_line='x \- y' -f md2man.awk FILE
function inline(s,    out, i, c) {
    gsub(/\\/, "\\e", s)
    gsub(/\[[^]]*\]\([^)]*\)/, "&\001", s)
    while (match(s, /\[[^]]*\]\([^)]*\)\001/)) {
        t = substr(s, RSTART + 1, RLENGTH - 1)
        sub(/\]\([^)]*\)\001$/, "", t)
        s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
    }
    while (match(s, /\*\*[^*]+\*\*/))
        s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 2, RLENGTH - 4) "\\fR" substr(s, RSTART + RLENGTH)
    while (match(s, /`[^`]+`/))
        s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 1, RLENGTH - 2) "\\fR" substr(s, RSTART + RLENGTH)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.']/)
        s = "\\&" s
    return s
}
function verbatim(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.']/)
        s = "\\&" s
    return s
}
BEGIN {
    printf ".TH %s %s \"%s\" \"%s\" \"%s\"\n", toupper(title), section, date, source, "File Formats"
    print ".SH NAME"
    print name_line
    inlist = 0; code = 0; para = 0; item = ""
}
/^```/ {
    flush_item()
    if (!code) { print ".PP"; print ".RS 4"; print ".nf"; code = 1 }
    else { print ".fi"; print ".RE"; code = 0 }
    next
}
code { print verbatim($0); next }
/^# / { next }                       # the title: .TH and NAME say it
/^## / { flush_item(); sub(/^## /, ""); print ".SH " toupper(inline($0)); inlist = 0; para = 0; next }
/^### / { flush_item(); sub(/^### /, ""); print ".SS " inline($0); inlist = 0; para = 0; next }
/^$/ { flush_item(); para = 1; next }
# A list item runs over its indented lines; it is written out whole when it ends.
function flush_item(    cut, tag, body) {
    if (item == "")
        return
    # '- `key` (what, default): text' -> a tagged paragraph, the tag up to '): ' or ': '
    cut = item ~ /^`[^`]*` \(/ ? index(item, "): ") + 1 : index(item, ": ")
    if (item ~ /^`/ && cut > 1) {
        tag = substr(item, 1, cut - 1)
        body = substr(item, cut + 2)
        print ".TP"
        print inline(tag)
        print inline(body)
    } else {
        print ".IP \\(bu 2"
        print inline(item)
    }
    item = ""
}
/^- / { flush_item(); item = substr($0, 3); inlist = 1; para = 0; next }
/^  / && item != "" { sub(/^ +/, ""); item = item " " $0; next }
{
    flush_item()
    if (para || inlist) { print ".PP"; para = 0; inlist = 0 }
    print inline($0)
}
END { flush_item() }
