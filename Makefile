# vkflow: make demo runs the main demo, make test runs the whole suite.
SHELL := /bin/bash
GO ?= go
export XDG_RUNTIME_DIR ?= $(shell mktemp -d /tmp/vkflow-xdg.XXXXXX)
export CGO_ENABLED := 1

.PHONY: arrayapi deps demo test test-oracle vet check-nodev shaders check-shaders bench examples fuzz soak capi python test-capi test-python venv-install doctest

deps:
	@tools/deps.sh
	@tools/glslang-lib.sh
	@$(GO) mod download

# The array API standard's own test suite against vkflow.array_api (the
# offline bundle in ../shared/arrayapi; skipped with a message without it):
# every failure must be listed in docs/ARRAY_API.md. .ci/run runs it.
arrayapi: python
	@tools/arrayapi.sh

# The main demo: a two-queue rasterize->blend pipeline with bounded
# lookahead, as a graph; prints its schedule, writes rasterblend.png and
# prints passes per second.
demo: deps
	$(GO) run ./examples/rasterblend

examples: deps
	$(GO) run ./examples/devices
	$(GO) run ./examples/multiply
	$(GO) run ./examples/logreg
	$(GO) run ./examples/dag
	$(GO) run ./examples/rasterblend-timeline -reps 1 -out rasterblend-timeline.png
	$(GO) run ./examples/readme
	$(GO) run ./examples/interop

# The suite runs with the Khronos validation layer and synchronization
# validation on (every test Manager enables them; internal/testutil fails a
# test on any warning or error message, leaks included).
#
# go test ./... includes examples/interop's TestInterop: the cross-process
# example (two processes, memory passed as an fd over a Unix socket), small,
# with both processes under validation; make examples runs it full size.
#
# After the Go tests, the C API is built and its real consumers run: a C
# program against Debian's dlpack.h (0.6), and NumPy 1.24 and PyTorch 1.13
# through the Python package (Debian's /usr/bin/python3).
# -timeout: the ops package (every op against references, the gradient
# checks) runs close to go test's default 10 minutes under -race on a
# 2-core machine.
test: deps check-shaders vet check-nodev
	$(GO) test -race -count=1 -timeout=30m ./...
	$(MAKE) --no-print-directory test-oracle
	$(MAKE) --no-print-directory test-capi test-python doctest

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

# The Python tests run against the installed package: `pip install ./python`
# (the in-tree build backend python/_build/vkflow_build.py builds
# libvkflow.so with Go; nothing is downloaded) into the venv build/venv,
# which sees Debian's NumPy and PyTorch. They run from python/tests, where
# the source tree's vkflow is not importable; test_install checks that.
PYTHON ?= /usr/bin/python3
VENV := build/venv
venv-install:
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(VENV)/bin/pip install --no-index --force-reinstall --no-deps --quiet ./python

test-python: venv-install
	cd python/tests && PYTHONPATH=. PYTHONSAFEPATH=1 VKFLOW_TEST_INSTALLED=1 VKFLOW_VALIDATION=1 \
		../../$(VENV)/bin/python -m unittest $(if $(PYTHON_TESTS),$(PYTHON_TESTS),discover -s . -t .) -v

# Every fenced code block of README.md, docs/*.md and examples/*/README.md
# runs (Python against the installed package, Go, C against libvkflow.so),
# or carries a marker with its reason (tools/rundocs.py); first the
# mutation check: broken blocks in tools/testdata/rundocs must fail.
doctest: capi venv-install
	GO=$(GO) $(PYTHON) tools/rundocs.py --python $(VENV)/bin/python --libdir build --self-test
	GO=$(GO) $(PYTHON) tools/rundocs.py --python $(VENV)/bin/python --libdir build

vet:
	$(GO) vet ./...

# The build reads no system Vulkan or shaderc header (vk vendors the Khronos
# headers in vk/include), so go build and go get need only a C compiler.
check-nodev:
	@GO=$(GO) tools/check-nodev.sh

