"""The store's own bookkeeping rows (table ``commits``): what each committed run wrote, for `tcobench store verify`.

Like every stored table, its columns are derived from this model (``schemas.arrow``).
"""

from __future__ import annotations

from pydantic import Field

from tcobench.schemas.base import StrictModel
from tcobench.schemas.records import DATE_PATTERN, HOST_PATTERN

__all__ = ["CommitRecord"]


class CommitRecord(StrictModel):
    """One row per committed run: the row counts its transaction wrote."""

    run_id: str = Field(description="Run the commit wrote (its runs row is written in the same transaction).")
    date: str = Field(pattern=DATE_PATTERN, description="The run's date, YYYY-MM-DD.")
    host: str = Field(pattern=HOST_PATTERN, description="The run's host.")
    requests: int = Field(description="requests rows the commit wrote for the run.")
    telemetry: int = Field(description="telemetry rows the commit wrote for the run.")
    engine_metrics: int | None = Field(
        default=None,
        description="engine_metrics rows the commit wrote for the run (NULL in commits of stores written before "
        "this count was kept: verify then does not check them).",
    )
    committed_ns: int = Field(description="When the commit was prepared, ns since the Unix epoch (UTC).")
    writer: str = Field(
        description="Who wrote it: 'run' (tcobench writing a measured run), 'import' (`tcobench import`) or 'migrate'."
    )
    tool_version: str = Field(description="tcobench version that wrote the commit.")
