# vkflow: make demo runs the main demo, make test runs the whole suite.
SHELL := /bin/bash
GO ?= go
export XDG_RUNTIME_DIR ?= $(shell mktemp -d /tmp/vkflow-xdg.XXXXXX)
export CGO_ENABLED := 1

.PHONY: deps demo test vet shaders check-shaders bench examples fuzz

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
test: deps check-shaders vet
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

shaders:
	tools/glslc.sh

check-shaders:
	@tools/glslc.sh --check

fuzz: deps
	$(GO) test -run='^$$' -fuzz=FuzzReflect -fuzztime=30s ./internal/spirv/

bench: deps
	bench/run.sh
