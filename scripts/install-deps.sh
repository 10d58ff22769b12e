#!/bin/sh
# Installs the Debian packages scorch needs to build and test; skips what is present.
# Runs as root on Debian 12. Usage: scripts/install-deps.sh [build|run|test|all]  (default: all)
set -eu

build_pkgs="cmake make gcc pkg-config libdeflate-dev libzstd-dev libxxhash-dev
 libsqlite3-dev libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libyaml-dev libpcre2-dev
 libelf-dev libdw-dev libiberty-dev libgraphviz-dev zlib1g-dev libnghttp2-dev libdebuginfod-dev
 help2man dpkg-dev"
test_pkgs="clang libclang-rt-14-dev golang-go python3 perl linux-perf graphviz
 nodejs npm chromium clickhouse-server python3-grpcio python3-protobuf protobuf-compiler
 openssl clang-format clang-tidy cppcheck valgrind prometheus prometheus-alertmanager
 debuginfod elfutils google-perftools libgoogle-perftools-dev zookeeper openjdk-17-jdk-headless
 man-db systemd"

run_pkgs="golang-go curl"
case "${1:-all}" in
build) want="$build_pkgs" ;;
run) want="$build_pkgs $run_pkgs" ;;
test | all) want="$build_pkgs $test_pkgs" ;;
*) echo "usage: $0 [build|run|test|all]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
    # node and npm may come from elsewhere on the image; a working binary is enough
    case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "scorch: missing packages:$missing (run $0 as root)" >&2
    exit 1
fi
echo "scorch: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
