# Two commands on a fresh clone: `make site` and `make test`.
# Everything they need is installed here, into .venv, from PyPI (and Debian's
# chromium for the browser tests).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CHROMIUM := /usr/bin/chromium
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: site site-properdocs site-zensical test test-fast check serve bench bench-slow clean clean-cache install install-test install-dev chromium

site: $(VENV)/.installed
	$(BIN)/mkdocs build --strict --site-dir site

# The same mkdocs.yml built by the other two builders, each installed into .venv by its target.
# ProperDocs runs hooks/notes.py as MkDocs does. Zensical runs the Markdown extension but no
# hooks, so `ainotes site-assets` then writes the assets, embed files and manifest.
PROPERDOCS_SPEC ?= properdocs>=1.6.7,<2
ZENSICAL_SPEC ?= zensical>=0.0.20,<0.2

site-properdocs: $(VENV)/.installed-properdocs
	$(BIN)/properdocs build --strict -f mkdocs.yml --site-dir site

site-zensical: $(VENV)/.installed-zensical
	$(BIN)/zensical build --clean --strict -f mkdocs.yml
	$(BIN)/ainotes site-assets --config mkdocs.yml site

serve: $(VENV)/.installed
	$(BIN)/mkdocs serve --strict --dev-addr $(HOST):$(PORT)

# Test files run on TEST_WORKERS processes (pytest-xdist), each file whole on one worker so
# its module fixtures (site builds, one browser) are made once. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
test: $(VENV)/.installed-test chromium
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The quick loop: no browser, no whole-site builds (MkDocs, ProperDocs, Zensical), no slow
# tier, and fewer hostile-input examples per property than make test's 50.
test-fast: $(VENV)/.installed-test
	AINOTES_QUICK_EXAMPLES=15 $(BIN)/python -m pytest -m "not browser and not build and not slow"

# Lint, types and import rules: ruff (rules in pyproject.toml, each ignore justified), mypy,
# import-linter (the layers and contracts in pyproject.toml) and no module using another's private names.
check: $(VENV)/.installed-dev
	$(BIN)/ruff check src hooks tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_private_imports.py

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

clean:
	rm -rf site bench/out .pytest_cache

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
