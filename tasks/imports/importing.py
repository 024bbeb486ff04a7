"""import_file: read a result file with its format's importer and commit its runs to the store in one transaction.

A file already imported (the same sha256 in runs.source_sha256) is refused with a line naming the earlier import;
``replace`` writes over it instead (the earlier run ids are reused, so the one commit deletes their rows and writes
the new ones). Nothing is written when the file or the labels are wrong.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from tcobench.errors import ConfigError
from tcobench.schemas import RunRecord
from tcobench.schemas.imports import ImportFormat, ImportLabels, ParsedFile
from tcobench.tasks.imports.base import importer_for
from tcobench.tasks.imports.rows import imported_rows, missing_labels
from tcobench.tasks.store.store import RunRows, StoreRef, open_store, write_runs

__all__ = ["ImportResult", "earlier_imports", "import_file", "read_file"]


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: the run rows, the request rows per run, the snapshot, what the file lacked."""

    runs: list[RunRecord]
    requests: dict[str, int]
    snapshot: int
    replaced: int
    notes: list[str]


class _Earlier(TypedDict):
    run_id: str
    batch_id: str
    date: str
    source: str | None
    source_file: str | None
    committed_ns: int | None


def read_file(path: Path, fmt: ImportFormat) -> tuple[ParsedFile, str]:
    """The parsed file and the sha256 of its bytes; a ConfigError naming the file when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    parsed = importer_for(fmt).parse(path, data)
    return parsed, hashlib.sha256(data).hexdigest()


def earlier_imports(store: StoreRef, sha: str) -> list[_Earlier]:
    """The stored runs imported from a file with this sha256 (macro imported_runs); none in a store not made yet."""
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect
    from tcobench.tasks.store.rows import fetch_rows

    if not open_store(store).location.exists():
        return []
    con = connect(store, load_prices(None), needs=("imported_runs",))
    try:
        return fetch_rows(con, "SELECT * FROM imported_runs($sha)", _Earlier, {"sha": sha})
    finally:
        con.close()


def _check_prices(labels: ImportLabels, prices: Path | None) -> None:
    """PricingError unless the price table has the labels' hardware, site and ops rows (the runs must be priced)."""
    from tcobench.schemas import PricingConfig
    from tcobench.tasks.prices import check_keys, load_prices

    pricing = PricingConfig(table=prices, hardware=labels.hardware or "", site=labels.site, ops=labels.ops)
    check_keys(load_prices(prices), pricing, "import", {"hardware": "--hardware", "site": "--site", "ops": "--ops"})


def import_file(
    store: StoreRef,
    path: Path,
    fmt: ImportFormat,
    labels: ImportLabels,
    replace: bool = False,
    prices: Path | None = None,
) -> ImportResult:
    """Parse ``path`` as ``fmt`` and commit its runs (and their requests) in one transaction. ``prices``: the price
    table the labels' keys must be in (default: the shipped one)."""
    parsed, sha = read_file(path, fmt)
    missing = missing_labels(parsed, labels)
    if missing:
        raise ConfigError(
            f"{path}: the file does not say {', '.join(m.lstrip('-') for m in missing)}; give {' '.join(missing)}"
        )
    _check_prices(labels, prices)
    earlier = earlier_imports(store, sha)
    if earlier and not replace:
        first = earlier[0]
        raise ConfigError(
            f"{path}: already imported as {first['source']} from {first['source_file']} "
            f"({len(earlier)} run(s), batch {first['batch_id']}, run {first['run_id']}, date {first['date']}; "
            f"sha256 {sha[:12]}); pass --replace to import it again over those runs"
        )
    rows = imported_rows(parsed, labels, path, sha, [e["run_id"] for e in earlier])
    snapshot = write_runs(store, [RunRows(run, requests) for run, requests in rows], writer="import")
    return ImportResult(
        runs=[run for run, _ in rows],
        requests={run.run_id: len(requests) for run, requests in rows},
        snapshot=snapshot,
        replaced=len(earlier),
        notes=parsed.notes,
    )
