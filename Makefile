# Thin wrapper over CMake for the README's two commands.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= 2

.PHONY: all deps configure build torch run test clean

all: build

deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The torch.distributed backend (docs/TORCH.md), when CMake found torch.
# grep reads the whole list (no -q): quitting at the first match would break
# cmake's pipe, and cmake would print "Broken pipe" as if the build failed.
torch: build
	@if cmake --build $(BUILD) --target help | grep collbench_torch >/dev/null; then \
	    cmake --build $(BUILD) -j $(JOBS) --target collbench_torch; \
	else echo "torch backend not configured (see cmake's message; docs/TORCH.md)"; fi

# The main job: `collbench suite` (every backend x 2,4,6 ranks x 1M..256M, the
# training benchmark, the report) into results/<UTC time>/, printed at the end.
# SUITE_ARGS=--quick for the 30-second version. It builds only collbench (the
# suite runs nothing else), not the tests and benchmarks `make build` adds.
SUITE_ARGS ?=
run: configure
	@cmake --build $(BUILD) -j $(JOBS) --target collbench
	$(BUILD)/collbench suite $(SUITE_ARGS)

# CTEST_ARGS: e.g. "-LE soak" (CI's sanitizer builds skip the minute-long runs)
CTEST_ARGS ?=
test: torch
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

clean:
	rm -rf $(BUILD)
