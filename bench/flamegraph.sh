#!/bin/sh
# flamegraph.sh - times `scorch flamegraph` against FlameGraph's flamegraph.pl (and
# inferno-flamegraph when installed) on one generated 300,000-line folded file, in the same
# run, best of RUNS (default 3), and prints the ratios.
#
# usage: bench/flamegraph.sh [FLAMEGRAPH_DIR]    (or FLAMEGRAPH_DIR=... in the environment)
#   SCORCH   the binary (default: build/scorch)
#   LINES    folded lines to generate (default 300000)
#   RUNS     runs per tool, the best counts (default 3)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
fg_dir=${1:-${FLAMEGRAPH_DIR:-}}
scorch=${SCORCH:-$root/build/scorch}
lines=${LINES:-300000}
runs=${RUNS:-3}
out="$root/bench/out"
mkdir -p "$out"

[ -x "$scorch" ] || { echo "no scorch binary at $scorch (run make build)" >&2; exit 1; }
input="$out/folded-$lines.txt"
if [ ! -s "$input" ]; then
    echo "generating $input ..." >&2
    python3 "$root/bench/gen_folded.py" --lines "$lines" >"$input.tmp"
    mv "$input.tmp" "$input"
fi
python3 - "$input" <<'EOF'
import sys
n = frames = 0
names = set()
for line in open(sys.argv[1], encoding="utf-8"):
    stack = line.rsplit(" ", 1)[0].split(";")
    n += 1
    frames += len(stack)
    names.update(stack)
print("input: %d lines, %.1f frames per stack, %d distinct functions" % (n, frames / n, len(names)))
EOF

# best_of OUTPUT CMD...: runs CMD RUNS times (stdout to OUTPUT), prints the best time.
best_of() {
    dest=$1
    shift
    python3 - "$runs" "$dest" "$@" <<'EOF'
import subprocess, sys, time
runs, dest, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best = None
for _ in range(runs):
    with open(dest, "wb") as f:
        t = time.monotonic()
        subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, check=False)
        t = time.monotonic() - t
    best = t if best is None or t < best else best
print("%.3f" % best)
EOF
}

frames() { grep -c '<title>' "$1" || true; }

t_scorch=$(best_of "$out/scorch.svg" "$scorch" flamegraph "$input")
printf '%-22s %8.3f s  (%s frames)\n' "scorch flamegraph" "$t_scorch" "$(frames "$out/scorch.svg")"

if [ -n "$fg_dir" ] && [ -f "$fg_dir/flamegraph.pl" ]; then
    t_fg=$(best_of "$out/flamegraph-pl.svg" perl "$fg_dir/flamegraph.pl" "$input")
    printf '%-22s %8.3f s  (%s frames)\n' "flamegraph.pl" "$t_fg" "$(frames "$out/flamegraph-pl.svg")"
    python3 -c "import sys; print('speedup vs flamegraph.pl: %.1fx' % (float(sys.argv[1]) / float(sys.argv[2])))" \
        "$t_fg" "$t_scorch"
else
    echo "flamegraph.pl: skipped (pass a FlameGraph checkout or set FLAMEGRAPH_DIR)"
fi

if command -v inferno-flamegraph >/dev/null 2>&1; then
    t_inf=$(best_of "$out/inferno.svg" inferno-flamegraph "$input")
    printf '%-22s %8.3f s  (%s frames)\n' "inferno-flamegraph" "$t_inf" "$(frames "$out/inferno.svg")"
    python3 -c "import sys; print('speedup vs inferno-flamegraph: %.1fx' % (float(sys.argv[1]) / float(sys.argv[2])))" \
        "$t_inf" "$t_scorch"
else
    echo "inferno-flamegraph: not on PATH, skipped"
fi