shaders:
	tools/glslc.sh

check-shaders:
	@tools/glslc.sh --check

# Long fuzzing, outside make test: each target runs a fixed number of
# executions (FUZZ_EXECS) on FUZZ_PARALLEL workers; go test prints the
# counts. Figures from a run are in docs/RELIABILITY.md.
FUZZ_EXECS ?= 1000000
FUZZ_PARALLEL ?= 1
FUZZ = $(GO) test -run='^$$' -timeout=0 -fuzztime=$(FUZZ_EXECS)x -parallel=$(FUZZ_PARALLEL)

fuzz: deps
	$(FUZZ) -fuzz='^FuzzCopyRegions$$' ./sequence/
	$(FUZZ) -fuzz='^FuzzReflect$$' ./internal/spirv/
	$(FUZZ) -fuzz='^FuzzImport$$' ./dlpack/
	$(FUZZ) -fuzz='^FuzzUnmarshalHandle$$' ./interop/
	$(FUZZ) -fuzz='^FuzzRecvHandle$$' ./interop/
	$(FUZZ) -fuzz='^FuzzMemoryHandleStruct$$' ./capi/

# The full soak (sequence/soak_test.go with -tags soak): 8 goroutines,
# 100,000 random submits on 2 queues, bit-exact against a CPU model, then
# Close with work in flight. make test runs the same test at 2,000 submits.
# Then graph/property_test.go with -tags soak: 3,000 random graphs, each
# compiled 9 ways on 1 to 3 logical queues, bit-exact against a CPU model,
# and the mutation score over 1,000 graphs (make test: 60 graphs, 4 ways
# each, and 20). Then close_order_test.go with -tags soak: 1,000 rounds of
# random held DAGs on 2 and 3 logical queues with a random subset of their
# objects closed before the release (make test: 50). Then the eager streams
# with inputs closed on 6 goroutines (60,000 calls; make test: 6,000) and
# from 6 Python threads (36,000 calls; test_eager.TestEagerSoak). Then
# 200,000 concurrent imports of one allocation's fds on 16 goroutines
# (interop.TestConcurrentImports; make test: 8,000).
soak: deps
	$(GO) test -race -tags soak -count=1 -timeout=60m -run='^TestSoak$$' -v ./sequence/
	$(GO) test -race -tags soak -count=1 -timeout=60m -run='^TestGraphProperty(MutationScore)?$$' -v ./graph/
	$(GO) test -race -tags soak -count=1 -timeout=60m -run='^TestCloseOrderProperty$$' -v .
	$(GO) test -race -tags soak -count=1 -timeout=60m -run='^TestStreamThreadsClose$$' -v ./ops/internal/opcore/
	VKFLOW_INTEROP_STRESS=200000 $(GO) test -race -count=1 -timeout=60m -run='^TestConcurrentImports$$' -v ./interop/
	VKFLOW_FAILURE_ROUNDS=500 $(GO) test -race -count=1 -timeout=60m -run='^TestFailureRandomDAGs$$' ./timeline/
	$(MAKE) --no-print-directory test-python PYTHON_TESTS=test_eager.TestEagerSoak VKFLOW_SOAK=1

bench: deps
	bench/run.sh
	bench/ops.sh
	bench/sort.sh
	bench/interop.sh
	bench/eager.sh
	bench/dask.sh
	bench/grad.sh
	bench/render.sh
	bench/hostpath.sh
	bench/placement.sh
	$(GO) test ./bench -run '^$$' -bench '^BenchmarkSched$$' -benchtime 3x -count 3
	$(GO) test ./dlpack -run '^$$' -bench . -benchtime 200ms -count 3
	$(GO) test ./tensor -run '^$$' -bench NewCloseZeroed -benchtime 5000x -count 3
	$(GO) test ./graph -run '^$$' -bench 'Compile' -benchtime 3x -count 3
