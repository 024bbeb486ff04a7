"""The compare package's public names load on first use (tcobench/lazy.py): each resolves to its home module's
object, and a command that needs one module (plan) does not import the others."""

from __future__ import annotations

import importlib
import subprocess
import sys

from tcobench.tasks.analysis import compare


def test_each_public_name_is_its_home_modules_object() -> None:
    homes = vars(compare)["_HOMES"]
    for name in compare.__all__:
        home = homes.get(name)
        found = getattr(compare, name)
        if home is not None:
            assert found is getattr(importlib.import_module(f"{compare.__name__}.{home}"), name), name
    assert callable(compare.claim_grade)  # a function named as its submodule stays the function


def test_importing_plan_leaves_the_comparison_and_claims_unloaded() -> None:
    code = (
        "import sys, tcobench.tasks.analysis.compare.plan; "
        "print(sorted(m for m in sys.modules if m.startswith('tcobench.tasks.analysis.')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for module in ("comparison", "claim_frame", "claim_grade", "document"):
        assert f"tcobench.tasks.analysis.compare.{module}'" not in loaded
    assert "tcobench.tasks.analysis.compare.best'" in loaded
