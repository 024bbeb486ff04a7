"""The images table: atomic one-file-per-event writes, readable through the `images` view."""

from __future__ import annotations

from pathlib import Path

from tcobench.images import BuildOutcome, image_record, load_catalog
from tcobench.tasks.prices import load_prices
from tcobench.tasks.query import connect, read_only_query
from tcobench.tasks.store import write_image_record


def _outcome() -> BuildOutcome:
    spec = next(s for s in load_catalog().images if s.name == "llama-cpp-cpu")
    return BuildOutcome(spec, "tcobench/llama-cpp-cpu:11434.0.0", "sha256:" + "1" * 64, 10, "f" * 64, "built", 7,
                        {"BASE_IMAGE": "b", "ENGINE_VERSION": "11434.0.0"}, "b", None)  # fmt: skip


def test_image_rows_are_written_atomically_and_queryable(tmp_path: Path) -> None:
    built = image_record(_outcome(), None, smoke_version="v")
    path = write_image_record(tmp_path, built)
    assert path.parent == tmp_path / "images" / f"date={built.date}" / f"host={built.host}"
    assert path.name == f"image-{built.event_id}.parquet"
    write_image_record(tmp_path, image_record(_outcome(), None, "pushed", "r/t@sha256:" + "2" * 64))
    assert not list(tmp_path.rglob(".*.tmp"))
    con = connect(tmp_path, load_prices(None))
    try:
        rows = read_only_query(con, "select action, repo_digest, build_ns from images order by action").to_pylist()
    finally:
        con.close()
    assert rows == [
        {"action": "built", "repo_digest": None, "build_ns": 7},
        {"action": "pushed", "repo_digest": "r/t@sha256:" + "2" * 64, "build_ns": 0},
    ]


def test_images_view_exists_on_an_empty_store(tmp_path: Path) -> None:
    con = connect(tmp_path, load_prices(None))
    try:
        assert read_only_query(con, "select count(*) as n from images").to_pylist() == [{"n": 0}]
    finally:
        con.close()
