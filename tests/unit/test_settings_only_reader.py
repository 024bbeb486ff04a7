"""`Settings` is the only reader of the environment (issue 42): no product module other than tcobench/settings.py
reads or writes ``os.environ`` or calls ``os.getenv``/``putenv``; it receives a Settings object or arguments, and a
child process gets its environment from ``settings.child_environment``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("tcobench", "tasks", "flows", "schemas", "images")  # not tests/ nor bench/
# images/wheelhouse.py is the install's bootstrap: `make install` runs it with the standard library alone, before
# tcobench and its dependencies are installed (CMAKE_ARGS, TCOBENCH_WHEELS, the build's environment); no other
# exception
ALLOWED = {"tcobench/settings.py", "images/wheelhouse.py"}
_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def environment_uses(source: str) -> list[int]:
    """Lines of ``source`` that touch the process environment: os.environ / os.getenv (any alias of os), or
    environ/getenv imported from os."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _NAMES
            or (
                isinstance(node, ast.ImportFrom)
                and node.module in ("os", "posix", "nt")
                and any(alias.name in _NAMES or alias.name == "*" for alias in node.names)
            )
        ):
            lines.append(node.lineno)
    return sorted(lines)


def _product_files() -> list[Path]:
    return sorted(p for folder in PRODUCT for p in (ROOT / folder).rglob("*.py") if not p.is_symlink())


def test_the_scan_finds_the_product() -> None:
    files = _product_files()
    assert len(files) > 100
    assert environment_uses((ROOT / "tcobench/settings.py").read_text("utf-8"))  # settings.py itself reads


def test_a_planted_use_is_found() -> None:
    for planted in (
        "import os\nx = os.environ.get('A')\n",
        "import os\nos.environ['A'] = 'b'\n",
        "import os as o\nx = o.getenv('A')\n",
        "from os import environ\n",
        "from os import getenv as g\n",
        "import os\nenv = dict(os.environ)\n",
    ):
        assert environment_uses(planted), planted


def test_only_settings_reads_the_environment() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _product_files()
        if str(path.relative_to(ROOT)) not in ALLOWED
        for line in environment_uses(path.read_text("utf-8"))
    ]
    assert not found, (
        f"the environment is read or written at {', '.join(found)}: only tcobench/settings.py may (a Settings field, "
        "or a named function there; a child process's environment from settings.child_environment)"
    )
