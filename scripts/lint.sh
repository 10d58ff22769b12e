#!/bin/sh
# The project's C lint, one place for the file list and the settings of each tool.
# usage: scripts/lint.sh format|fix|cppcheck|tidy|analyze [BUILD_DIR]
#   format    clang-format --dry-run: fails when a file is not in .clang-format's shape
#   fix       clang-format -i: puts every file in shape (make format)
#   cppcheck  cppcheck's warning and portability checks, fails on any finding
#   tidy      clang-tidy's bugprone checks (.clang-tidy) over src/, fails on any finding
#   analyze   clang-tidy with the clang static analyzer too (minutes a file on a busy
#             machine: make tidy runs it by hand, CI does not)
# Findings that are not bugs are silenced where they are, with the reason beside them
# (`/* NOLINTNEXTLINE(check): why */` on the line before for clang-tidy, so clang-format
# cannot move it off its line; `/* cppcheck-suppress id */` for cppcheck).
set -eu
cd "$(dirname "$0")/.."
build=${2:-build}
files() { ls src/*/*.c src/*/*.h tests/unit/*.c tests/unit/*.h fuzz/*.c fuzz/*.h bench/*.c 2>/dev/null; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "scorch lint: $1 is not installed (scripts/install-deps.sh test)" >&2; exit 77; }; }
case "${1:-}" in
format)
    need clang-format
    # shellcheck disable=SC2046
    clang-format --dry-run --Werror $(files)
    ;;
fix)
    need clang-format
    # shellcheck disable=SC2046
    clang-format -i $(files)
    ;;
cppcheck)
    need cppcheck
    cppcheck --quiet --std=c11 --enable=warning,portability --inline-suppr \
        --error-exitcode=1 -j "$(nproc 2>/dev/null || echo 2)" -I src \
        --suppress=missingIncludeSystem src
    ;;
tidy | analyze)
    need clang-tidy
    [ -f "$build/compile_commands.json" ] ||
        { echo "scorch lint: no $build/compile_commands.json (configure with cmake first)" >&2; exit 2; }
    checks=""
    [ "$1" = analyze ] && checks="--checks=clang-analyzer-core.*,clang-analyzer-unix.*,clang-analyzer-deadcode.*"
    jobs=$(nproc 2>/dev/null || echo 2)
    # one clang-tidy a core; any finding fails (WarningsAsErrors in .clang-tidy)
    ls src/*/*.c | xargs -P "$jobs" -n 8 clang-tidy -p "$build" --quiet $checks 2>/dev/null
    ;;
*)
    echo "usage: scripts/lint.sh format|fix|cppcheck|tidy|analyze [BUILD_DIR]" >&2
    exit 2
    ;;
esac
