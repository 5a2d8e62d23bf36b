# Thin wrapper over CMake for the README's two commands.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= 2

.PHONY: all deps build run test clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Until `collbench suite` exists: the default all-reduce sweep, results kept
# (CSV appended, JSON merged) under results/.
run: build
	@mkdir -p results
	$(BUILD)/collbench allreduce --csv results/allreduce.csv -J results/allreduce.json
	@echo "results: results/allreduce.csv results/allreduce.json"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
