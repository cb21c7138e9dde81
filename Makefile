# attnscope: `make run` and `make test` each install what is missing, configure and build first.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test clean format

all: build

deps:
	./scripts/setup-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The GUI where a display exists (once built), else the default sweep headless; the CPU backend
# where no GPU exists. Results land in runs/<run-id>/.
run: build
	./$(BUILD)/attnscope

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

format:
	find app kernels profiling reports tests -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
