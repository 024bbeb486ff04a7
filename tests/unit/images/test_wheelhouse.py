"""images/wheelhouse.py: one wheel per requirement and build setting, built with pip (its cache off).

The builds here are real pip builds of a tiny local project whose in-tree PEP 517 backend writes the CMAKE_ARGS
it was given into the wheel, so nothing is downloaded and the settings' path into the build is checked.
"""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

import pytest

from tcobench.images import wheelhouse

_BACKEND = """
import base64, hashlib, os, zipfile

def _files():
    return {
        "demo_pkg/settings.txt": os.environ.get("CMAKE_ARGS", "").encode(),
        "demo_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: 1.0\\n",
        "demo_pkg-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
        ),
    }

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "demo_pkg-1.0-py3-none-any.whl"
    files = _files()
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append("demo_pkg-1.0.dist-info/RECORD,,")
        zf.writestr("demo_pkg-1.0.dist-info/RECORD", "\\n".join(record) + "\\n")
    return name
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "demo"
    root.mkdir()
    (root / "backend.py").write_text(_BACKEND)
    (root / "pyproject.toml").write_text(
        textwrap.dedent("""
        [project]
        name = "demo-pkg"
        version = "1.0"
        [build-system]
        requires = []
        build-backend = "backend"
        backend-path = ["."]
    """)
    )
    monkeypatch.setenv("TCOBENCH_WHEELS", str(tmp_path / "wheels"))
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    return root


def _settings_in(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read("demo_pkg/settings.txt").decode()


def test_the_default_build_is_portable_and_is_kept(project: Path) -> None:
    made = wheelhouse.wheel(str(project))
    assert "-DGGML_NATIVE=OFF" in wheelhouse.DEFAULT_CMAKE_ARGS
    assert _settings_in(made) == wheelhouse.DEFAULT_CMAKE_ARGS
    assert made.parent == wheelhouse.folder(str(project))
    stamp = made.stat().st_mtime_ns
    assert wheelhouse.wheel(str(project)) == made and made.stat().st_mtime_ns == stamp  # not rebuilt
    assert [p.name for p in made.parent.parent.iterdir()] == [made.parent.name]  # no staging folder left


def test_other_settings_get_their_own_wheel(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    portable = wheelhouse.wheel(str(project))
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_NATIVE=ON")
    native = wheelhouse.wheel(str(project))
    assert native.parent != portable.parent
    assert _settings_in(native) == "-DGGML_NATIVE=ON" and _settings_in(portable) == wheelhouse.DEFAULT_CMAKE_ARGS


def test_a_folder_without_exactly_one_wheel_is_rebuilt(project: Path) -> None:
    unfinished = wheelhouse.folder(str(project))
    unfinished.mkdir(parents=True)
    (unfinished / "leftover.txt").write_text("an interrupted build")
    made = wheelhouse.wheel(str(project))
    assert sorted(p.name for p in made.parent.iterdir()) == [made.name]


def test_a_failed_build_says_what_and_leaves_nothing(project: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-project")
    with pytest.raises(wheelhouse.WheelError, match=r"cannot build the wheel of .*no-such-project \(CMAKE_ARGS="):
        wheelhouse.wheel(missing)
    assert not (tmp_path / "wheels").exists() or list((tmp_path / "wheels").iterdir()) == []


def test_the_script_prints_the_folder_and_exits_2_on_bad_usage(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert wheelhouse.main([]) == 2
    assert wheelhouse.main([str(project)]) == 0
    assert capsys.readouterr().out.strip() == str(wheelhouse.folder(str(project)))
