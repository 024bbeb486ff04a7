"""`tcobench import`: a real vllm-bench file stored and printed; what the file lacks and a bad option are one line
each, with the exit status the error table says, and store nothing."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tcobench.cli import app
from tests.store_helpers import lake_rows

runner = CliRunner()
FILE = Path(__file__).parents[1] / "tasks" / "imports" / "files" / "vllm-bench" / "vllm-bench.json"
LABELS = ["--host", "far", "--hardware", "nvidia-h100-sxm", "--gpus", "1", "--vendor", "nvidia"]


def test_the_file_is_stored_and_each_run_printed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    args = ["import", str(FILE), "--format", "vllm-bench", *LABELS, "--tool-version", "0.32.0", "--store", str(store)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.stderr
    assert "(imported:vllm-bench 0.32.0): ok, 12 requests (12 request rows), concurrency 2, model zero, host far" in (
        done.stdout
    )
    assert lake_rows(store, "SELECT source, host, gpus_given FROM lake.runs") == [
        ("imported:vllm-bench 0.32.0", "far", 1)
    ]


def test_missing_labels_are_one_line_naming_the_options_and_nothing_is_stored(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = runner.invoke(app, ["import", str(FILE), "--format", "vllm-bench", "--host", "far", "--store", str(store)])
    assert done.exit_code == 1
    assert done.stderr.strip() == (
        f"ConfigError: {FILE}: the file does not say hardware, gpus, vendor; give --hardware --gpus --vendor"
    )
    assert not store.exists()


def test_an_unknown_format_and_a_bad_host_name_are_usage_errors(tmp_path: Path) -> None:
    unknown = runner.invoke(app, ["import", str(FILE), "--format", "locust", *LABELS])
    assert unknown.exit_code == 2 and "'locust' is not one of 'vllm-bench', 'aiperf'" in unknown.stderr
    bad_host = [*LABELS[2:], "--host", "a/b"]
    done = runner.invoke(app, ["import", str(FILE), "--format", "vllm-bench", *bad_host, "--store", str(tmp_path)])
    assert done.exit_code == 2 and "--host" in done.stderr and "'a/b'" in done.stderr


def test_a_parquet_export_is_taken_back_with_its_run_ids_and_refused_twice(fleet: Path, tmp_path: Path) -> None:
    folder, store = tmp_path / "out", tmp_path / "store"
    exported = runner.invoke(
        app,
        [
            "export",
            "--format",
            "parquet",
            "--out",
            str(folder),
            "--select",
            "run=gpu-nv-1-n0-c4",
            "--store",
            str(fleet),
        ],
    )
    assert exported.exit_code == 0, exported.stderr
    done = runner.invoke(app, ["import", str(folder), "--format", "parquet", "--store", str(store)])
    assert done.exit_code == 0, done.stderr
    assert "imported run gpu-nv-1-n0-c4 (measured): ok, concurrency 4" in done.stdout
    assert lake_rows(store, "SELECT run_id, source FROM lake.runs") == [("gpu-nv-1-n0-c4", None)]
    again = runner.invoke(app, ["import", str(folder), "--format", "parquet", "--store", str(store)])
    assert again.exit_code == 1
    assert again.stderr.strip() == (
        f"ConfigError: {folder}: 1 run(s) already in the store: gpu-nv-1-n0-c4; pass --replace to write the "
        "export's rows over them"
    )
    labelled = runner.invoke(
        app, ["import", str(folder), "--format", "parquet", "--host", "far", "--store", str(store)]
    )
    assert labelled.exit_code == 2 and "a parquet export's runs carry their own labels" in labelled.stderr
