# The two commands of the README:
#   make test   install missing Debian packages, configure, build everything, run every test,
#               then cross-build the aarch64 (NEON) tests and run them under qemu-aarch64; it
#               downloads onnx's wheel first, for the stored ONNX tests, and makes the venvs of the
#               JAX and ONNX Runtime checks (best effort)
#   make demo   the same set-up, then build and run the demo (examples/personalize/run.sh)
#   make fuzz   libFuzzer on every parser under ASan + UBSan (scripts/fuzz.sh; FUZZ_SECONDS per target)
# Variables: BUILD_DIR (default build), JOBS (default: all cores), CMAKE_ARGS (first configure),
# AARCH64 (default 1; 0 skips the aarch64 stage, which says so).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
AARCH64 ?= 1

# Compiler cache shared across checkouts of this repository (CI clones into a new folder).
export CCACHE_BASEDIR := $(CURDIR)

.PHONY: test demo fuzz build configure deps clean

test: build
	@bash scripts/fetch-onnx-test-data.sh $(BUILD_DIR)/onnx-test-data
	@bash scripts/prepare-test-venvs.sh $(BUILD_DIR)
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
	@if [ "$(AARCH64)" = 1 ]; then \
	  BUILD_DIR=$(BUILD_DIR)-aarch64 JOBS=$(JOBS) bash scripts/test-aarch64.sh; \
	else \
	  echo "aarch64 (NEON) tests SKIPPED: AARCH64=$(AARCH64); run them with 'bash scripts/test-aarch64.sh'"; \
	fi

demo: configure
	BUILD_DIR=$(BUILD_DIR) bash examples/personalize/run.sh

fuzz: deps
	bash scripts/fuzz.sh

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Configures once; later builds re-run CMake by themselves when a CMakeLists.txt changes.
configure: deps
	@if [ ! -f $(BUILD_DIR)/CMakeCache.txt ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DPOCK_USE_CCACHE=ON $(CMAKE_ARGS); \
	fi

deps:
	@bash scripts/install-deps.sh

clean:
	rm -rf $(BUILD_DIR)
