"""llm-d's benchmark_report v0.2 pydantic model, vendored for the export tests (tests/unit/tasks/export).

From https://github.com/llm-d/llm-d-benchmark, llmdbenchmark/analysis/benchmark_report/ (base.py, schema_v0_2.py, schema_v0_2_components.py) at commit
8bc9f1ddd873a24f1657d6cca2e0d0fb6947dd36, under the Apache License 2.0; each file says what was changed (imports only). Not on PyPI, so the tests carry it.
Left out of ruff and mypy (pyproject.toml): it is upstream's code, checked there.
"""
