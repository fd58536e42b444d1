# cubego developer commands. On a fresh machine with Go and Python >= 3.11:
#   make demo   create .venv, install cubego (editable) and run the out-of-core demo
#   make test   go vet, go test -race, and the Python test suite
.DELETE_ON_ERROR:

PYTHON ?= python3
GO ?= go
VENV := .venv
VPY := $(VENV)/bin/python
LIB := python/cubego/libcubego.so
# GOEXPERIMENT=simd compiles the SIMD kernels (simd/archsimd, amd64): every
# build and test below uses them; `test` also runs the kernels without them.
export GOEXPERIMENT := simd
GO_SOURCES := $(shell find . -name '*.go' -not -name '*_test.go' -not -path './.venv/*' -not -path './.git/*' 2>/dev/null)
# Optional build tags, comma-separated: `make lib TAGS=openblas,gcs`.
#   openblas  OpenBLAS (libopenblas-dev) for the BLAS calls (docs/api_status.md)
#   purezstd  the zstd codec through klauspost/compress (pure Go) instead of libzstd, which is
#             the default, compiled from DataDog/zstd's bundled sources (docs/zarr.md)
TAGS ?=
GO_BUILD := CGO_ENABLED=1 $(GO) build -buildmode=c-shared -trimpath -ldflags="-s -w" $(if $(TAGS),-tags '$(TAGS)')

.PHONY: venv lib demo test pytest fuzz-short bench bench-quick clean

## venv: create .venv and install cubego in editable mode with the test extras
venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml _build/backend.py
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --upgrade pip
	$(VPY) -m pip install -e '.[test,diagnostics]'
	touch $@

## lib: rebuild the Go library of the editable install (after editing Go code)
lib:
	$(GO_BUILD) -o $(LIB) ./capi

# The library as a file: rebuilt before tests and the demo when Go sources changed.
$(LIB): $(GO_SOURCES) go.mod go.sum
	$(GO_BUILD) -o $(LIB) ./capi

## demo: process data several times larger than the memory budget, print peak memory
demo: venv $(LIB)
	$(VPY) -m cubego.demo

## test: go vet, go test -race, the Python layer contract (import-linter), then the Python tests
test: venv $(LIB)
	$(GO) vet ./...
	CUBEGO_ZARR_PYTHON=$(abspath $(VPY)) CUBEGO_MOTO_PYTHON=$(abspath $(VPY)) $(GO) test -race ./...
	GOEXPERIMENT= $(GO) test ./ops/...
	$(GO) test -tags purezstd ./zarr/
	@if echo '#include <cblas.h>' | $(CC) -E - >/dev/null 2>&1 && $(CC) -lopenblas -shared -o /dev/null 2>/dev/null; then \
		$(GO) test -tags openblas ./ops/...; \
	else echo "skipping the openblas build tag's tests: no libopenblas-dev"; fi
	$(MAKE) --no-print-directory fuzz-short
	$(VENV)/bin/lint-imports pyproject.toml
	$(VPY) -m pytest -q tests

# fuzz-short: 20000 executions of each fuzz target of the decoders and metadata
# parsers, of the metadata -> plan path, the plan JSON and the C ABI (a count,
# not a time: a time limit can expire mid-execution and fail with "context
# deadline exceeded"); longer on demand: make fuzz-short FUZZTIME=500000x
FUZZ_TARGETS := zarr:FuzzParseArrayMetadata zarr:FuzzParseArrayMetadataV2 zarr:FuzzZstdDecode \
	zarr:FuzzGzipDecode zarr:FuzzZlibDecode zarr:FuzzLZ4Decode zarr:FuzzBytesDecode \
	zarr:FuzzShardIndexDecode zarr/blosc:FuzzDecompress \
	ops:FuzzMetadataToPlan ops:FuzzGridToPlan plan:FuzzPlanJSON capi:FuzzCABI
FUZZTIME ?= 20000x
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg 2>&1) \
			|| { echo "$$out"; echo "fuzz target $$fn failed"; exit 1; }; \
		echo "$$out" | tail -1; \
	done

## pytest: only the Python tests
pytest: venv $(LIB)
	$(VPY) -m pytest -q tests

## dist: the sdist, a wheel built from it (as pip builds one from PyPI), and
## auditwheel's verdict on the wheel's manylinux tag, in dist/ (docs/capi.md)
.PHONY: dist
dist: venv
	rm -rf dist && mkdir -p dist
	$(VPY) -c 'import sys; sys.path.insert(0, "_build"); import backend; print(backend.build_sdist("dist"))'
	CUBEGO_GO_TAGS='$(TAGS)' $(VPY) -m pip wheel --no-deps --no-index --no-cache-dir -w dist dist/cubego-*.tar.gz
	$(VPY) -m auditwheel show dist/cubego-*.whl

## bench-quick / bench: the side-by-side benchmark suite (benchmarks/README.md); the
## peers (Cubed, Dask, zarrs) live in their own venv, installed from the bench extra
PEERS := benchmarks/.venv-peers
$(PEERS)/.installed: pyproject.toml
	$(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --upgrade pip
	$(PEERS)/bin/python -m pip install -e '.[bench]'
	touch $@

bench-quick: venv $(LIB) $(PEERS)/.installed
	$(PEERS)/bin/python benchmarks/run.py --quick

bench: venv $(LIB) $(PEERS)/.installed
	$(PEERS)/bin/python benchmarks/run.py

clean:
	rm -rf $(VENV) build dist tmp .pytest_cache .hypothesis *.egg-info
	rm -f python/cubego/libcubego.so python/cubego/libcubego.h
	find . -name __pycache__ -type d -not -path './.git/*' -prune -exec rm -rf {} +
