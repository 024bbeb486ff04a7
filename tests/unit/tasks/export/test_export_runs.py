"""export_runs (issue 46, bad input): an unknown format names the valid ones, an empty selection says so in one line,
an existing --out is refused, and a failed export leaves no file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError, QueryError, StoreError
from tcobench.schemas.export import ExportFormat
from tcobench.tasks.export import export_runs as module
from tcobench.tasks.export.export_runs import WRITERS, export_runs, parse_format
from tcobench.tasks.prices import load_prices


def test_every_format_has_a_writer() -> None:
    assert set(WRITERS) == set(ExportFormat)
    assert parse_format("benchmark-report") is ExportFormat.benchmark_report


def test_unknown_format_names_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"--format 'xlsx' .*valid: benchmark-report, parquet, csv$"):
        parse_format("xlsx")


def test_empty_selection_is_one_line_and_writes_nothing(fleet: Path, tmp_path: Path) -> None:
    with pytest.raises(QueryError) as caught:
        export_runs(fleet, load_prices(None), ExportFormat.parquet, tmp_path / "out", "host=nowhere")
    assert "nothing to export: no run matches --select 'host=nowhere'" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_existing_out_is_refused(fleet: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(ConfigError, match="exists"):
        export_runs(fleet, load_prices(None), ExportFormat.csv, tmp_path / "out", None)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_writer_that_fails_half_way_leaves_nothing(
    fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half(con: object, ids: list[str], folder: Path) -> list[Path]:
        (folder / "runs.parquet").write_bytes(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(module.WRITERS, ExportFormat.parquet, half)
    with pytest.raises(StoreError, match="cannot write the export to .*No space left on device"):
        export_runs(fleet, load_prices(None), ExportFormat.parquet, tmp_path / "out", None)
    assert list(tmp_path.iterdir()) == []  # neither out nor the hidden folder beside it
