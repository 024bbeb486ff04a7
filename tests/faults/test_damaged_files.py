"""A data file damaged without changing its size (bytes flipped at 5 offsets: a bad page, a bad compression block,
a wrong type in its footer), end to end through the `tcobench` command, once in a requests file and once in a runs
file of a two-host fleet store.

Every read command (summary, query, compare, history, report, store verify) either leaves the damaged file's runs
out with one warning naming the file and `store verify --repair`, or answers without them: none prints a traceback
or any row of those runs. `store verify` finds the file by its checksum at commit (tasks/store/checksums.py) and
`--repair` moves it to quarantine. (Truncated and empty files: tests/faults/test_store_faults.py.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.store_helpers import data_files
from tests.unit.factories import write_fleet

FRACTIONS = (0.15, 0.35, 0.55, 0.75, 0.95)  # where the 5 flipped bytes sit, as shares of the file's length


def _tcobench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tcobench"
    return subprocess.run(
        [str(exe if exe.exists() else "tcobench"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _env(store: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_"))}
    env.update(TCOBENCH_STORE=str(store), TCOBENCH_PREFECT="off", COLUMNS="250", XDG_STATE_HOME=str(tmp / "xdg"))
    return env


def flip(path: str, fractions: tuple[float, ...] = FRACTIONS) -> None:
    """Invert one byte at each share of the file, inside the PAR1 magic at both ends; the size stays."""
    data = bytearray(Path(path).read_bytes())
    for share in fractions:
        at = min(len(data) - 5, max(4, int(len(data) * share)))
        data[at] ^= 0xFF
    before = len(data)
    Path(path).write_bytes(bytes(data))
    assert Path(path).stat().st_size == before


@pytest.fixture(scope="module", params=["requests", "runs"])
def flipped(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, set[str]]:
    """A fleet store with one data file of the table flipped; (store, the file, the run ids it held)."""
    store = tmp_path_factory.mktemp(f"flipped-{request.param}") / "store"
    write_fleet(store, nights=3)
    target = sorted(data_files(store, request.param))[0]
    runs = {str(r) for r in pq.read_table(target, columns=["run_id"]).column("run_id").to_pylist()}
    assert runs
    flip(target)
    return store, target, runs


def _no_damaged_rows(text: str, runs: set[str]) -> None:
    """No row of ``runs`` in a command's output (run ids of the fleet factory are short: printed whole)."""
    assert "Traceback" not in text, text[-3000:]
    shown = [r for r in runs if re.search(rf"(?<![\w-]){re.escape(r)}(?![\w-])", text)]
    assert shown == [], f"rows of runs in the damaged file were printed: {shown}"


def _warned(stderr: str, path: str) -> bool:
    lines = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    return any(path in line and "store verify --repair" in line for line in lines)


def _answered_without(done: subprocess.CompletedProcess[str], bad: str) -> None:
    """The command warned about the file and answered, or (when the file held every run it could answer about: the
    fleet factory writes all runs of a batch in one runs file) said so in one line, exit 1; never a traceback."""
    assert _warned(done.stderr, bad), done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if re.match(r"^[A-Z]\w*Error: ", line)]
        assert done.returncode == 1 and len(errors) == 1, done.stderr[-3000:]
        assert re.match(r"QueryError: .*(no stored run|no measured run)", errors[0]), errors[0]


