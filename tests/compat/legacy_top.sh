#!/bin/sh
# Legacy profiles against go tool pprof, byte for byte: `scorch top` of every sample type
# equals `go tool pprof -top` on
# - what gperftools writes: a C program and a C++ program linked with -lprofiler (CPUPROFILE)
#   and -ltcmalloc (HEAPPROFILE), built and run here, their addresses named from the binaries;
# - CPU profiles in the four word encodings (32/64-bit, either byte order), contention,
#   mutex, threadz, goroutine, Go heap (debug=1, sampled), heapz_v2 and growthz profiles
#   written here on the C program's functions, and Java's CPU, heapz and contentionz
#   profiles (tests/compat/legacy_gen.py);
# - a pprof whose functions carry C++, Rust, Go and Java names as their own system names,
#   which pprof shortens, and a pprof of addresses that pprof symbolizes from the binary (and
#   `convert --to pprof` of a legacy profile, read back by pprof);
# and `callgraph --format dot` equals `go tool pprof -dot` on some of them.
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd go "Debian's golang-go (scripts/install-deps.sh installs it)"
need_cmd gcc "gcc"
need_cmd g++ "g++"
need_cmd python3 "python3"
need_cmd nm "binutils"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache" GOFLAGS=-mod=mod
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
gcc -o "$tmp/t" "$tmp/t.c" -Wl,--no-as-needed -lprofiler -ltcmalloc 2>/dev/null ||
    skip "gperftools is not installed (libgoogle-perftools-dev, scripts/install-deps.sh)"

cat >"$tmp/prog.c" <<'EOF'
#include <stdlib.h>
static volatile double sink;
__attribute__((noinline)) void leaf_a(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 0.5; sink = x; }
__attribute__((noinline)) void leaf_b(long n) { double x = 1; for (long i = 0; i < n; i++) x *= 1.0000001; sink = x; }
__attribute__((noinline)) void *grab(long n) { return malloc(n); }
__attribute__((noinline)) void mid(long n) { leaf_a(n); leaf_b(n / 2); }
int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 100;
    for (long k = 0; k < iters; k++) {
        mid(1000000);
        void *p = grab(1000 + k * 64);
        if (k % 3) free(p);
    }
    return 0;
}
EOF
cat >"$tmp/cxx.cc" <<'EOF'
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
namespace work {
template <typename T> struct Box {
    T v;
    __attribute__((noinline)) T spin(long n) { T x = v; for (long i = 0; i < n; i++) x = x * 3 + 1; return x; }
};
class Engine {
  public:
    __attribute__((noinline)) long run(long n);
    __attribute__((noinline)) static long helper(long n) { long s = 0; for (long i = 0; i < n; i++) s ^= i * 7; return s; }
};
long Engine::run(long n) { Box<long> b{3}; return b.spin(n) + helper(n); }
}
namespace {
__attribute__((noinline)) long anon_fn(long n) { std::map<long, long> m; for (long i = 0; i < n / 100; i++) m[i % 1000] += i; return (long)m.size(); }
}
template <typename F> __attribute__((noinline)) long apply(F f, long n) { return f(n); }
volatile long sink;
int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 100;
    work::Engine e;
    for (long k = 0; k < iters; k++) {
        sink = e.run(2000000);
        sink = anon_fn(200000);
        sink = apply([](long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 13; return s; }, 1000000);
        auto *v = new std::vector<std::string>(10 + k % 5, std::string(50, 'x'));
        if (k % 3) delete v;
    }
}
EOF
gcc -g -O1 -fno-omit-frame-pointer -o "$tmp/prog" "$tmp/prog.c" -Wl,--no-as-needed -lprofiler \
    -ltcmalloc || fail "cannot build the C program"
g++ -g -O1 -fno-omit-frame-pointer -o "$tmp/cxx" "$tmp/cxx.cc" -Wl,--no-as-needed -lprofiler \
    -ltcmalloc || fail "cannot build the C++ program"
(cd "$tmp" && CPUPROFILE="$tmp/prog.prof" CPUPROFILE_FREQUENCY=1000 HEAPPROFILE="$tmp/prog" \
    ./prog 150 2>/dev/null) || fail "the C program failed"
(cd "$tmp" && CPUPROFILE="$tmp/cxx.prof" CPUPROFILE_FREQUENCY=1000 HEAPPROFILE="$tmp/cxx" \
    ./cxx 60 2>/dev/null) || fail "the C++ program failed"
[ -s "$tmp/prog.prof" ] && [ -s "$tmp/cxx.prof" ] || fail "gperftools wrote no CPU profile"
ls "$tmp"/prog.*.heap "$tmp"/cxx.*.heap >/dev/null 2>&1 || fail "tcmalloc wrote no heap profile"

