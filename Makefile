# One entry point. `make serve` and `make test` set up everything they need on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SITE_STAMP := $(VENV)/.site-installed
TEST_STAMP := $(VENV)/.test-installed
BYTECODE_STAMP := $(VENV)/.bytecode-compiled
NODE_TOOLS := node_modules/.package-lock.json
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test test-gpu gpu-env gpu-run add-records versions snippets save-outputs bench-build lock clean quality

# Not strict while serving: a failing snippet shows an error box in its page and the server keeps
# running (strict mode would stop it). `make build` and CI stay strict. --dirty: after the first
# build, a rebuild builds the pages an edit touches (pipeline/pages/changed_pages.py). The
# server does not wait for the packages' bytecode (BYTECODE_STAMP): it is compiled beside the
# first build, at the lowest priority, when it is missing.
serve: $(SITE_STAMP) $(NODE_TOOLS)  ## serve at http://127.0.0.1:8000 with live reload
	@[ $(BYTECODE_STAMP) -nt $(SITE_STAMP) ] || (nice -n 19 sh -c '$(COMPILE_BYTECODE)' &)
	$(BIN)/mkdocs serve --no-strict --dirty --dev-addr 127.0.0.1:8000

build: $(SITE_STAMP) $(BYTECODE_STAMP) $(NODE_TOOLS)  ## strict build into site/
	$(BIN)/mkdocs build --strict

# Test modules run in parallel, one worker more than the cores, up to 4 (pytest-xdist; a module
# stays on one worker, so its fixtures run once; the slowest start first, tests/conftest.py
# SLOW_FIRST): the tests wait on browsers and subprocesses as well as they compute, and with one
# worker a core the cores stood idle part of the run (2 cores: 773 s with 2 workers, 698 s with
# 3, 801 s with 4); the snippets run first, alone, then the site builds beside tests that do not
# read it (tests/conftest.py).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); n=$$((n + 1)); [ $$n -gt 4 ] && n=4; echo $$n)
test: $(SITE_STAMP) $(TEST_STAMP) $(BYTECODE_STAMP) $(NODE_TOOLS)  ## the whole CPU test suite
	$(BIN)/python -m pytest -m "not gpu" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test-gpu: $(SITE_STAMP) $(TEST_STAMP) $(BYTECODE_STAMP) $(NODE_TOOLS)  ## the tests that need a GPU
	$(BIN)/python -m pytest -m gpu

snippets: $(SITE_STAMP) $(BYTECODE_STAMP)  ## run stale snippets and print a summary
	$(BIN)/python -m pipeline.runner

# Commit results/outputs/ after it: a fresh clone (CI) then runs only the snippets that changed
# since (pipeline/records/outputs.py).
save-outputs: $(SITE_STAMP) $(BYTECODE_STAMP)  ## run stale snippets, then save their outputs to results/outputs/
	$(BIN)/python -m pipeline.runner
	$(BIN)/python -m pipeline.records.outputs
	$(BIN)/python -m pipeline.claims.keras_migration --save

bench-build: $(SITE_STAMP) $(BYTECODE_STAMP) $(NODE_TOOLS)  ## cold/warm build times and re-execution count
	$(BIN)/python benchmarks/build_speed.py

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip==25.3"

$(BIN)/uv: | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet "uv==0.13.9"

# uv installs the pinned requirements: on the 2-core machine about 55 s instead of pip's 130 s (it
# downloads and unpacks in parallel). The package sources are the ones the requirements files
# name, every one asked for every package, as pip does (--index-strategy).
UV_INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python $(UV_COMPILE) \
	--index-strategy unsafe-best-match
