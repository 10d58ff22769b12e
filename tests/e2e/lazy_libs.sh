#!/bin/sh
# lazy_libs.sh - the libraries only the network, server, debug-file and call graph paths need
# are opened at their first use (src/model/dl.c), never at start: the binary does not link
# them, and `scorch --version` and `scorch top FILE` run without the dynamic loader mapping
# any of them (LD_DEBUG=files lists every file it maps); `scorch ingest` maps libcurl, which
# shows the check sees a library when one is opened. Hidden (as root), a missing library makes
# the command that needs it fail with a message naming it and its package.
# ctest-timeout: 60
set -u
. "$SCORCH_SRC/tests/lib.sh"
need_cmd readelf "Debian's binutils"
e2e_tmp
lazy='libcurl\.so|libcurl-gnutls\.so|libmicrohttpd\.so|libgnutls\.so|libdebuginfod\.so|libgvc\.so|libcgraph\.so'

needed=$(readelf -d "$SCORCH" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || fail "readelf -d lists no NEEDED library of $SCORCH"
bad=$(echo "$needed" | grep -E "$lazy")
[ -z "$bad" ] || fail "the binary links what dl.c opens at first use: $bad"

# maps: the files the dynamic loader opened while running the command (stderr kept apart)
maps() {
    LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    cat "$tmp"/ld.* >"$tmp/ld" 2>/dev/null
    rm -f "$tmp"/ld.*
    grep -q 'file=libzstd\.so' "$tmp/ld" || fail "LD_DEBUG=files shows no libzstd for $*"
    return $rc
}

maps "$SCORCH" --version || fail "scorch --version: $(cat "$tmp/err")"
bad=$(grep -E "file=($lazy)" "$tmp/ld")
[ -z "$bad" ] || fail "scorch --version maps: $bad"

printf 'main;parse;lex 30\nmain;parse 10\nmain;eval 5\n' >"$tmp/a.folded"
"$SCORCH" convert --to pprof "$tmp/a.folded" -o "$tmp/a.pb.gz" || fail "convert"
maps "$SCORCH" top "$tmp/a.pb.gz" || fail "scorch top: $(cat "$tmp/err")"
bad=$(grep -E "file=($lazy)" "$tmp/ld")
[ -z "$bad" ] || fail "scorch top maps: $bad"

# the first use does open it: a push to a port nothing listens on fails after loading libcurl
port=$(free_ports 1)
maps "$SCORCH" ingest --server "http://127.0.0.1:$port" "$tmp/a.folded" &&
    fail "scorch ingest to a closed port succeeded"
grep -q 'file=libcurl\.so\.4' "$tmp/ld" || fail "scorch ingest did not open libcurl.so.4"
grep -q 'refused\|connect' "$tmp/err" || fail "scorch ingest: $(cat "$tmp/err")"

# A library that cannot be loaded: the command that needs it fails with a message naming the
# file and the package, no crash (a mount namespace of our own hides it behind /dev/null).
hidden() { # LIB CMD...: runs CMD with LIB unloadable; prints its stderr, returns its status
    real=$(readlink -f "$(ldconfig -p | awk -v l="$1" '$1 == l {print $NF; exit}')")
    shift
    unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$real" "$@" 2>&1 >/dev/null
}
if ! unshare -m sh -c 'mount --bind /dev/null "$0"' "$tmp/a.folded" 2>/dev/null; then
    echo "not checked: a missing library (no mount namespace here: needs root)"
else
    out=$(hidden libcurl.so.4 "$SCORCH" ingest --server "http://127.0.0.1:$port" "$tmp/a.folded")
    rc=$?
    [ "$rc" -eq 1 ] || fail "ingest without libcurl: exit $rc, $out"
    case "$out" in "scorch: cannot load libcurl.so.4: "*"(install libcurl4)") ;;
    *) fail "ingest without libcurl says: $out" ;; esac
    out=$(hidden libmicrohttpd.so.12 "$SCORCH" server --listen "127.0.0.1:$port" \
        --data "$tmp/data")
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "server without libmicrohttpd: exit $rc, $out"
    case "$out" in *"cannot load libmicrohttpd.so.12: "*"(install libmicrohttpd12)"*) ;;
    *) fail "server without libmicrohttpd says: $out" ;; esac
    out=$(hidden libgvc.so.6 "$SCORCH" callgraph --format svg "$tmp/a.pb.gz")
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "callgraph without libgvc: exit $rc, $out"
    case "$out" in *"cannot load libgvc.so.6: "*"(install libgvc6)"*) ;;
    *) fail "callgraph without libgvc says: $out" ;; esac
    echo "ok: without libcurl, libmicrohttpd or libgvc the command that needs it says so"
fi
echo "ok: --version and top map none of the lazily opened libraries; ingest opens libcurl"
