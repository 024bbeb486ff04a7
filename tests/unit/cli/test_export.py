"""`tcobench export` (issue 46): one line saying what it wrote; bad input is one line `Kind: message`, exit 1 or 2,
nothing written."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tcobench.cli import app

runner = CliRunner()


def test_writes_and_says_so(fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "br"
    done = runner.invoke(
        app,
        [
            "export",
            "--store",
            str(fleet),
            "--format",
            "benchmark-report",
            "--out",
            str(out),
            "--select",
            "run=gpu-nv-1-n0",
        ],
    )
    assert done.exit_code == 0, done.output
    assert f"wrote 3 run(s) as benchmark-report to {out}" in " ".join(done.stdout.split())
    assert sorted(p.name for p in out.iterdir()) == [f"gpu-nv-1-n0-c{c}.json" for c in (1, 16, 4)]


def test_unknown_format_is_one_line(fleet: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["export", "--store", str(fleet), "--format", "xml", "--out", str(tmp_path / "x")])
    assert done.exit_code == 1
    lines = done.stderr.strip().splitlines()
    assert lines == ["ConfigError: --format 'xml' is not an export format; valid: benchmark-report, parquet, csv"]
    assert not (tmp_path / "x").exists()


def test_empty_selection_is_one_line(fleet: Path, tmp_path: Path) -> None:
    done = runner.invoke(
        app,
        ["export", "--store", str(fleet), "--format", "csv", "--out", str(tmp_path / "x"), "--select", "model=none"],
    )
    assert done.exit_code == 1
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("QueryError: nothing to export: no run matches --select 'model=none'")
    assert not (tmp_path / "x").exists()
