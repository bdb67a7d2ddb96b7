# Robota for Python — developer commands. `make demo` and `make test` need only Python 3.11+ and
# make: they create .venv and install the pinned toolchain themselves.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Re-install when the project metadata or the pinned toolchain changes.
STAMP  := $(VENV)/.robota-installed
PIP_VERSION := 26.3

.DEFAULT_GOAL := help
.PHONY: help venv demo test check lint fmt fmt-check types arch bench bench-guard mutate clean

help:
	@echo "make demo       run the offline demo (creates .venv on first use)"
	@echo "make test       run the test suite"
	@echo "make check      lint + format check + mypy --strict + import-linter + tests (what CI runs)"
	@echo "make bench      run the benchmarks"
	@echo "make bench-guard  the CI speed guard (per-run cost over the tasks floor vs the baseline)"
	@echo "make mutate     mutation-test the permission gate (slow, advisory)"
	@echo "make lint       ruff lint"
	@echo "make fmt        format the code with ruff"
	@echo "make clean      remove .venv and caches"

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Robota needs Python 3.11 or newer; found " + sys.version.split()[0] + ". Run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "pip==$(PIP_VERSION)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e . --group dev
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/robota demo

test: $(STAMP)
	$(BIN)/pytest --cov --cov-report=term

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
