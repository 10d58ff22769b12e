#!/bin/sh
# scorch record on a stripped binary (symbols and DWARF split off with objcopy): unnamed and
# said so without its debug file; named, with file:line, from its debug file found by build
# id under a debug root (SCORCH_DEBUG_DIR), by its .gnu_debuglink (not when the file there is
# another build), and fetched from Debian's debuginfod on loopback; with that server stopped
# and a fresh cache, and with a server that never answers, the recording ends normally and
# says what is unsymbolized and why. A symbol with a version (ver_spin@@VER_1 in .symtab)
# is named without it, by DWARF's name where there is DWARF.
#
# debuginfod 0.188 cannot be told an address and listens on every interface: the test runs in
# a network namespace of its own (unshare -n), where the loopback is the only interface.
set -u
. "$SCORCH_SRC/tests/lib.sh"
. "$SCORCH_SRC/tests/record_lib.sh"
need_cmd gcc "gcc"
need_cmd objcopy "binutils"
need_cmd debuginfod "Debian's debuginfod (scripts/install-deps.sh)"
need_cmd go "Debian's golang-go (for go tool pprof)"
need_cmd ip "iproute2"
if [ -z "${SCORCH_IN_NETNS:-}" ]; then
    unshare -n true 2>/dev/null || skip "no network namespace (unshare -n) to keep debuginfod in"
    SCORCH_IN_NETNS=1 exec unshare -n sh "$0"
fi
ip link set lo up || fail "cannot bring up the namespace's loopback"
export HOME="${HOME:-/tmp}" GOCACHE="${TMPDIR:-/tmp}/scorch-gocache"
e2e_tmp
need_perf
unset DEBUGINFOD_URLS # Debian's login shells set one: only the servers given here count
export DEBUGINFOD_CACHE_PATH="$tmp/cache"
src=$SCORCH_SRC/tests/data/record
cd "$tmp" || fail "no $tmp"

# hot, stripped: .dynsym alone (which names none of its functions), a build id
cc_prog hot "$src/hot.c" -Wl,--build-id
mkdir keep # (not beside hot, where its debuglink would find it)
objcopy --only-keep-debug hot keep/hot.debug || fail "objcopy --only-keep-debug"
strip --strip-all hot || fail "strip"
[ -z "$(readelf -S hot | grep -E '\.symtab|\.debug_info')" ] || fail "hot is not stripped"
bid=$(readelf -n hot | awk '/Build ID/ {print $3}')
[ -n "$bid" ] || fail "hot has no build id"
leaf=$(grep -n 'void hot_leaf' "$src/hot.c" | cut -d: -f1)

# named FILE: hot's functions named in FILE's stacks, hot_leaf with a line of its body
named() {
    [ "$(stacks "$1" ';main;hot_outer;hot_middle;hot_leaf ')" -gt 0 ] ||
        { cat "$1.folded"; fail "$1: no main;hot_outer;hot_middle;hot_leaf"; }
    go tool pprof -raw "$1" 2>/dev/null >"$1.raw"
    line=$(sed -n "s|.* hot_leaf $src/hot.c:\([0-9]*\) .*|\1|p" "$1.raw" | head -1)
    [ -n "$line" ] && [ "$line" -gt "$leaf" ] && [ "$line" -le $((leaf + 7)) ] ||
        { cat "$1.raw"; fail "$1: hot_leaf should be at hot.c:$((leaf + 1))..$((leaf + 7))"; }
    go tool pprof -comments "$1" >"$1.comments" 2>/dev/null
    ! grep -q "$tmp/hot:" "$1.comments" || fail "$1: hot is named, yet said not to be: $(cat "$1.comments")"
}
# unnamed FILE WHY: hot's frames unnamed in FILE, its comments and record's summary saying WHY
unnamed() {
    n=$(stacks "$1" '\[hot\]')
    [ "$n" -gt 0 ] || { cat "$1.folded"; fail "$1: no [hot] frames"; }
    [ "$(stacks "$1" 'hot_leaf')" = 0 ] || fail "$1: hot_leaf named without symbols"
    go tool pprof -comments "$1" >"$1.comments" 2>/dev/null
    grep -q "unsymbolized frames in [0-9]* of [0-9]* samples" "$1.comments" &&
        grep -qF "  $tmp/hot: $n ($2)" "$1.comments" ||
        fail "$1: the comments should count hot's $n unnamed samples ($2): $(cat "$1.comments")"
    grep -qF "unsymbolized frames by binary: $tmp/hot $n ($2)" "$1.log" ||
        fail "$1: the summary should say hot is unsymbolized ($2): $(cat "$1.log")"
}

# ---- a symbol with a version: named without it, and by DWARF where DWARF names it ----
printf 'VER_1 { global: ver_spin; local: *; };\n' >ver.map
gcc -O2 -g -shared -fPIC -Wl,--version-script=ver.map -o libver.so "$src/libver.c" ||
    fail "gcc libver"
readelf -sW libver.so | grep -q ' ver_spin@@VER_1$' || fail "libver.so's .symtab has no ver_spin@@VER_1"
cc_prog usever "$src/usever.c" -L. -lver -Wl,-rpath,"$tmp"
start ./usever 30
record ver.pb.gz -p $p --duration 1 --no-debuginfod
record ver-nodwarf.pb.gz -p $p --duration 1 --no-debuginfod --no-dwarf
kill $p
! grep -q '@' ver.pb.gz.folded ver-nodwarf.pb.gz.folded ||
    { cat ver.pb.gz.folded ver-nodwarf.pb.gz.folded; fail "a versioned symbol name"; }
