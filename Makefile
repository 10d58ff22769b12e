# scorch: `make` builds build/scorch; `make test` installs what is missing, builds and runs
# every test through CTest; `make install` and `make deb` package it. Three build trees:
# build/ (the product, -Werror), build/asan (unit tests under ASan+UBSan) and build/fuzz
# (libFuzzer targets, clang).

BUILD     ?= build
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_OPT ?=
PREFIX    ?= /usr/local

.PHONY: all build deps deps-run deps-test test test-quick asan fuzz run clean lint format tidy \
	install deb

all: build

deps:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh all

build: deps
	@cmake -S . -B $(BUILD) -DSCORCH_WERROR=ON $(CMAKE_OPT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan: deps
	@cmake -S . -B $(BUILD)/asan -DSCORCH_WERROR=ON -DSCORCH_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)

fuzz: deps-test
	@CC=clang cmake -S . -B $(BUILD)/fuzz -DSCORCH_FUZZ=ON >/dev/null
	@cmake --build $(BUILD)/fuzz -j $(JOBS)

# The product tree registers the asan and fuzz trees' tests, so one CTest run (and one
# summary line) covers everything.
test: deps-test asan fuzz
	@cmake -S . -B $(BUILD) -DSCORCH_WERROR=ON -DSCORCH_ASAN_DIR=$(abspath $(BUILD))/asan \
		-DSCORCH_FUZZ_DIR=$(abspath $(BUILD))/fuzz $(CMAKE_OPT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The quick loop while editing (a few minutes): the product tree's unit and compat tests;
# no sanitizers, fuzzing, end-to-end or browser tests, no lint.
test-quick: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE 'asan|fuzz|e2e|browser|lint' $(CTEST_ARGS)

# The binary, manual pages, scorch.service, its sysusers.d entry and the example config
# (PREFIX/etc/scorch/scorch.yaml, /etc/scorch for PREFIX=/usr; one already there is kept),
# under DESTDIR when set. cmake/install.cmake lists it all.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

# build/scorch_<version>_<arch>.deb, with its runtime dependencies (scripts/deb.sh).
deb: build
	@scripts/deb.sh $(BUILD)

# The server on 127.0.0.1:4040 with ./data, plus the demo Go service feeding it.
run: deps-run build
	@scripts/run.sh

deps-run:
	@scripts/install-deps.sh run

# The lint that make test runs too (CTest label "lint"): clang-format's shape, cppcheck and
# clang-tidy's bugprone set; each fails on any finding.
lint: deps-test build
	@scripts/lint.sh format
	@scripts/lint.sh cppcheck
	@scripts/lint.sh tidy $(BUILD)

# Puts every C file in .clang-format's shape.
format:
	@scripts/lint.sh fix

# clang-tidy with the static analyzer: minutes a file, so by hand only, not in CI.
tidy: build
	@scripts/lint.sh analyze $(BUILD)

clean:
	rm -rf $(BUILD)
