# Two commands on a fresh clone: `make site` and `make test`.
# Everything they need is installed here, into .venv, from PyPI (and Debian's
# chromium for the browser tests).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CHROMIUM := /usr/bin/chromium
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: site site-properdocs site-zensical test test-lowest test-integration test-matrix test-all test-fast check serve bench bench-slow clean clean-cache install install-test install-dev chromium

site: $(VENV)/.installed
	$(BIN)/mkdocs build --strict --site-dir site

# The same mkdocs.yml built by the other two builders, each installed into .venv by its target.
# ProperDocs runs hooks/notes.py as MkDocs does. Zensical runs the Markdown extension but no
# hooks, so `ainotes site-assets` then writes the assets, embed files and manifest.
PROPERDOCS_SPEC ?= properdocs>=1.6.7,<2
ZENSICAL_SPEC ?= zensical>=0.0.58,<0.2

site-properdocs: $(VENV)/.installed-properdocs
	$(BIN)/properdocs build --strict -f mkdocs.yml --site-dir site

site-zensical: $(VENV)/.installed-zensical
	$(BIN)/zensical build --clean --strict -f mkdocs.yml
	$(BIN)/ainotes site-assets --config mkdocs.yml site

serve: $(VENV)/.installed
	$(BIN)/mkdocs serve --strict --dev-addr $(HOST):$(PORT)

# Tests run on TEST_WORKERS processes (pytest-xdist; TEST_WORKERS=0: one process). The sites many files
# read are built once per run (tests/shared_sites.py); a file whose module fixtures are its own builds
# is one xdist_group, kept on one worker; every other test goes to whichever worker is free.
# make test: every behaviour, with combinatorial repeats sampled. make test-matrix: the two tiers it
# leaves out, the rest of each scheme x width x page matrix and the screenshots for a person to look
# at (artifacts/screenshots/). CI runs both. pytest's status passes through: 5 (no tests) fails.
TEST_WORKERS ?= 2
PYTEST_XDIST = -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder
# Three tiers, all run by CI (.ci/run):
#   make test              everything but the browser: core, charts, renders, pages, the CLI, and real
#                          MkDocs builds of fixture and real sites (a contributor's loop, about 2 min here)
#   make test-integration  the real browser (Playwright driving Debian's chromium), the ProperDocs and
#                          Zensical builds, and two whole builds compared byte for byte
#   make test-matrix       the rest of each scheme x width x page combination, and the screenshots
# make test-all runs the three.
TIERS = matrix or screenshots
test: $(VENV)/.installed-test
	AINOTES_TEST_PREBUILD=1 $(BIN)/python -m pytest $(PYTEST_XDIST) -m "not browser and not integration and not ($(TIERS))"

# make test again on the lowest versions pyproject.toml allows (uv's lowest-direct resolution of the
# direct dependencies), in a venv of its own: every lower bound is one the suite passes with.
LOWEST_VENV := .venv-lowest
UV_SPEC ?= uv>=0.5,<1
test-lowest: $(LOWEST_VENV)/.installed
	AINOTES_TEST_PREBUILD=1 $(LOWEST_VENV)/bin/python -m pytest $(PYTEST_XDIST) -m "not browser and not integration and not ($(TIERS))"

$(LOWEST_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python -m pip install --quiet '$(UV_SPEC)'
	$(LOWEST_VENV)/bin/uv pip install --quiet --python $(LOWEST_VENV)/bin/python --resolution lowest-direct -e '.[test]'
	touch $@

test-integration: $(VENV)/.installed-test chromium
	AINOTES_TEST_PREBUILD=1 $(BIN)/python -m pytest $(PYTEST_XDIST) -m "(browser or integration) and not ($(TIERS))"

test-matrix: $(VENV)/.installed-test chromium
	AINOTES_TEST_PREBUILD=1 $(BIN)/python -m pytest $(PYTEST_XDIST) -m "$(TIERS)"

test-all: test test-integration test-matrix

# The quick loop: no browser, no whole-site builds (MkDocs, ProperDocs, Zensical), no slow
# tier, and fewer hostile-input examples per property than make test's 50.
test-fast: $(VENV)/.installed-test
	AINOTES_QUICK_EXAMPLES=15 $(BIN)/python -m pytest -m "not browser and not build and not slow and not matrix and not screenshots"

# Lint, types and import rules: ruff (rules in pyproject.toml, each ignore justified), mypy,
# import-linter (the layers and contracts in pyproject.toml), no module using another's private names,
# and no file in src/ over 800 lines or function over 80 (scripts/check_sizes.py).
check: $(VENV)/.installed-dev
	$(BIN)/ruff check src hooks tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_private_imports.py
	$(BIN)/python scripts/check_sizes.py

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

clean:
	rm -rf site bench/out .pytest_cache $(LOWEST_VENV)

clean-cache: $(VENV)/.installed
	$(BIN)/ainotes cache clear

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test
install-dev: $(VENV)/.installed-dev

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-properdocs: Makefile $(VENV)/.installed
	$(BIN)/python -m pip install --quiet '$(PROPERDOCS_SPEC)'
	touch $@

$(VENV)/.installed-zensical: Makefile $(VENV)/.installed
	$(BIN)/python -m pip install --quiet '$(ZENSICAL_SPEC)'
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# Debian's chromium for Playwright; never a browser download.
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@test -x $(CHROMIUM) || { echo "chromium is missing at $(CHROMIUM)" >&2; exit 1; }
