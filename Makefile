# attnscope: `make run` and `make test` each install what is missing, configure and build first.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test sass clean format

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

# Without a usable GPU the GPU tests are summarised in one line with the reason (scripts/run-tests.sh).
test: build
	./scripts/run-tests.sh $(BUILD) $(JOBS)

# The SASS of a kernel family: make sass KERNEL=fa2.mma (an id, an id prefix or a kernels/ folder).
sass:
	./scripts/sass.sh $(BUILD) $(KERNEL)

format:
	find app kernels profiling reports tests -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
