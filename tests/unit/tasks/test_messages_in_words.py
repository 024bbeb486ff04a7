"""Messages a user can meet name values as the user wrote them, never as Python shows them (issue 41, item 5: no
None, no True, no repr of a missing value)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tcobench.errors import ConfigError, EngineError
from tcobench.schemas import ContainerConfig, DatasetConfig
from tcobench.tasks.config import load_config
from tcobench.tasks.engine.container import _engine_of
from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.report import build_report
from tcobench.tasks.workload import open_dataset


def test_a_config_value_is_shown_as_toml_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[workload]\nrequests = true\n", "utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "workload.requests:" in str(info.value) and "got true" in str(info.value), str(info.value)
    assert "True" not in str(info.value)


def test_a_dataset_value_is_shown_as_json_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"prompt": "a", "output_tokens": True}) + "\n", "utf-8")
    with pytest.raises(ConfigError) as info:
        open_dataset(DatasetConfig.model_validate_json(json.dumps({"path": str(path)})), 1, 2048)
    assert str(info.value).endswith('line 1: "output_tokens" must be a positive integer, got true'), str(info.value)


def test_a_headline_side_without_the_other_names_the_one_given(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        build_report(tmp_path, load_prices(None), a="vendor=nvidia")
    assert str(info.value) == (
        "give both --a and --b for the headline pair, or neither: --a 'vendor=nvidia' was given without --b"
    )


@pytest.mark.parametrize(
    ("labels", "found"), [({}, "(it has none)"), ({"io.tcobench.engine": "x"}, "(its value 'x' is not one)")]
)
def test_an_image_without_an_engine_label_says_so_in_words(labels: dict[str, str], found: str) -> None:
    config = ContainerConfig.model_validate_json('{"image": "img"}')
    image = cast(Any, SimpleNamespace(labels=labels))
    with pytest.raises(EngineError) as info:
        _engine_of(config, image, "img:1")
    assert found in str(info.value) and "None" not in str(info.value), str(info.value)
