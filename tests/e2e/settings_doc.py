"""docs/config.md's prose agrees with the settings table: every key of `scorch settings
--markdown` (given as argv[1]) has a bullet in the prose, and a key's default is in it."""
import re
import sys

table = open(sys.argv[1]).read().splitlines()[2:]
doc = open(sys.argv[2]).read()
prose = doc[:doc.index("## Every setting")]
# bullets: "- `a`, `b` (...): text" up to the next bullet, heading or blank line
bullets = re.findall(r"^- (.*?)(?=\n- |\n\n|\n#|\Z)", prose, re.S | re.M)
bad = []
for row in table:
    key, _flag, _param, _what, default, _doc = [c.strip().strip("`") for c in row.split("|")[1:-1]]
    if not key:
        continue
    name = key.split(".", 1)[1] if key.startswith("scrape.") else key
    mine = [b for b in bullets if "`%s`" % name in b.split(" (")[0]]
    if not mine:
        bad.append("%s has no bullet in docs/config.md" % key)
    elif default and not any(default in b or "`%s`" % default in b for b in mine):
        bad.append("%s: the default %s is not in its bullet: %s" % (key, default, mine[0][:120]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
