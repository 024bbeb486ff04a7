"""Command line: a thin face over the flows and the SQL views. Errors cross it as one line.

Modules: ``main`` (the app, usage-error policy), ``_common`` (consoles, error guard, settings, shared options and
number formats), ``_runs_table`` (the per-run tables), and one module per command group: ``run``, ``results``
(summary, query), ``analytics`` (compare, history, report), ``images`` (images build/list/push, doctor),
``nightly`` (nightly, serve), ``models`` (models synth/tokenizer), ``store`` (store info/snapshots/compact/verify/
migrate).
"""

from __future__ import annotations

from tcobench.cli.main import app, main

__all__ = ["app", "main"]
