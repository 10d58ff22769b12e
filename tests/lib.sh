# lib.sh - helpers for the shell tests (sourced). Exit 77 = skipped, as CTest is told.
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
skip() {
    echo "SKIP: $*" >&2
    exit 77
}
# need_testdata SUBDIR: skip visibly when ../shared/testdata (or a part of it) is absent.
need_testdata() {
    [ -n "${SCORCH_TESTDATA:-}" ] && [ -d "$SCORCH_TESTDATA/$1" ] ||
        skip "../shared/testdata/$1 is absent"
}
# need_cmd NAME WHAT: skip when a tool is missing (scripts/install-deps.sh installs them).
need_cmd() {
    command -v "$1" >/dev/null 2>&1 || skip "$1 not found ($2)"
}
