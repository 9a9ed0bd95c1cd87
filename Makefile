# Two commands on a fresh Linux machine with Python 3.11:
#   make run   – create .venv, install pinned requirements, start the app on the bundled data
#   make test  – install the test requirements too, run the linter, then all three test layers (engine, pages,
#                browser) with the engine's doctests and branch coverage (floor COV_FLOOR, in total and per engine
#                module), then the engine's
#                property tests once more with a fresh random Hypothesis seed (printed, for replay)
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
JOBS ?= 2
# Reference data for the optional paper-replication test (seed 000 §5): shared/ sits beside a clone.
ACS_NATIONAL2019_CSV ?= $(abspath $(wildcard ../shared/data/national2019.csv))
export ACS_NATIONAL2019_CSV

# Branch coverage of engine/dpdash/ (the package dpdash) that the full suite must reach (issue 13 asks 90; measured 92% on 2026-11-24).
COV_FLOOR ?= 90
# One fresh seed per `make` run for the random Hypothesis pass; pass HYPOTHESIS_SEED=<n> to replay one. Under CI
# a fixed, verified seed (as for the browser walk): a landing is judged on a reproducible run, and each local
# `make test` keeps drawing new ones (seed 330713711 found the PP oracle's solver failure fixed on 2026-11-28).
ifndef HYPOTHESIS_SEED
ifdef CI
HYPOTHESIS_SEED := 330713711
else
HYPOTHESIS_SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
endif

.PHONY: run test lint test-engine test-pages test-e2e test-hypothesis-random bench bench-targets clean mutate

$(BIN)/python:
	@$(PYTHON) -c 'import sys; v = sys.version_info[:2]; print(f"Using Python {v[0]}.{v[1]}"); \
	  (v == (3, 11)) or print("warning: the pinned requirements target Python 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The engine is the package `dpdash` in engine/dpdash/ (engine/pyproject.toml), installed editable so the app, tests,
# benches and generated scripts all import it by that name; its dependencies come from the pinned requirements,
# hence --no-deps.
$(VENV)/.stamp-runtime: requirements.txt engine/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e ./engine
	touch $@

$(VENV)/.stamp-dev: requirements.txt requirements-dev.txt requirements-oracle.txt engine/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	# test oracles whose metadata conflicts with the pins (see the file): pinned, without dependency resolution
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-oracle.txt
	$(BIN)/python -m pip install --quiet --no-deps -e ./engine
	touch $@ $(VENV)/.stamp-runtime

run: $(VENV)/.stamp-runtime
	$(BIN)/python -m streamlit run app.py --server.port $(PORT)

test: lint
	COVERAGE_FILE=$(VENV)/.coverage $(BIN)/python -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder --durations=60 --junitxml=$(VENV)/junit.xml \
	  --cov=dpdash --cov-branch --cov-report=term --cov-fail-under=$(COV_FLOOR)
	$(BIN)/python tests/coverage_per_module.py --data $(VENV)/.coverage --floor $(COV_FLOOR)
	@$(MAKE) --no-print-directory test-hypothesis-random HYPOTHESIS_SEED=$(HYPOTHESIS_SEED)

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .

# The engine's property tests (the `hypothesis` marker) with a random seed instead of the fixed CI profile.
test-hypothesis-random: $(VENV)/.stamp-dev
	@echo "Hypothesis random pass: seed $(HYPOTHESIS_SEED) (replay: make test-hypothesis-random HYPOTHESIS_SEED=$(HYPOTHESIS_SEED))"
	$(BIN)/python -m pytest -n $(JOBS) -m hypothesis --hypothesis-profile=ci-random \
	  --hypothesis-seed=$(HYPOTHESIS_SEED) tests/engine tests/ui $(wildcard tests/test_*.py)

test-engine: $(VENV)/.stamp-dev
	$(BIN)/python -m pytest -n $(JOBS) --ignore=tests/pages --ignore=tests/e2e

test-pages: $(VENV)/.stamp-dev
	$(BIN)/python -m pytest -n $(JOBS) tests/pages

test-e2e: $(VENV)/.stamp-dev
	$(BIN)/python -m pytest tests/e2e

bench: $(VENV)/.stamp-dev
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# Issue 23 targets beside their measured values and same-run baselines (numbers in README "Targets").
# sortition-algorithms runs in its own venv: its attrs >= 25 conflicts with dp-accounting's attrs < 24.
ORACLE_VENV := bench/_scratch/venv-oracle
$(ORACLE_VENV)/.stamp: bench/requirements-oracle.txt
	$(PYTHON) -m venv $(ORACLE_VENV)
	$(ORACLE_VENV)/bin/python -m pip install --quiet -r bench/requirements-oracle.txt
	touch $@

bench-targets: $(VENV)/.stamp-dev $(ORACLE_VENV)/.stamp
	$(BIN)/python bench/bench_targets.py

# Mutation testing with mutmut (issue 36 item 1), module by module against each module's own tests; hours, so not
# part of `make test`. MODULES="conversions mechanisms" runs a subset; the table goes to bench/results/mutation.md.
mutate: $(VENV)/.stamp-dev
	$(BIN)/python bench/mutation_run.py $(MODULES) --children $(JOBS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .coverage

# The seeded browser random walk (tests/e2e/test_random_walk.py, issue 22 item 3): `make test` walks 40 steps per
# page, printed first; `make walk-long` walks WALK_STEPS (300) per page. Replay either with WALK_SEED=<the seed>.
# Locally each `make` run draws a fresh seed (exploration); under CI the seed is fixed, like Hypothesis's derandomised
# ci profile, so a landing is judged on a reproducible walk (458713734: every page walked clean, 2026-11-28).
ifndef WALK_SEED
ifdef CI
WALK_SEED := 458713734
else
WALK_SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
endif
export DPDASH_WALK_SEED := $(WALK_SEED)
WALK_STEPS ?= 300
.PHONY: walk-seed walk-long
test: walk-seed
walk-seed:
	@echo "Browser random walk: seed $(WALK_SEED) (replay: make walk-long WALK_SEED=$(WALK_SEED) WALK_STEPS=40)"

walk-long: $(VENV)/.stamp-dev walk-seed
	DPDASH_WALK_STEPS=$(WALK_STEPS) $(BIN)/python -m pytest -s -p no:cacheprovider --timeout=0 --durations=0 \
	  tests/e2e/test_random_walk.py
