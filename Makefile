# vkflow: make demo runs the main demo, make test runs the whole suite.
SHELL := /bin/bash
GO ?= go
export XDG_RUNTIME_DIR ?= $(shell mktemp -d /tmp/vkflow-xdg.XXXXXX)
export CGO_ENABLED := 1

.PHONY: deps demo test test-oracle vet shaders check-shaders bench examples fuzz capi python test-capi test-python

deps:
	@tools/deps.sh
	@$(GO) mod download

# The main demo: a two-queue rasterize->blend pipeline with bounded
# lookahead; writes rasterblend.png and prints passes per second.
demo: deps
	$(GO) run ./examples/rasterblend

examples: deps
	$(GO) run ./examples/devices
	$(GO) run ./examples/multiply
	$(GO) run ./examples/logreg
	$(GO) run ./examples/dag
	$(GO) run ./examples/readme

# The suite runs with the Khronos validation layer and synchronization
# validation on (every test Manager enables them; internal/testutil fails a
# test on any warning or error message, leaks included).
#
# After the Go tests, the C API is built and its real consumers run: a C
# program against Debian's dlpack.h (0.6), and NumPy 1.24 and PyTorch 1.13
# through the Python package (Debian's /usr/bin/python3).
test: deps check-shaders vet
	$(GO) test -race -count=1 ./...
	$(MAKE) --no-print-directory test-oracle
	$(MAKE) --no-print-directory test-capi test-python

# The mutation check of the test oracle: the sequence, timeline and dlpack
# tests built with the test-only tag vkflow_nobarriers (no inferred
# barriers) must fail with SYNC-HAZARD reports from the validation layer.
test-oracle:
	GO=$(GO) tools/test-oracle.sh

# libvkflow.so and its headers, in build/.
capi:
	$(GO) build -buildmode=c-shared -o build/libvkflow.so ./capi
	cp capi/vkflow.h dlpack/vkflow_vulkan.h build/

# The Python package, with libvkflow.so inside it.
python: capi
	cp build/libvkflow.so python/vkflow/libvkflow.so

test-capi: capi
	capi/consumer/build_and_run.sh build

PYTHON ?= /usr/bin/python3
test-python: python
	cd python && $(PYTHON) -m unittest discover -s tests -v

vet:
	$(GO) vet ./...

shaders:
	tools/glslc.sh

check-shaders:
	@tools/glslc.sh --check

fuzz: deps
	$(GO) test -run='^$$' -fuzz=FuzzReflect -fuzztime=30s ./internal/spirv/
	$(GO) test -run='^$$' -fuzz=FuzzImport -fuzztime=60s ./dlpack/

bench: deps
	bench/run.sh
	$(GO) test ./dlpack -run '^$$' -bench . -benchtime 200ms -count 3
