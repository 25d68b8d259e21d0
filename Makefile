# deskmate — two commands: `make run` (install + serve with the sample KB) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Extra pip arguments for the torch install, e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
# on a machine where PyPI's torch would be the multi-GB CUDA build.
TORCH_PIP_ARGS ?=
# `make run` listens where deskmate itself would: HOST/PORT, else DESKMATE_HOST/DESKMATE_PORT, else 127.0.0.1:8000
HOST ?= $(or $(DESKMATE_HOST),127.0.0.1)
PORT ?= $(or $(DESKMATE_PORT),8000)
PYTEST_ARGS ?=
# `make test` runs in this many pytest-xdist worker processes, a test file per worker at a time (its module
# fixtures, servers and models are built once); 3 beat 2 and 1 on a 2-core machine (docs/testing.md)
TEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile

.PHONY: install run test test-fast lint typecheck format bench docs docs-serve clean

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned to the CPU build, so nothing later resolves a CUDA wheel
	$(BIN)/pip install --quiet torch==2.13.0 $(TORCH_PIP_ARGS)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	# the ONNX encoder exported once, at install, into this machine's cache (a data dir copies it at first start)
	$(BIN)/python -c "import app; from app.adapters.encoders import build_embedder; build_embedder('onnx')"
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/deskmate serve --host $(HOST) --port $(PORT)

test: install
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

# ruff's lint and format check (settings in pyproject.toml); `make format` rewrites the files instead
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy over app/, core/, graphs/ and nodes/ (settings in pyproject.toml)
typecheck: install
	$(BIN)/mypy

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test-fast: install
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_PARALLEL) $(PYTEST_ARGS)

# The documentation site (docs/, mkdocs.yml) in build/site: the pages generated from code first (configuration
# reference, OpenAPI, graph drawings), then a strict build, where a broken link or a missing page fails. Offline.
docs: install
	$(BIN)/python tools/gen_docs.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "docs: open build/site/index.html (or: make docs-serve)"

docs-serve: docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

bench: install
	$(BIN)/python bench/indexing.py
	$(BIN)/python bench/chat_latency.py

clean:
	rm -rf $(VENV) data .pytest_cache build/site docs/reference docs/images/graph-*.svg
