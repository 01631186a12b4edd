# The two commands of the README: `make demo` and `make test`. Both install
# what they need (Debian packages, and for the tests a venv from PyPI),
# configure and build.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
ifneq ($(CI),)
  CMAKE_FLAGS += -DPARITY_WERROR=ON
endif

.PHONY: deps venv build demo test test-full test-unit test-asan test-asan-full asan-build test-browser \
  asan-subset test-costs fuzz clean format

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The pinned Python packages (requirements.txt) in $(BUILD)/venv.
venv: deps
	@bash scripts/venv.sh $(BUILD)

demo: build
	@bash scripts/demo.sh $(BUILD)/tools/parity

# ctest starts the longest tests first: its cost file is seeded from the
# recorded one (tests/ctest-costs.txt, `make test-costs` rewrites it).
define seed_costs
	@mkdir -p $(1)/Testing/Temporary
	@[ -s $(1)/Testing/Temporary/CTestCostData.txt ] || cp tests/ctest-costs.txt $(1)/Testing/Temporary/CTestCostData.txt
endef

export PARITY_REQUIRE_SCHEMAS = 1

test-unit: build venv
	$(call seed_costs,$(BUILD))
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Unit tests, malformed inputs and the corpus subset that covers the lines the
# whole corpus covers (tests/asan-subset.txt), under AddressSanitizer + UBSan
# at -O1, built with clang; then the fuzzer. The MLIR importer is left out:
# its tests are not malformed-input tests, and compiling MLIR's headers under
# sanitizers costs more CI time than it finds. The numeric re-runs of every
# corpus case (ExecCorpus) are the release build's.
$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DPARITY_SANITIZE=ON -DPARITY_FUZZ=ON \
	  -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON -DPARITY_EXPANDER=$(abspath $(BUILD))/tools/parity $(CMAKE_FLAGS)

export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1

# The corpus manifests are expanded by the release build's parity.
asan-build: build $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target parity parity_tests parity_fuzz_proto parity_corpus_cases

# The report schema checks use the release build's venv. Left to the release
# build: the numeric corpus re-runs and the two solvers over the generated
# cases (the solvers are not instrumented; three minutes here); the mutation
# campaign draws 2 mutants a configuration instead of 6.
ASAN_SKIP = ^Cases/ExecCorpus|^Verify.SolversAgreeOnCorpus$$
test-asan: asan-build venv
	$(call seed_costs,$(ASAN_BUILD))
	cd $(ASAN_BUILD) && PARITY_PYTHON=$(abspath $(BUILD))/venv/bin/python PARITY_MUTANTS=2 \
	  ctest --output-on-failure -j $(JOBS) -L 'asan|unit' -E '$(ASAN_SKIP)'
	bash scripts/fuzz.sh $(ASAN_BUILD)/tests/parity_fuzz_proto 30

# The whole corpus under the sanitizers (not only the subset).
test-asan-full: asan-build venv
	$(call seed_costs,$(ASAN_BUILD))
	cd $(ASAN_BUILD) && PARITY_PYTHON=$(abspath $(BUILD))/venv/bin/python \
	  ctest --output-on-failure -j $(JOBS) -L 'asan|unit|corpus' -E '$(ASAN_SKIP)'
	bash scripts/fuzz.sh $(ASAN_BUILD)/tests/parity_fuzz_proto 30

# The HTML explorer in headless Chromium, and the report schema checks.
test-browser: build venv
	bash scripts/browser-test.sh $(BUILD)/tools/parity

test: test-unit test-asan test-browser

test-full: test-unit test-asan-full test-browser

# Regenerates tests/asan-subset.txt from edge coverage of the whole corpus, in a
# sanitizer build of its own with coverage guards.
COV_BUILD ?= build-cov
asan-subset: deps
	cmake -S . -B $(COV_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DPARITY_SANITIZE=ON -DPARITY_SANCOV=ON -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON $(CMAKE_FLAGS)
	cmake --build $(COV_BUILD) -j $(JOBS) --target parity parity_corpus_cases
	python3 scripts/asan-subset.py $(COV_BUILD)

# Records how long each test of a second or more took on the last release ctest
# run (the rest start last in any order).
test-costs:
	cd $(BUILD) && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' > Testing/names.txt
	awk 'NR == FNR { want[$$1] = 1; next } /^---/ { print; exit } ($$1 in want) && $$NF >= 1 { print }' \
	  $(BUILD)/Testing/names.txt $(BUILD)/Testing/Temporary/CTestCostData.txt > tests/ctest-costs.txt

fuzz: asan-build
	bash scripts/fuzz.sh $(ASAN_BUILD)/tests/parity_fuzz_proto 300

format:
	find ir frontend reduce verify exec corpus tools tests bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