[ "$(stacks ver.pb.gz ';main;ver_spin_impl ')" -gt 0 ] ||
    { cat ver.pb.gz.folded; fail "with DWARF: main;ver_spin_impl (DWARF's name of ver_spin@@VER_1)"; }
[ "$(stacks ver-nodwarf.pb.gz ';main;ver_spin ')" -gt 0 ] ||
    { cat ver-nodwarf.pb.gz.folded; fail "without DWARF: main;ver_spin (ver_spin@@VER_1's name)"; }

# ---- nothing to name it with ----
start ./hot 30
record none.pb.gz -p $p --duration 1 --no-debuginfod
unnamed none.pb.gz "no symbols, no debug file"
# libc's start under its own name, never a versioned one (with libc's debug file, DWARF's)
! grep -q '@' none.pb.gz.folded || { cat none.pb.gz.folded; fail "a versioned symbol name"; }
libc=$(awk '$NF ~ /\/libc\.so/ {print $NF; exit}' /proc/$p/maps)
libc_bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ {print $3}')
if [ -f "/usr/lib/debug/.build-id/$(echo "$libc_bid" | cut -c1-2)/$(echo "$libc_bid" | cut -c3-).debug" ]; then
    grep -q ';__libc_start_main_impl;' none.pb.gz.folded ||
        { cat none.pb.gz.folded; fail "libc's debug file names __libc_start_main_impl"; }
fi

# ---- by build id under a debug root ----
mkdir -p "root/.build-id/$(echo "$bid" | cut -c1-2)"
cp keep/hot.debug "root/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
SCORCH_DEBUG_DIR=$tmp/root record buildid.pb.gz -p $p --duration 1 --no-debuginfod
named buildid.pb.gz

# ---- by .gnu_debuglink under <debug root>/<the binary's directory>, the same build only ----
cp hot linked
(cd keep && objcopy --add-gnu-debuglink=hot.debug ../linked) || fail "objcopy --add-gnu-debuglink"
mkdir -p "link$tmp"
cp keep/hot.debug "link$tmp/hot.debug"
start ./linked 30
SCORCH_DEBUG_DIR=$tmp/link record link.pb.gz -p $p --duration 1 --no-debuginfod
[ "$(stacks link.pb.gz ';main;hot_outer;hot_middle;hot_leaf ')" -gt 0 ] ||
    { cat link.pb.gz.folded; fail "linked: not named by the debug file its debuglink names"; }
cc_prog other "$src/hot.c" -Wl,--build-id -DOTHER_BUILD -O1
objcopy --only-keep-debug other "link$tmp/hot.debug" || fail "objcopy other"
SCORCH_DEBUG_DIR=$tmp/link record link2.pb.gz -p $p --duration 1 --no-debuginfod
[ "$(stacks link2.pb.gz 'hot_leaf')" = 0 ] ||
    { cat link2.pb.gz.folded; fail "linked: named by the debug file of another build"; }
kill $p

# ---- from debuginfod ----
mkdir srv
cp keep/hot.debug srv/
port=$(free_ports 1)
debuginfod -F -p "$port" -d "$tmp/debuginfod.sqlite" -t 0 -g 0 srv >debuginfod.log 2>&1 &
d=$!
pids="$pids $d"
i=0
until curl -fs -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo"; do
    i=$((i + 1))
    [ $i -lt 150 ] || fail "debuginfod never served hot.debug: $(tail -5 debuginfod.log)"
    sleep 0.1
done
start ./hot 30
DEBUGINFOD_URLS="http://127.0.0.1:$port" record fetched.pb.gz -p $p --duration 1 -v
named fetched.pb.gz
grep -q "debug files: .*, 1 from debuginfod" fetched.pb.gz.log ||
    fail "the summary should count the fetched file: $(cat fetched.pb.gz.log)"
# the flag names the server as well, and a second recording takes the file from the cache
record cached.pb.gz -p $p --duration 1 --debuginfod "http://127.0.0.1:$port"
named cached.pb.gz

# ---- the server stopped, a fresh cache: recording goes on, and says what it could not name ----
kill $d
wait $d 2>/dev/null
rm -rf "$tmp/cache"
DEBUGINFOD_URLS="http://127.0.0.1:$port" record down.pb.gz -p $p --duration 1
unnamed down.pb.gz "no symbols, no debug file; debuginfod: connection refused"

# ---- a server that accepts and never answers: the fetch is cut at its timeout ----
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").close()
conns = []
while True:
    conns.append(s.accept()[0])' "$port" "$tmp/silent.ready" &
pids="$pids $!"
i=0
until [ -e silent.ready ]; do
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the silent server never listened"
    sleep 0.1
done
DEBUGINFOD_URLS="http://127.0.0.1:$port" record slow.pb.gz -p $p --duration 1 --debuginfod-timeout 1
unnamed slow.pb.gz "no symbols, no debug file; debuginfod: timed out after 1 s"
kill $p
echo "ok"
