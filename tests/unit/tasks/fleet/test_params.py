"""What crosses from the nightly to a host's run: data only, never a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.tasks.fleet import cells_from_parameters, host_parameters, prices_from_parameters, refuse_secrets
from tcobench.tasks.inventory import NightlyPlan, load_plan
from tcobench.tasks.prices import load_prices

PRICES = load_prices(None)


@pytest.fixture
def plan(tmp_path: Path) -> NightlyPlan:
    inventory = tmp_path / "inventory.toml"
    inventory.write_text('[fleet]\n[[hosts]]\nname = "host-a"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n')
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[[engines]]\nname = "zero"\nendpoint = "http://127.0.0.1:8080"\n[[models]]\nname = "m"\n'
                      '[[workloads]]\nname = "w"\nconcurrency = [1, 4]\n')  # fmt: skip
    return load_plan(inventory, [matrix], PRICES)


def test_parameters_are_plain_json_and_come_back_as_the_same_cells(
    plan: NightlyPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "admin:hunter2-secret")
    host = plan.inventory.hosts[0]
    cells = plan.cells_of("host-a")
    params = host_parameters(host, cells, "batch1", PRICES, "/srv/store", 2, 5.0)
    again = json.loads(json.dumps(params))  # what the Prefect server stores and hands back
    assert cells_from_parameters(again["host"], again["cells"]) == cells
    assert prices_from_parameters(again["prices"]) == PRICES
    assert "hunter2" not in json.dumps(params)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ({"store": "s3://key:sekrit@bucket/x"}, "store holds a URL with a password"),
        ({"cells": [{"config": {"engine": {"url": "http://user:pw@127.0.0.1:1"}}}]},
         "cells.0.config.engine.url holds a URL with a password"),
        ({"store": "postgres:dbname=lake password=aws-secret-value-123"},
         "store contains the value of the secret variable AWS_SECRET_ACCESS_KEY"),
    ],
)  # fmt: skip
def test_secrets_are_refused_by_name_never_echoed(value: object, needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value-123")
    with pytest.raises(ConfigError) as info:
        refuse_secrets(value, "parameters")
    assert needle in str(info.value)
    assert "sekrit" not in str(info.value) and "aws-secret-value-123" not in str(info.value)
    assert "pw@" not in str(info.value)


def test_plain_values_and_short_flags_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAS_TOKEN", "1")  # too short to be a secret: it would match everywhere
    refuse_secrets({"store": "/srv/store", "url": "http://127.0.0.1:1/v1", "n": [1, 2]}, "parameters")
