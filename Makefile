# Thin wrapper over CMake for the README's two commands.
BUILD ?= build
# bash: the test targets read ctest's status through tee (PIPESTATUS)
SHELL := /bin/bash
CMAKE_FLAGS ?=
JOBS ?= 2

.PHONY: all deps configure build torch run test test-all test-long clean

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

# Two tiers (docs/TESTING.md). `make test`: the fast tier, every test not
# labelled long (budget: 8 minutes of ctest on 2 cores); `make test-all`: every
# test; `make test-long`: the long tier alone (CI runs it after make test).
# Each prints its slowest tests and the budget's verdict (scripts/test_budget.sh).
# CTEST_ARGS: more ctest options, e.g. "-R shm/" or "-L unit".
CTEST_ARGS ?=
CTEST = cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
test: torch
	@$(CTEST) -LE long $(CTEST_ARGS) | tee ctest-fast.log; rc=$${PIPESTATUS[0]}; \
	    $(CURDIR)/scripts/test_budget.sh ctest-fast.log 480; exit $$rc
test-all: torch
	@$(CTEST) $(CTEST_ARGS) | tee ctest-all.log; rc=$${PIPESTATUS[0]}; \
	    $(CURDIR)/scripts/test_budget.sh ctest-all.log; exit $$rc
test-long: torch
	@$(CTEST) -L long $(CTEST_ARGS) | tee ctest-long.log; rc=$${PIPESTATUS[0]}; \
	    $(CURDIR)/scripts/test_budget.sh ctest-long.log; exit $$rc

clean:
	rm -rf $(BUILD)
