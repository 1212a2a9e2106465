# One command each: `make run` runs the main job, `make test` runs every test.
# Both install missing Debian packages, configure and build first.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: deps configure build run test bench fuzz clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	@test -f $(BUILD_DIR)/build.ninja || cmake --preset $(PRESET)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sluice
	$(BUILD_DIR)/src/cli/sluice run -p 2 examples/flights.sql

test: build
	ctest --test-dir $(BUILD_DIR) -j $(JOBS) --output-on-failure
	bash fuzz/run.sh

bench: build
	$(BUILD_DIR)/bench/sluice_bench
	$(BUILD_DIR)/bench/sluice_chaining_bench
	$(BUILD_DIR)/bench/sluice_debloat_bench
	$(BUILD_DIR)/bench/sluice_exchange_bench
	$(BUILD_DIR)/bench/sluice_kafka_bench
	$(BUILD_DIR)/bench/sluice_datastream_bench
	$(BUILD_DIR)/bench/sluice_backlog_bench
	bash bench/checkpoint_bench.sh $(BUILD_DIR)/src/cli/sluice

clean:
	rm -rf build
