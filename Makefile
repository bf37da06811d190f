# clusterscout — the two commands that matter: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
RUN_STAMP := $(VENV)/.run-installed
DEV_STAMP := $(VENV)/.dev-installed
# SkyPilot and dstack pin versions of our own dependencies, so the tests load launch files with
# them from a separate virtualenv (tests/launch/test_tools.py).
TOOLS := .venv-tools
TOOLS_STAMP := $(TOOLS)/.installed

.PHONY: run test test-quick check lint types fmt build-db i18n i18n-extract i18n-catalog schemas chromium axe wrk bench clean help

help:
	@echo "make run      build the database from data/ and serve http://$(HOST):$(PORT)"
	@echo "make test     install what the tests need and run lint, types and the whole suite"
	@echo "make test-quick  the pure and application layers' tests only (under a minute)"
	@echo "make check    lint + types + tests (alias of test)"
	@echo "make build-db rebuild the SQLite database from data/"
	@echo "make bench    load-test the web app on loopback and print figures"

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q -e .
	@touch $@

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@ $(RUN_STAMP)

$(TOOLS_STAMP): tests/tools/requirements.txt
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q -r tests/tools/requirements.txt
	@touch $@

i18n: $(RUN_STAMP)
	$(BIN)/python -m clusterscout.web.i18n compile

build-db: $(RUN_STAMP)
	$(BIN)/clusterscout build-db

run: $(RUN_STAMP) i18n build-db
	$(BIN)/clusterscout serve --host $(HOST) --port $(PORT)

# Browser tests drive Debian's Chromium; install it when missing and we are root.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = "0" ]; then \
	    echo "installing Debian chromium for the browser tests"; \
	    (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "warning: /usr/bin/chromium missing and not root; browser tests will be skipped"; \
	  fi; \
	fi

# axe-core for the accessibility browser tests, from npm (pinned by package-lock.json); the
# tests load it from disk, so nothing is fetched at test time.
AXE := tests/e2e/axe/node_modules/axe-core/axe.min.js
$(AXE): tests/e2e/axe/package.json tests/e2e/axe/package-lock.json
	@if ! command -v npm >/dev/null && [ "$$(id -u)" = "0" ]; then \
	  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	fi
	@if command -v npm >/dev/null; then npm ci --prefix tests/e2e/axe --no-audit --no-fund --silent; \
	else echo "warning: npm missing and not root; the accessibility browser tests will be skipped"; fi
axe: $(AXE)

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests scripts bench
	$(BIN)/ruff format --check src tests scripts bench

types: $(DEV_STAMP)
	$(BIN)/mypy

fmt: $(DEV_STAMP)
	$(BIN)/ruff format src tests scripts bench
	$(BIN)/ruff check --fix src tests scripts bench

schemas: $(DEV_STAMP)
	$(BIN)/python scripts/schemas.py

# Catalog free text (data/): regenerate data/locale/catalog.pot and merge it into each .po.
i18n-catalog: $(RUN_STAMP)
	$(BIN)/clusterscout catalog-texts data

i18n-extract: $(DEV_STAMP)
	$(BIN)/python -m clusterscout.web.i18n extract

test: $(DEV_STAMP) $(TOOLS_STAMP) chromium axe i18n lint types
	$(BIN)/clusterscout validate data
	$(BIN)/pytest -n 2 --dist loadgroup --cov --cov-report= --doctest-modules --doctest-glob='README.md' \
	  tests src/clusterscout/domain src/clusterscout/catalog
	$(BIN)/coverage report --fail-under=90 --skip-covered
	@# The pure layers are fully covered: any uncovered line there is a missing test.
	$(BIN)/coverage report --fail-under=100 \
	  --include='*/clusterscout/domain/*,*/clusterscout/catalog/*,*/clusterscout/model/*'

# The layers below the surfaces (no browser, no HTTP, no PostgreSQL): the loop while editing.
test-quick: $(DEV_STAMP) i18n
	$(BIN)/pytest -q -n 2 tests/domain tests/catalog tests/model tests/launch tests/app

check: test

# Datasette is the yardstick, not a dependency: it lives in a venv of its own.
BENCH_VENV := .venv-bench
$(BENCH_VENV)/bin/datasette:
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q 'datasette>=0.65,<1'

# wrk (Debian's package) drives the fixed-URL cases; without it bench/load.py uses its Python client.
wrk:
	@if ! command -v wrk >/dev/null && [ "$$(id -u)" = "0" ]; then \
	  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	fi

bench: $(DEV_STAMP) i18n build-db $(BENCH_VENV)/bin/datasette wrk
	$(BIN)/python bench/load.py --datasette $(BENCH_VENV)/bin/datasette

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache $(BENCH_VENV) $(TOOLS)
