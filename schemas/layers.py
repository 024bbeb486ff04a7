"""layers: the folders of tcobench/sql, lowest first (docs/dev/sql.md).

Its own module, so that a reader that orders the views by them (tasks/store/views.py) does not build the column
declarations' models (``columns``) to learn them.
"""

from __future__ import annotations

__all__ = ["LAYERS"]

# macros: the table macros Python calls with its parameters (no .yml: each macro's header documents its columns)
LAYERS = ("request", "run", "cost", "trend", "report", "macros")
