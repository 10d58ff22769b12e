#!/bin/sh
# package.sh - the Debian package and `make install`: builds the .deb of this build tree
# (scripts/deb.sh), installs it into a fresh root (dpkg --root with the maintainer scripts
# run outside it when we are root, else dpkg -x), and checks that
#   - every declared dependency is an installed Debian package at the version asked, and every
#     library the binary links directly, and every one it opens at first use (the sonames of
#     src/model/dl.c's table), is in a declared dependency's package;
#   - the postinst made the user scorch (sysusers.d), the config is a conffile;
#   - the installed `scorch --version` says the package's version, and the installed
#     `scorch server` runs on the installed example config (its own port and state dir here),
#     takes a push and answers /api/v1/ with it, and stops on SIGTERM with status 0;
#   - systemd-analyze verify accepts scorch.service, and systemd-analyze security rates its
#     exposure 3.0 at most (skipped, and said, without systemd);
#   - man -l renders every manual page without a warning;
#   - cmake --install with DESTDIR and PREFIX=/usr/local puts the unit's paths under the
#     prefix and keeps a config already there.
set -u
. "$SCORCH_SRC/tests/lib.sh"
: "${SCORCH_BUILD:?set SCORCH_BUILD to the build tree}"
need_cmd dpkg-deb "Debian's dpkg"
need_cmd dpkg-shlibdeps "Debian's dpkg-dev (scripts/install-deps.sh build installs it)"
need_cmd curl "Debian's curl"
need_cmd python3 "Debian's python3"
need_cmd readelf "Debian's binutils"
[ -f "$SCORCH_BUILD/man/man5/scorch.yaml.5" ] ||
    skip "no manual pages in $SCORCH_BUILD/man (help2man was missing at configure time)"
e2e_tmp

deb=$(sh "$SCORCH_SRC/scripts/deb.sh" "$SCORCH_BUILD" "$tmp") || fail "scripts/deb.sh failed"
[ -f "$deb" ] || fail "scripts/deb.sh made no package"
version=$(dpkg-deb -f "$deb" Version)
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)" >&2

# ---- into a fresh root ----
root=$tmp/root
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
    touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
    # The root has none of the dependencies (the check below is against this system's);
    # the maintainer scripts run here, with DPKG_ROOT set to the root.
    dpkg --root="$root" --log=/dev/null --force-depends --force-script-chrootless \
        -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg --root -i"; }
    st=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' scorch)
    [ "$st" = "install ok installed" ] || fail "scorch in the fresh root: '$st'"
    grep -q '^scorch:x:[0-9]*:[0-9]*:.*:/var/lib/scorch:/usr/sbin/nologin$' "$root/etc/passwd" ||
        fail "postinst made no user scorch: $(cat "$root/etc/passwd" 2>/dev/null)"
    dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Conffiles}' scorch |
        grep -q '/etc/scorch/scorch.yaml' || fail "/etc/scorch/scorch.yaml is not a conffile"
else
    echo "not root: dpkg -x instead of dpkg --root (the maintainer scripts are not run)" >&2
    dpkg -x "$deb" "$root" || fail "dpkg -x"
fi
for f in usr/bin/scorch etc/scorch/scorch.yaml usr/lib/systemd/system/scorch.service \
    usr/lib/sysusers.d/scorch.conf usr/share/man/man1/scorch.1.gz \
    usr/share/man/man1/scorch-server.1.gz usr/share/man/man5/scorch.yaml.5.gz \
    usr/share/doc/scorch/copyright usr/share/doc/scorch/LICENSE; do
    [ -f "$root/$f" ] || fail "the package has no /$f"
done

