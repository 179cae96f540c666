# Quick start: `make demo` (install what is missing, build, run an example end
# to end) and `make test` (the whole suite, plain and sanitized).
BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
CUDA_PATH  ?= /usr/local/cuda
export PATH := $(CUDA_PATH)/bin:$(PATH)
# Developer and CI builds treat warnings as errors (a user's plain cmake
# configure does not: docs/building.md).
CMAKE_FLAGS = -DCUDAToolkit_ROOT=$(CUDA_PATH) -DKFUSE_WERROR=ON

.PHONY: all deps build build-asan demo test test-plain test-asan fuzz clean format

all: build

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(BUILD_ASAN) $(CMAKE_FLAGS) -DKFUSE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD)

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

# The YAML loader's libFuzzer harness: corpus replay, then about a minute of
# fuzzing (clang; FUZZ_SECONDS changes the time).
fuzz:
	bash scripts/fuzz.sh

test: test-plain test-asan fuzz

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz

format:
	clang-format -i include/*.h src/*/*.[ch] tools/*.[ch] tests/*.[ch] examples/*.c
