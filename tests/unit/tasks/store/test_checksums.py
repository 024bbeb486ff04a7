"""tasks/store/checksums.py: checksums recorded at commit (folder and sqlite:// catalogs), proven once per unchanged
file on reads, and compared every time by verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.tasks.store import checksums
from tcobench.tasks.store.health import Damage, data_files
from tcobench.tasks.store.store import open_store
from tcobench.tasks.store.verify import verify_store
from tests.unit.factories import write_fleet


@pytest.mark.parametrize("kind", ["folder", "sqlite"])
def test_every_committed_file_is_recorded_by_relative_path(tmp_path: Path, kind: str) -> None:
    uri = str(tmp_path / "s") if kind == "folder" else f"sqlite://{tmp_path / 's'}"
    write_fleet(uri, nights=1)  # type: ignore[arg-type]
    store = open_store(uri)
    root = store.location.data_path

    def check(con: object) -> tuple[list[str], dict[str, str]]:
        return [f.path for f in data_files(con, root)], checksums.recorded(con)  # type: ignore[arg-type]

    paths, known = store.run(check, "check")
    assert paths and {p.removeprefix(root) for p in paths} <= set(known)
    assert all(known[p.removeprefix(root)] == checksums.file_sha256(p) for p in paths)
    assert not any(k.startswith("/") for k in known), "relative: a moved store keeps its checksums"


def test_reads_hash_a_file_once_and_again_after_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    write_fleet(tmp_path / "s", nights=1)
    store = open_store(tmp_path / "s")
    location = store.location
    hashed: list[str] = []
    real = checksums.file_sha256

    def spy(path: Path) -> str:
        hashed.append(str(path))
        return real(path)

    monkeypatch.setattr(checksums, "file_sha256", spy)

    def damage(con: object) -> list[Damage]:
        files = data_files(con, location.data_path)  # type: ignore[arg-type]
        return checksums.content_damage(con, location, files, set())  # type: ignore[arg-type]

    assert store.run(damage, "read") == [] and hashed
    target = sorted(hashed)[0]
    hashed.clear()
    assert store.run(damage, "read") == [] and hashed == [], "an unchanged store is not hashed again"
    data = bytearray(Path(target).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(target).write_bytes(bytes(data))
    found = store.run(damage, "read")
    assert hashed == [target] and [d.path for d in found] == [target]
    assert "differs from its checksum at commit" in found[0].reason
    result = verify_store(tmp_path / "s", deep=False)
    assert [(p.kind, p.subject) for p in result.problems if p.kind == "damaged file"] == [("damaged file", target)]
