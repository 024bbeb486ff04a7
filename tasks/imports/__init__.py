"""Importers of other benchmarks' result files, one module per ``schemas.ImportFormat`` value (`tcobench import`)."""

from __future__ import annotations

from tcobench.tasks.imports import aiperf, guidellm, vllm_bench  # noqa: F401  (importing registers the importers)
from tcobench.tasks.imports.base import Importer, importer_for
from tcobench.tasks.imports.importing import ImportResult, import_file

__all__ = ["ImportResult", "Importer", "import_file", "importer_for"]