@pytest.mark.parametrize(
    "args",
    [
        ("query", "select run_id from runs order by 1"),
        ("query", "select run_id, count(*) as n, sum(output_tokens) as t from requests group by 1 order by 1"),
        ("query", "select * from run_summary order by run_id"),
        ("summary",),
        ("compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "200"),
        ("history",),
    ],
    ids=["query-runs", "query-requests", "query-run-summary", "summary", "compare", "history"],
)
def test_a_flipped_file_is_left_out_with_one_warning(
    flipped: tuple[Path, str, set[str]], args: tuple[str, ...], tmp_path: Path
) -> None:
    store, bad, runs = flipped
    done = _tcobench(*args, env=_env(store, tmp_path))
    _answered_without(done, bad)
    assert "Traceback" not in done.stderr
    _no_damaged_rows(done.stdout, runs)


def test_report_over_a_flipped_file_leaves_its_runs_out(flipped: tuple[Path, str, set[str]], tmp_path: Path) -> None:
    store, bad, runs = flipped
    out = tmp_path / "r.html"
    done = _tcobench("report", "--out", str(out), "--resamples", "100", env=_env(store, tmp_path))
    _answered_without(done, bad)
    if done.returncode == 0:
        _no_damaged_rows(out.read_text("utf-8"), runs)


def test_verify_finds_it_by_content_and_repair_quarantines_it(
    flipped: tuple[Path, str, set[str]], tmp_path: Path
) -> None:
    store, bad, runs = flipped
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    bad = bad.replace(str(store), str(copy))
    env = _env(copy, tmp_path)
    found = _tcobench("store", "verify", env=env)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"damaged file: {bad}" in found.stdout.replace("\n", "") and "Traceback" not in found.stderr
    assert "store verify --repair" in found.stderr or "verify --repair" in found.stderr
    repaired = _tcobench("store", "verify", "--repair", env=env)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert not Path(bad).exists() and list((copy / "quarantine").rglob(Path(bad).name)), "moved, never deleted"
    clean = _tcobench("store", "verify", env=env)
    assert clean.returncode == 0 and "no problem found" in clean.stdout, clean.stdout + clean.stderr
    after = _tcobench("query", "select run_id from runs", env=env)
    assert after.returncode == 0 and "warning: " not in after.stderr, after.stderr
    _no_damaged_rows(after.stdout, runs)


def test_an_unchanged_store_is_hashed_once_per_machine(tmp_path: Path) -> None:
    """The first read proves every file and remembers it; the next read of the unchanged store hashes nothing
    (the cache says so), and a file written since is hashed again."""
    store = tmp_path / "store"
    write_fleet(store, nights=1)
    env = _env(store, tmp_path)
    assert _tcobench("query", "select 1 as one", env=env).returncode == 0
    cache = list((tmp_path / "xdg" / "tcobench" / "verified").glob("*.json"))
    assert len(cache) == 1
    before = cache[0].read_bytes()
    assert _tcobench("query", "select 1 as one", env=env).returncode == 0
    assert cache[0].read_bytes() == before
    target = sorted(data_files(store, "requests"))[0]
    flip(target, (0.5,))
    done = _tcobench("query", "select count(*) as n from runs", env=env)
    assert done.returncode == 0 and _warned(done.stderr, target), done.stderr


def test_a_file_without_checksum_that_does_not_decode_is_found_when_a_read_trips_on_it(tmp_path: Path) -> None:
    """A store of tcobench < 0.3 (no checksums: the side table emptied here) with a requests file whose pages are
    garbage and whose footer is whole: the read that trips on it decodes the unrecorded files, leaves that one out
    with the warning, and answers; a command that cannot answer says so in one line. Never a traceback."""
    import duckdb

    store = tmp_path / "store"
    write_fleet(store, nights=1)
    con = duckdb.connect(str(store / "catalog.ducklake"))
    con.execute("DELETE FROM tcobench_file_checksum")
    con.close()
    target = sorted(data_files(store, "requests"))[0]
    runs = {str(r) for r in pq.read_table(target, columns=["run_id"]).column("run_id").to_pylist()}
    data = bytearray(Path(target).read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = bytes((i * 151 + 7) % 256 for i in range(len(data) - footer - 4))
    Path(target).write_bytes(bytes(data))
    env = _env(store, tmp_path)
    for args in (("query", "select run_id, count(*) as n from requests group by 1 order by 1"), ("summary",)):
        done = _tcobench(*args, env=env)
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        assert done.returncode == 0, done.stderr[-3000:]
        assert _warned(done.stderr, target) and "does not decode" in done.stderr, done.stderr[-3000:]
        _no_damaged_rows(done.stdout, runs)


# A damaged catalog (issue 43): the catalog file itself overwritten with random bytes, emptied, or cut short, on a
# folder store (a DuckDB catalog) and a sqlite:// one. Every command says so in one StoreError line naming the file
# and `tcobench store verify`; verify says what can be recovered; nothing writes to the damaged file.
CATALOG_COMMANDS = {
    "query": ["query", "select count(*) as n from runs"],
    "summary": ["summary"],
    "compare": ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd", "--resamples", "100"],
    "history": ["history"],
    "report": ["report", "--out", "{tmp}/r.html", "--resamples", "100"],
    "store info": ["store", "info"],
    "run": ["run", "--no-prefect", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--requests", "1"],
}


def _damage_catalog(path: Path, how: str) -> None:
    size = path.stat().st_size
    if how == "random":
        path.write_bytes(os.urandom(size))
    elif how == "zero":
        path.write_bytes(b"")
    else:  # cut short: the header stays, most blocks are gone
        with path.open("r+b") as handle:
            handle.truncate(size // 3)


@pytest.fixture(scope="module")
def catalog_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path]]:
    """A small two-host store per catalog kind: (its URI, its catalog file)."""
    base = tmp_path_factory.mktemp("catalogs")
    write_fleet(base / "folder", nights=1, concurrency=(1, 4), requests=6, regression=None)
    write_fleet(f"sqlite://{base / 'sqlite'}", nights=1, concurrency=(1, 4), requests=6, regression=None)  # type: ignore[arg-type]
    return {
        "folder": (str(base / "folder"), base / "folder" / "catalog.ducklake"),
        "sqlite": (f"sqlite://{base / 'sqlite'}", base / "sqlite" / "catalog.sqlite"),
    }


def _copy_store(uri: str, catalog: Path, to: Path) -> tuple[str, Path]:
    shutil.copytree(catalog.parent, to)
    return uri.replace(str(catalog.parent), str(to)), to / catalog.name


@pytest.mark.parametrize("kind", ["folder", "sqlite"])
@pytest.mark.parametrize("how", ["random", "zero", "cut"])
def test_a_damaged_catalog_is_one_store_error_line_in_every_command(
    catalog_stores: dict[str, tuple[str, Path]], kind: str, how: str, tmp_path: Path
) -> None:
    """In process (the commands as the CLI runs them): one line each, exit 1, the catalog file never written."""
    from typer.testing import CliRunner

    from tcobench.cli import app

    uri, catalog = _copy_store(*catalog_stores[kind], tmp_path / "store")
    _damage_catalog(catalog, how)
    before = catalog.read_bytes()
    runner = CliRunner()
    env = {"TCOBENCH_STORE": uri, "COLUMNS": "250", "TCOBENCH_STATE_DIR": str(tmp_path / "state")}
    for name, args in CATALOG_COMMANDS.items():
        done = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in args], env=env)
        lines = [line for line in done.stderr.splitlines() if not line.startswith("warning: ")]
        assert done.exit_code == 1 and len(lines) == 1, f"{name}: {done.exit_code} {done.stderr[-3000:]}"
        assert lines[0].startswith(f"StoreError: store {uri}: its catalog {catalog} is damaged: "), f"{name}: {lines}"
        assert "run `tcobench store verify`" in lines[0], f"{name}: {lines[0]}"
        assert done.exception is None or isinstance(done.exception, SystemExit), f"{name}: {done.exception!r}"
    verify = runner.invoke(app, ["store", "verify"], env=env)
    assert verify.exit_code == 1, verify.stdout + verify.stderr
    assert f"damaged catalog: {catalog}: " in verify.stdout.replace("\n", " ")
    (line,) = verify.stderr.strip().splitlines()
    assert line.startswith(f"StoreError: the catalog {catalog} is damaged: ") and "data files are intact" in line
    assert "put back a copy of" in line
    assert catalog.read_bytes() == before, "nothing wrote to the damaged catalog"


def test_a_damaged_catalog_is_one_line_from_the_command_itself(
    catalog_stores: dict[str, tuple[str, Path]], tmp_path: Path
) -> None:
    """The same as a user sees it: a real `tcobench` process, no traceback (it was 76-85 lines from _damage)."""
    uri, catalog = _copy_store(*catalog_stores["folder"], tmp_path / "store")
    _damage_catalog(catalog, "random")
    done = _tcobench("query", "select count(*) as n from runs", env=_env(Path(uri), tmp_path))
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"StoreError: store {uri}: its catalog {catalog} is damaged: it is not a DuckDB database")
