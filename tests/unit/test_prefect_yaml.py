"""prefect.yaml's deployments point at real flows with parameters those flows accept."""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml
from prefect.utilities.importtools import import_object

ROOT = Path(__file__).resolve().parents[2]


def test_deployments_resolve() -> None:
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text("utf-8"))
    names = []
    for deployment in spec["deployments"]:
        flow = import_object(deployment["entrypoint"])
        # the flow's function: a Prefect flow's .fn, or the function itself where an earlier test of this process
        # imported the flows with Prefect off (flows/_orchestrator.py decides at import)
        fn = getattr(flow, "fn", flow)
        accepted = set(inspect.signature(fn).parameters)
        assert set(deployment.get("parameters", {})) <= accepted, deployment["name"]
        required = {n for n, p in inspect.signature(fn).parameters.items() if p.default is p.empty}
        assert required <= set(deployment.get("parameters", {})), deployment["name"]
        assert all(len(s["cron"].split()) == 5 for s in deployment["schedules"])
        names.append(deployment["name"])
    assert names == ["tcobench-nightly", "tcobench-rebuild-images", "tcobench-compact-store"]