# Bytecode is compiled at install (uv's --compile-bytecode, BYTECODE_STAMP then written with the
# install's stamp), as every target that runs snippets needs: snippets run with
# PYTHONDONTWRITEBYTECODE=1 and would otherwise compile TensorFlow's modules each time. `make
# serve` installs without it (UV_COMPILE empty for its prerequisites) and compiles behind its
# first build (COMPILE_BYTECODE): the server answers about 20 s sooner on a fresh clone. Not
# every target does so: compileall on its own takes about 10 s more than uv's compile at install.
# compileall exits 1 for a file written for a newer Python (PyTorch's py312_intrinsics.py),
# which uv skips too: only its end counts.
UV_COMPILE = --compile-bytecode
serve: UV_COMPILE =
COMPILE_BYTECODE = $(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null 2>&1; touch $(BYTECODE_STAMP)
# nvidia-cudnn-cu12 (ours) and nvidia-cudnn-cu13 (PyTorch's pin) both write
# site-packages/nvidia/cudnn, and the wheel written last owns those files. uv writes wheels in
# parallel, so which one won changed from one fresh clone to the next. The cu12 wheel is written
# again on its own, last: its headers and libraries are the ones on disk, on every machine
# (tests/content/test_troubleshooting.py checks that the page names the owner). Uninstalled,
# then installed from uv's cache: --reinstall-package would unpack the 700 MB wheel again (6-9 s).
CUDNN12_PIN = $(shell grep '^nvidia-cudnn-cu12==' requirements.txt)
$(SITE_STAMP): requirements.txt | $(BIN)/uv
	$(UV_INSTALL) -r requirements.txt
	$(BIN)/uv pip uninstall --quiet --python $(BIN)/python nvidia-cudnn-cu12
	$(UV_INSTALL) --no-deps "$(CUDNN12_PIN)"
	touch $@
	$(if $(UV_COMPILE),touch $(BYTECODE_STAMP))

$(TEST_STAMP): requirements-test.txt $(SITE_STAMP)
	$(UV_INSTALL) -r requirements-test.txt
	touch $@

# After the test packages when a target wants both (make builds prerequisites in order).
$(BYTECODE_STAMP): $(SITE_STAMP)
	$(COMPILE_BYTECODE)

# The JavaScript libraries the build runs in Node (pipeline/pages/static_render.mjs: diagrams, math, CSS),
# from the npm registry at the versions in package-lock.json. npm ci rewrites the stamp file.
$(NODE_TOOLS): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# Lighthouse on every page of site/, both languages, median of 3 runs a page (about 15 minutes):
# quality/lighthouse_report.py.
# Builds site/ first when it is missing or older than its sources. Lighthouse has its own
# package.json under quality/, installed on first use: the root one stays small.
QUALITY_TOOLS := quality/node_modules/.package-lock.json
quality: $(SITE_STAMP) $(NODE_TOOLS) $(QUALITY_TOOLS)  ## Lighthouse scores and page weight of every page
	@if [ ! -f site/index.html ] || [ -n "$$(find mkdocs.yml docs overrides snippets pipeline results \
	    -newer site/index.html -type f -print -quit)" ]; then $(MAKE) --no-print-directory build; fi
	CHROME_PATH=$${CHROME_PATH:-/usr/bin/chromium} $(BIN)/python quality/lighthouse_report.py

$(QUALITY_TOOLS): quality/package.json quality/package-lock.json
	npm ci --prefix quality --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# GPU machines: the same pins, but TensorFlow's CUDA packages and JAX's CUDA plugin instead of
# the CPU wheels and our own CUDA 12 nvidia-* pins (pip resolves those for the GPU stack).
# PyTorch stays as pinned: torch==2.14.1 from PyPI is already the CUDA 13 build, and its CUDA 13
# wheels (nvidia-*-cu13, nvidia-cublas, ..., cuda-toolkit) keep their pins. nvidia-cudnn-cu12
# (TensorFlow, JAX) and nvidia-cudnn-cu13 (PyTorch) both write site-packages/nvidia/cudnn: the
# wheel pip installs last owns those files (a GPU run's provenance records which cuDNN loaded).
GPU_STAMP := $(VENV)/.gpu-installed
JAX_VERSION = $(shell sed -n 's/^jax==//p' requirements.txt)
CPU_ONLY_PINS := '^(jax|jaxlib|nvidia-[a-z-]+-cu12|nvidia-cudnn-frontend)=='
gpu-env: $(GPU_STAMP)  ## .venv for a GPU machine (needs a package registry)

$(GPU_STAMP): requirements.txt requirements-test.txt | $(VENV)/bin/python
	grep -Ev $(CPU_ONLY_PINS) requirements.txt > $(VENV)/requirements-gpu.txt
	$(BIN)/pip install --quiet -r $(VENV)/requirements-gpu.txt "tensorflow[and-cuda]==2.21.0" \
	  "jax[cuda12]==$(JAX_VERSION)" nvidia-cudnn-frontend nvidia-cuda-nvcc-cu12
	grep -Ev $(CPU_ONLY_PINS) requirements-test.txt > $(VENV)/requirements-test-gpu.txt
	$(BIN)/pip install --quiet -r $(VENV)/requirements-test-gpu.txt
	touch $(SITE_STAMP) $(TEST_STAMP) $@

# A GPU run (pipeline/records/gpu_run.py): every snippet and every GPU test on this machine's GPU, with
# the frameworks it has; records under results/<machine>/ to commit. `make gpu-run PYTHON=python3`
# runs with that Python as it is: no virtualenv, nothing installed, no network. Without PYTHON=
# it first sets up .venv as `make gpu-env` does. Options: GPU_RUN_ARGS="--machine NAME --only ...".
GPU_RUN_ARGS ?=
ifeq ($(origin PYTHON),command line)
gpu-run:  ## every snippet and GPU test on this GPU, recorded under results/
	$(PYTHON) -m pipeline.gpu_run $(GPU_RUN_ARGS)
else
gpu-run: $(GPU_STAMP)
	$(BIN)/python -m pipeline.gpu_run $(GPU_RUN_ARGS)
endif

# Someone's records (pipeline/records/add_records.py): FILE is a .tar.gz of one machine's folder as
# `make gpu-run` leaves it (tar -czf M.tar.gz -C results M), checked before anything lands under
# results/. A bad archive: one line saying what is wrong, exit code 2, results/ unchanged.
ifeq ($(strip $(FILE)),)
add-records:  ## check an archive of GPU records (FILE=...) and add it under results/
	@echo "usage: make add-records FILE=ARCHIVE.tar.gz (one machine's folder of records)" >&2; exit 2
else
add-records: $(SITE_STAMP)
	$(BIN)/python -m pipeline.add_records $(FILE)
endif

# The version matrix (pipeline/records/versions.py): the criteria rules on every Keras 3 release with
# each backend, tf-keras 2.14 to 2.21 and PyTorch 2.13, 2.14.1 and 2.15.0, each in its own environment
# under .cache/versions/ (installed from the package registry: about 25 GB and 40 minutes the
# first time, minutes after), recorded under results/versions/. Resumable; CPU only (a GPU is
# pretended). VERSIONS_ARGS="--only keras-3.0.0-tensorflow" runs one cell, "--list" lists them.
versions: $(SITE_STAMP)  ## the criteria on every Keras 3, tf-keras and PyTorch release, recorded under results/versions/
	$(BIN)/python -m pipeline.versions $(VERSIONS_ARGS)

lock: | $(VENV)/bin/python  ## re-pin requirements*.txt from requirements*.in
	$(BIN)/pip install --quiet pip-tools
	$(BIN)/pip-compile -q --strip-extras --no-header --allow-unsafe -o requirements.txt requirements.in
	$(BIN)/pip-compile -q --strip-extras --no-header --allow-unsafe -o requirements-test.txt requirements-test.in

clean:
	rm -rf site .cache
