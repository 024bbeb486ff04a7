"""What crosses from the nightly to a host's run: data only, never a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import BenchmarkConfig
from tcobench.tasks.fleet import (
    cells_from_parameters,
    host_parameters,
    prices_from_parameters,
    refuse_remote_engines,
    refuse_secrets,
)
from tcobench.tasks.inventory import NightlyPlan
from tcobench.tasks.prices import load_prices
from tcobench.tasks.runs import PARTIAL_THRESHOLD
from tests.unit.factories import fleet_plan

PRICES = load_prices(None)


@pytest.fixture
def plan(tmp_path: Path) -> NightlyPlan:
    return fleet_plan(tmp_path, ("host-a",), PRICES)


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


def test_the_nights_partial_threshold_is_a_parameter(plan: NightlyPlan) -> None:
    host, cells = plan.inventory.hosts[0], plan.cells_of("host-a")
    given = host_parameters(host, cells, "batch1", PRICES, "/srv/store", 2, 5.0, partial_threshold=0.2)
    assert json.loads(json.dumps(given))["partial_threshold"] == 0.2
    default = host_parameters(host, cells, "batch1", PRICES, "/srv/store", 2, 5.0)
    assert default["partial_threshold"] == PARTIAL_THRESHOLD


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ({"store": "s3://key:sekrit@bucket/x"}, "store holds a URL with a password"),
        (
            {"cells": [{"config": {"engine": {"url": "http://user:pw@127.0.0.1:1"}}}]},
            "cells.0.config.engine.url holds a URL with a password",
        ),
        (
            {"store": "postgres:dbname=lake password=aws-secret-value-123"},
            "store contains the value of the secret variable AWS_SECRET_ACCESS_KEY",
        ),
    ],
)
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


def test_a_host_refuses_engines_that_are_not_its_own(plan: NightlyPlan, monkeypatch: pytest.MonkeyPatch) -> None:
    (cell,) = plan.cells_of("host-a")
    refuse_remote_engines([cell])  # http://127.0.0.1:8080: this host's loopback
    elsewhere = cell.config.model_copy(
        update={"engine": cell.config.engine.model_copy(update={"url": "http://192.0.2.7:8080"})}
    )
    with pytest.raises(ConfigError, match="endpoint 'http://192.0.2.7:8080' is not on this host's loopback"):
        refuse_remote_engines([cell.__class__(cell.host, "e", "m", "w", elsewhere)])
    container = BenchmarkConfig.model_validate_json(
        '{"engine": {"kind": "container", "container": {"image": "llama-cpp-cpu"}}}'
    )
    monkeypatch.setenv("DOCKER_HOST", "tcp://gpu-7.example.internal:2376")  # the worker's environment
    with pytest.raises(ConfigError, match="the Docker daemon tcp://gpu-7.example.internal:2376 is not this host's"):
        refuse_remote_engines([cell.__class__(cell.host, "e", "m", "w", container)])
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock")  # rootless Docker on this host
    refuse_remote_engines([cell.__class__(cell.host, "e", "m", "w", container)])