mkdir "$tmp/gen"
python3 "$SCORCH_SRC/tests/compat/legacy_gen.py" cpu "$tmp/prog" "$tmp/gen" &&
    python3 "$SCORCH_SRC/tests/compat/legacy_gen.py" text "$tmp/prog" "$tmp/gen" &&
    python3 "$SCORCH_SRC/tests/compat/legacy_gen.py" names "$tmp/gen/names.pb.gz" &&
    python3 "$SCORCH_SRC/tests/compat/legacy_gen.py" rawpprof "$tmp/prog" "$tmp/gen/raw.pb.gz" ||
    fail "cannot write the profiles"

cases=0
named=0
for f in "$tmp"/prog.prof "$tmp"/cxx.prof "$tmp"/*.heap "$tmp"/gen/*; do
    name=$(basename "$f")
    go tool pprof -raw "$f" >"$tmp/raw" 2>/dev/null || fail "go tool pprof cannot read $name"
    types=$(sed -n '/^Samples:/{n;p;q}' "$tmp/raw" | sed 's/\[dflt\]//g; s#/[^ ]*##g')
    [ -n "$types" ] || fail "no sample types in $name"
    for t in "" $types; do
        go tool pprof ${t:+-sample_index="$t"} -top "$f" >"$tmp/go.txt" 2>/dev/null
        "$SCORCH" top ${t:+--sample-index "$t"} "$f" >"$tmp/ours.txt" 2>"$tmp/err" ||
            fail "scorch top $name ${t:-}: $(cat "$tmp/err")"
        cmp -s "$tmp/go.txt" "$tmp/ours.txt" || {
            diff "$tmp/go.txt" "$tmp/ours.txt" | head -20
            fail "top differs from go tool pprof -top for $name type '${t:-default}'"
        }
        cases=$((cases + 1))
    done
    # the functions were named (pprof's own rows are more than binaries)
    grep -qE '  (leaf_a|leaf_b|mid|main|apply|ns::Foo::bar const|com.example.A.f|STUB|GC)$' "$tmp/go.txt" &&
        named=$((named + 1))
done
[ "$cases" -ge 40 ] || fail "expected at least 40 file/type cases, ran $cases"
[ "$named" -ge 16 ] || fail "only $named profiles had named functions"

# the shortened names are pprof's: a few spelled out, so a pprof that stopped shortening
# would not pass unnoticed
"$SCORCH" top "$tmp/gen/names.pb.gz" >"$tmp/names.txt" || fail "top names.pb.gz"
for want in '::trace' 'std::vector::push_back' 'ns::Foo::bar const' 'work::Engine::run' 'foo' \
    'ns::Kept<int>::f(int)' 'main.Map[...]' 'core::ptr::drop_in_place'; do
    awk -v w="$want" 'substr($0, length($0) - length(w) - 1) == "  " w { f = 1 } END { exit !f }' \
        "$tmp/names.txt" || fail "top of names.pb.gz has no row '$want'"
done

# the call graph names its nodes the same way: DOT as pprof -dot writes it
for f in "$tmp/prog.prof" "$tmp/cxx.prof" "$tmp/gen/contention.txt" "$tmp/gen/names.pb.gz"; do
    go tool pprof -dot "$f" >"$tmp/go.dot" 2>/dev/null
    "$SCORCH" callgraph --format dot "$f" >"$tmp/ours.dot" || fail "callgraph $f"
    cmp -s "$tmp/go.dot" "$tmp/ours.dot" || {
        diff "$tmp/go.dot" "$tmp/ours.dot" | head
        fail "callgraph --format dot of $(basename "$f") differs from go tool pprof -dot"
    }
done

# converted to pprof, a legacy profile reads back in pprof as scorch shows it
for f in "$tmp/prog.prof" "$tmp/gen/contention.txt" "$tmp"/prog.*.heap; do
    "$SCORCH" convert --to pprof "$f" -o "$tmp/conv.pb.gz" || fail "convert $f"
    go tool pprof -top "$tmp/conv.pb.gz" 2>/dev/null | grep -v '^Time:' >"$tmp/go.txt"
    "$SCORCH" top "$f" | grep -v '^Time:' >"$tmp/ours.txt"
    cmp -s "$tmp/go.txt" "$tmp/ours.txt" || {
        diff "$tmp/go.txt" "$tmp/ours.txt" | head
        fail "convert --to pprof of $(basename "$f") reads differently in pprof"
    }
done
echo "ok: $cases legacy file/sample-type cases identical to go tool pprof -top, $named named"