# ---- dependencies ----
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends" >&2
names=""
for dep in $(echo "$depends" | tr -d ' ' | tr ',' '\n'); do
    ok=""
    for alt in $(echo "$dep" | tr '|' ' '); do # any alternative installed will do
        name=${alt%%(*}
        rel=$(echo "$alt" | sed -n 's/^[^(]*(\([<>=]*\)\(.*\))$/\1/p')
        want=$(echo "$alt" | sed -n 's/^[^(]*([<>=]*\(.*\))$/\1/p')
        have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null)
        case "$have" in "install ok installed "*) ;; *) continue ;; esac
        if [ -n "$rel" ]; then
            case "$rel" in '>=') op=ge ;; '>>') op=gt ;; '<=') op=le ;; '<<') op=lt ;; *) op=eq ;; esac
            dpkg --compare-versions "${have##* }" "$op" "$want" || continue
        fi
        ok=$name
    done
    [ -n "$ok" ] || fail "the dependency '$dep' is not an installed Debian package here"
    names="$names $ok"
done
ldd "$root/usr/bin/scorch" >"$tmp/ldd" || fail "ldd of the installed binary"
grep -q "not found" "$tmp/ldd" && fail "unresolved libraries: $(grep 'not found' "$tmp/ldd")"
for lib in $(readelf -d "$root/usr/bin/scorch" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v l="$lib" '$1 == l && $3 ~ /^\// {print $3}' "$tmp/ldd")
    [ -n "$path" ] || fail "ldd does not resolve $lib"
    real=$(readlink -f "$path")
    pkg=""
    # merged /usr: dpkg knows a file by the path its package shipped, /lib or /usr/lib
    for p in "$path" "$real" "/usr$path" "${path#/usr}" "/usr$real" "${real#/usr}"; do
        pkg=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$pkg" ] && break
    done
    [ -n "$pkg" ] || fail "no Debian package holds $lib ($path)"
    case " $names " in *" $pkg "*) ;; *) fail "$lib comes from $pkg, which Depends does not name" ;; esac
done
lazy=$(sed -n 's/^ *\[SC_DL_[A-Z0-9_]*\] = {"\([^"]*\)".*/\1/p' "$SCORCH_SRC/src/model/dl.c")
[ -n "$lazy" ] || fail "no sonames in src/model/dl.c's table"
for lib in $lazy; do
    pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$pkg" ] || fail "no Debian package holds $lib, which dl.c opens"
    case " $names " in *" $pkg "*) ;; *) fail "$lib (opened at first use) comes from $pkg, which Depends does not name" ;; esac
    # with the version built against as its least, as dpkg-shlibdeps gives the linked ones
    echo "$depends" | grep -Eq "(^|, )$pkg \(>= [0-9][^)]*\)" ||
        fail "Depends names $pkg (opened at first use) without a least version: $depends"
done

# ---- the installed binary ----
got=$("$root/usr/bin/scorch" --version) || fail "installed scorch --version"
[ "$got" = "scorch $version" ] || fail "installed scorch --version says '$got', the package $version"
port=$(free_ports 1)
"$root/usr/bin/scorch" server --config "$root/etc/scorch/scorch.yaml" \
    --listen "127.0.0.1:$port" --data "$tmp/state" 2>"$tmp/server.log" &
server=$!
pids="$server"
url=http://127.0.0.1:$port
wait_http "$url/healthz"
printf 'main;work;spin 30\nmain;idle 10\n' >"$tmp/cpu.folded"
"$root/usr/bin/scorch" ingest --server "$url" --name 'pkgcheck.cpu{env=deb}' "$tmp/cpu.folded" \
    2>"$tmp/ingest.log" || { cat "$tmp/ingest.log" >&2; fail "scorch ingest to the installed server"; }
names=$(curl -fsS "$url/api/v1/label_values?name=service_name") || fail "GET /api/v1/label_values"
case "$names" in *'"pkgcheck"'*) ;; *) fail "/api/v1/label_values has no pkgcheck: $names" ;; esac
kill -TERM "$server"
wait "$server"
rc=$?
pids=""
[ "$rc" -eq 0 ] || { cat "$tmp/server.log" >&2; fail "the server exited $rc on SIGTERM"; }
ls "$tmp/state" | grep -q . || fail "the server wrote nothing to its --data directory"

