#!/bin/sh
# deb.sh - the Debian package of a built tree: `cmake --install` into a staging root with the
# prefix /usr, the maintainer scripts of packaging/deb, the runtime dependencies that
# dpkg-shlibdeps derives from the libraries the binary links and those of the libraries it
# opens at first use (src/model/dl.c's table), then dpkg-deb.
# Usage: scripts/deb.sh [BUILD_DIR [OUT_DIR]]  (defaults: build, BUILD_DIR)
# Prints the package's path. Needs dpkg-dev (dpkg-shlibdeps) and a build with its manual pages
# (help2man; scripts/install-deps.sh build installs both).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
out=$(cd "${2:-$build}" && pwd)
die() {
    echo "deb.sh: $*" >&2
    exit 1
}
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool is missing (Debian's dpkg-dev; scripts/install-deps.sh build installs it)"
done
[ -x "$build/scorch" ] || die "no $build/scorch: build first (make)"
[ -f "$build/man/man5/scorch.yaml.5" ] ||
    die "no manual pages in $build/man: help2man was missing when $build was configured"

version=$("$build/scorch" --version | awk '{print $2}')
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
[ -n "$version" ] || die "cannot read the version of $build/scorch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
DESTDIR=$root cmake --install "$build" --prefix /usr >"$tmp/install.log" ||
    { cat "$tmp/install.log" >&2; die "cmake --install failed"; }

# Debian's shape: manual pages gzipped, the licence as doc/scorch/copyright
find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +
doc=$root/usr/share/doc/scorch
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: scorch"
    echo
    echo "Files: *"
    echo "License: Apache-2.0"
    echo " On Debian systems the full text of the Apache License 2.0 is in"
    echo " /usr/share/common-licenses/Apache-2.0 (and /usr/share/doc/scorch/LICENSE)."
} >"$doc/copyright"

# Runtime dependencies: the packages that hold the shared libraries the binary links
# (dpkg-shlibdeps reads them from the dynamic section and the dpkg database), and passwd for
# postinst's useradd where systemd-sysusers is absent.
mkdir -p "$tmp/src/debian"
printf 'Source: scorch\n\nPackage: scorch\nArchitecture: any\n' >"$tmp/src/debian/control"
shlibs=$(cd "$tmp/src" && dpkg-shlibdeps -O "$root/usr/bin/scorch" 2>"$tmp/shlibdeps.err") ||
    { cat "$tmp/shlibdeps.err" >&2; die "dpkg-shlibdeps failed"; }
depends=$(echo "$shlibs" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# The libraries the binary opens at first use (dlopen: libcurl, libmicrohttpd, gnutls, ...)
# are not in its dynamic section, so dpkg-shlibdeps cannot see them: their packages come
# from the one table that names them, src/model/dl.c's {soname, package, ...} lines.
lazy=$(sed -n 's/^ *\[SC_DL_[A-Z0-9_]*\] = {"[^"]*", "\([^"]*\)".*/\1/p' "$src/src/model/dl.c")
[ -n "$lazy" ] || die "no library packages in src/model/dl.c's table"
# (at least the version built against, as dpkg-shlibdeps would ask: its upstream part)
for pkg in $lazy; do
    ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null | sed 's/^[0-9]*://; s/-[^-]*$//')
    dep=$pkg${ver:+ (>= $ver)}
    case ", $depends," in *", $pkg "* | *", $pkg,"*) ;; *) depends="$depends, $dep" ;; esac
done

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: scorch
Version: $version
Architecture: $arch
Maintainer: scorch maintainers <maintainers@users.noreply.a-seed-0b46f1f0.example>
Installed-Size: $size
Depends: $depends, passwd
Section: devel
Priority: optional
Description: continuous profiler: keeps profiles and shows them
 scorch stores CPU, memory and lock profiles over time (pprof, Pyroscope and OpenTelemetry
 pushes, scraped Go pprof endpoints, its own perf-events sampler) and shows them as flame
 graphs, diffs, call graphs and timelines in a web UI and an HTTP API. The same binary has
 command-line tools for profile files: flame graphs, top, compare, convert.
 .
 The package installs scorch.service (not enabled) with its config in /etc/scorch.
EOF
echo /etc/scorch/scorch.yaml >"$root/DEBIAN/conffiles"
for s in postinst prerm postrm; do
    install -m 0755 "$src/packaging/deb/$s" "$root/DEBIAN/$s"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print0 | sort -z |
    xargs -0 md5sum | sed 's| \./| |') >"$root/DEBIAN/md5sums"

deb=$out/scorch_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
