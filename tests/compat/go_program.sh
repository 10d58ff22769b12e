#!/bin/sh
# Profiles made here, not fetched: builds a small Go program with a known hot spot, runs it
# under runtime/pprof, and checks scorch's reading of the profiles: the known hot function
# tops `scorch top`, the known allocator tops alloc_space, values equal go tool pprof's, and
# the folded and pprof outputs agree with each other. Needs no ../shared.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod GOPROXY=off
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cp "$SCORCH_SRC"/tests/data/goprog/* "$tmp/"
(cd "$tmp" && go build -o prog . ) || fail "go build failed"
"$tmp/prog" "$tmp" || fail "the Go program failed"

# CPU: main.burn has the most flat time, main.spin is second among main.*
"$SCORCH" top --format tsv "$tmp/cpu.pb.gz" >"$tmp/cpu.tsv" || fail "scorch top cpu"
top=$(sed -n 2p "$tmp/cpu.tsv" | cut -f3)
[ "$top" = "main.burn" ] || { cat "$tmp/cpu.tsv" | head; fail "expected main.burn on top, got '$top'"; }
burn=$(awk -F'\t' '$3=="main.burn"{print $1}' "$tmp/cpu.tsv")
# spin's work is in main.step, inlined into it: flat lands on step, cum on spin
spin=$(awk -F'\t' '$3=="main.spin"{print $2}' "$tmp/cpu.tsv")
step=$(awk -F'\t' '$3=="main.step"{print $1}' "$tmp/cpu.tsv")
[ -n "$step" ] && [ "$step" -gt 0 ] || fail "inlined main.step should have flat time"
[ "$spin" -ge "$step" ] || fail "main.spin cum ($spin) should include inlined step ($step)"
[ -n "$spin" ] && [ "$burn" -gt $((spin * 3 / 2)) ] || fail "burn ($burn) should be well above spin ($spin)"
main_cum=$(awk -F'\t' '$3=="main.main"{print $2}' "$tmp/cpu.tsv")
[ "$main_cum" -ge $((burn + spin)) ] || fail "main.main cum ($main_cum) < burn+spin"
# text output identical to go tool pprof -top
go tool pprof -top "$tmp/cpu.pb.gz" >"$tmp/go.txt" 2>/dev/null
"$SCORCH" top "$tmp/cpu.pb.gz" >"$tmp/ours.txt"
cmp -s "$tmp/go.txt" "$tmp/ours.txt" || { diff "$tmp/go.txt" "$tmp/ours.txt"; fail "top text differs"; }
grep -q ' main.step (inline)$' "$tmp/ours.txt" || fail "main.step should be labelled (inline)"
# the header's share of the duration, padded as pprof pads it: "( 6.25%)" (a profile busy
# under 10% of its duration: a loaded machine's), "(  100%)"; the same profile with a
# duration_nanos appended (field 10, the last one wins)
total=$("$SCORCH" top --format json "$tmp/cpu.pb.gz" | sed 's/.*"total":\([0-9]*\).*/\1/')
for d in $((total * 16)) $total; do
    python3 -c 'import gzip, sys
n, b = int(sys.argv[2]), bytearray(b"\x50")
while n > 0x7F:
    b.append(n & 0x7F | 0x80)
    n >>= 7
b.append(n)
raw = gzip.decompress(open(sys.argv[1], "rb").read()) + bytes(b)
open(sys.argv[3], "wb").write(gzip.compress(raw))' "$tmp/cpu.pb.gz" $d "$tmp/cpu-d.pb.gz" ||
        fail "cannot rewrite the profile's duration"
    go tool pprof -top "$tmp/cpu-d.pb.gz" >"$tmp/go.txt" 2>/dev/null
    "$SCORCH" top "$tmp/cpu-d.pb.gz" >"$tmp/ours.txt"
    grep -Eq '^Duration: .*, Total samples = .* \(( 6\.25|  100)%\)$' "$tmp/go.txt" ||
        fail "go tool pprof's header for a duration of $d ns: $(grep Duration "$tmp/go.txt")"
    cmp -s "$tmp/go.txt" "$tmp/ours.txt" || { diff "$tmp/go.txt" "$tmp/ours.txt"; fail "top text differs (duration $d ns)"; }
done

# memory: main.grow allocates the most bytes
"$SCORCH" top --format tsv --sample-index alloc_space "$tmp/mem.pb.gz" >"$tmp/mem.tsv"
top=$(sed -n 2p "$tmp/mem.tsv" | cut -f3)
[ "$top" = "main.grow" ] || { head "$tmp/mem.tsv"; fail "expected main.grow on top of alloc_space, got '$top'"; }

# folded output sums to the profile total, and burn's folded stacks carry its flat value
"$SCORCH" convert --to folded "$tmp/cpu.pb.gz" >"$tmp/cpu.folded" || fail "convert folded"
fsum=$(awk '{s+=$NF} END{print s}' "$tmp/cpu.folded")
[ "$fsum" = "$total" ] || fail "folded sum $fsum != total $total"
fburn=$(awk '$1 ~ /;main\.burn$/ {s+=$NF} END{print s+0}' "$tmp/cpu.folded")
[ "$fburn" = "$burn" ] || fail "folded leaf main.burn $fburn != flat $burn"
grep -q '^runtime.main;main.main;main.burn ' "$tmp/cpu.folded" || fail "expected runtime.main;main.main;main.burn stack"
grep -q '^runtime.main;main.main;main.spin;main.step ' "$tmp/cpu.folded" ||
    fail "inlined main.step should appear as a frame under main.spin"
echo "ok: Go program profiled here: main.burn tops cpu ($burn ns), main.grow tops alloc_space"