# ---- the unit ----
unit=$root/usr/lib/systemd/system/scorch.service
grep -qx 'ExecStart=/usr/bin/scorch server --config /etc/scorch/scorch.yaml' "$unit" ||
    fail "scorch.service's ExecStart: $(grep ExecStart= "$unit")"
if command -v systemd-analyze >/dev/null 2>&1; then
    # In the root, whose /usr/bin/scorch ExecStart names. The root is lent what a Debian
    # system has around the unit: systemd's own units (the targets it is ordered after),
    # /bin/sh (ExecReload), and the manual pages of Documentation= are looked up in it.
    cp -Rn /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
    cp /bin/sh "$root/usr/bin/sh"
    [ -e "$root/bin" ] || ln -s usr/bin "$root/bin"
    MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" scorch.service \
        >"$tmp/verify.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && ! grep -q . "$tmp/verify.log" ||
        { cat "$tmp/verify.log" >&2; fail "systemd-analyze verify scorch.service (exit $rc)"; }
    echo "systemd-analyze verify scorch.service: clean" >&2
    # the hardening may not slip: an exposure above 3.0 of systemd's 10 fails
    systemd-analyze security --offline=true --threshold=30 --root="$root" scorch.service \
        >"$tmp/security.log" 2>&1 ||
        fail "systemd-analyze security: $(tail -n 1 "$tmp/security.log") (at most 3.0)"
    tail -n 1 "$tmp/security.log" >&2
else
    echo "SKIP (one step): systemd-analyze is absent (Debian's systemd); scorch.service not verified" >&2
fi

# ---- the manual pages ----
if command -v man >/dev/null 2>&1; then
    n=0
    for page in "$root"/usr/share/man/man*/*.gz; do
        LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$tmp/page.txt" 2>"$tmp/man.err" ||
            fail "man -l $(basename "$page") failed: $(cat "$tmp/man.err")"
        [ -s "$tmp/man.err" ] && fail "man -l $(basename "$page") warns: $(cat "$tmp/man.err")"
        grep -q '^NAME' "$tmp/page.txt" || fail "$(basename "$page") has no NAME section"
        n=$((n + 1))
    done
    # one page a command of `scorch --help`, and the config's
    cmds=$("$root/usr/bin/scorch" --help | awk '/Commands:/ {on = 1; next}
        on && /^  [a-z][a-z-]*  +[^ ]/ {print; seen = 1; next} on && seen {exit}' | wc -l)
    [ "$n" -eq $((cmds + 2)) ] || fail "$n manual pages for $cmds commands (want scorch(1), one each, scorch.yaml(5))"
    echo "man -l: $n pages, no warnings" >&2
else
    echo "SKIP (one step): man is absent (Debian's man-db); the pages were not rendered" >&2
fi

# ---- make install: PREFIX and DESTDIR, and a config of the admin's stays ----
dest=$tmp/dest
DESTDIR=$dest cmake --install "$SCORCH_BUILD" --prefix /usr/local >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install --prefix /usr/local"; }
grep -qx 'ExecStart=/usr/local/bin/scorch server --config /usr/local/etc/scorch/scorch.yaml' \
    "$dest/usr/local/lib/systemd/system/scorch.service" || fail "the /usr/local unit's ExecStart"
[ -x "$dest/usr/local/bin/scorch" ] && [ -f "$dest/usr/local/share/man/man1/scorch-top.1" ] ||
    fail "make install: no binary or manual pages under the prefix"
echo "# mine" >"$dest/usr/local/etc/scorch/scorch.yaml"
DESTDIR=$dest cmake --install "$SCORCH_BUILD" --prefix /usr/local >"$tmp/install.log" 2>&1 ||
    fail "the second cmake --install"
[ "$(cat "$dest/usr/local/etc/scorch/scorch.yaml")" = "# mine" ] ||
    fail "a second install replaced the admin's scorch.yaml"
echo "ok: $(basename "$deb") installs, runs, verifies; make install honours PREFIX and DESTDIR" >&2
