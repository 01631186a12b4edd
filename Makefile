# The two commands of the README: `make demo` and `make test`. Both install
# what they need (Debian packages), configure and build.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
ifneq ($(CI),)
  CMAKE_FLAGS += -DPARITY_WERROR=ON
endif

.PHONY: deps build demo test test-unit test-asan test-browser fuzz clean format

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)/tools/parity

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Malformed-input tests and the fuzzer under AddressSanitizer + UBSan, built with clang.
# The MLIR importer is left out here: its tests are not malformed-input tests, and
# compiling MLIR's headers under sanitizers costs more CI time than it finds.
$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DPARITY_SANITIZE=ON -DPARITY_FUZZ=ON \
	  -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON $(CMAKE_FLAGS)

export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1

test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target parity parity_fuzz_proto
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L malformed
	bash scripts/fuzz.sh $(ASAN_BUILD)/tests/parity_fuzz_proto 30

# The HTML explorer in headless Chromium, and the report schema checks.
test-browser: build
	bash scripts/browser-test.sh $(BUILD)/tools/parity

test: test-unit test-asan test-browser

fuzz: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target parity_fuzz_proto
	bash scripts/fuzz.sh $(ASAN_BUILD)/tests/parity_fuzz_proto 300

format:
	find ir frontend reduce verify exec corpus tools tests bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
