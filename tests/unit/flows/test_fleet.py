"""Fleet wiring: what the nightly hands each host's run, and that the night's partial threshold reaches both the
hosts' runs and settle (a fleet night exits as an in-process one). Prefect, the hosts and the store are replaced
by recorders here; tests/integration/test_fleet.py runs the real thing."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tcobench.flows import fleet as fleet_flows
from tcobench.flows._orchestrator import inline
from tcobench.tasks.fleet import host_parameters
from tcobench.tasks.fleet.nightly import run_cells as nightly_run_cells
from tcobench.tasks.inventory import NightlyPlan
from tcobench.tasks.prices import load_prices
from tcobench.tasks.runs import PARTIAL_THRESHOLD
from tests.unit.factories import fleet_plan

PRICES = load_prices(None)


@pytest.fixture
def plan(tmp_path: Path) -> NightlyPlan:
    return fleet_plan(tmp_path, ("host-a", "host-b"), PRICES)


def test_the_nights_partial_threshold_reaches_every_hosts_run_and_settle(
    plan: NightlyPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: dict[str, Any] = {}
    for name in ("ensure_pool", "ensure_queues", "deploy_host_flow", "_log"):
        monkeypatch.setattr(fleet_flows, name, lambda *a, **k: None)
    monkeypatch.setattr(fleet_flows, "dispatch_and_gather", lambda deployment, params, *a: sent.update(params) or {})

    def settle(*args: Any) -> list[Any]:
        sent["settle threshold"] = args[-1]
        return []

    monkeypatch.setattr(fleet_flows, "settle", settle)
    fleet_flows.run_fleet(plan, PRICES, "/srv/store", "night", 2, 5.0, partial_threshold=0.2)
    assert {h: json.loads(json.dumps(sent[h]))["partial_threshold"] for h in ("host-a", "host-b")} == {
        "host-a": 0.2,
        "host-b": 0.2,
    }
    assert sent["settle threshold"] == 0.2


@pytest.mark.parametrize(("given", "used"), [({"partial_threshold": 0.2}, 0.2), ({}, PARTIAL_THRESHOLD)])
def test_a_hosts_run_judges_its_cells_by_the_nights_threshold(
    plan: NightlyPlan, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: dict[str, float], used: float
) -> None:
    """fleet-host takes every parameter host_parameters builds; an older nightly's, without the threshold, too."""
    seen: dict[str, Any] = {}

    def run_cells(*args: Any, **kwargs: Any) -> list[Any]:  # the arguments as the real run_cells would take them
        bound = inspect.signature(nightly_run_cells).bind(*args, **kwargs)
        bound.apply_defaults()
        seen.update(cells=len(bound.arguments["cells"]), threshold=bound.arguments["partial_threshold"])
        return []

    for name in ("die_with_parent", "check_worker_host", "publish_summary", "publish_run_cards", "run_log"):
        monkeypatch.setattr(fleet_flows, name, lambda *a, **k: None)
    monkeypatch.setattr(fleet_flows, "Settings", lambda: SimpleNamespace(store=str(tmp_path), model_cache=tmp_path))
    monkeypatch.setattr(fleet_flows, "NightProgress", lambda *a: SimpleNamespace(of=lambda host: None))
    monkeypatch.setattr(fleet_flows, "run_cells", run_cells)
    host = plan.inventory.hosts[0]
    params = host_parameters(host, plan.cells_of(host.name), "night", PRICES, str(tmp_path), 2, 5.0, **given)
    assert set(params) <= set(inspect.signature(inline(fleet_flows.fleet_host)).parameters)
    if not given:
        params.pop("partial_threshold")  # the parameters of a nightly from before the threshold was one
    assert inline(fleet_flows.fleet_host)(**json.loads(json.dumps(params))) == "0 of 0 cells succeeded"
    assert seen == {"cells": 1, "threshold": used}
