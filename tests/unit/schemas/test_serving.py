"""schemas/serving.py: a configuration's identity and its label, and a stored value that is not a whole one."""

from __future__ import annotations

import pytest

from tcobench.schemas.serving import ServingConfig, config_label


def test_the_id_hashes_every_field_and_the_label_names_what_is_set() -> None:
    one = ServingConfig(engine="vllm", engine_version="0.32.0", model="m", tensor_parallel=2, max_num_seqs=256, gpus=2)
    assert one.config_id == ServingConfig.model_validate_json(one.canonical()).config_id
    assert one.config_id != one.model_copy(update={"max_num_seqs": 64}).config_id
    assert config_label(one.canonical()) == "vllm 0.32.0, TP=2, max_num_seqs 256, 2 GPUs"


@pytest.mark.parametrize(
    ("stored", "label"),
    [
        (None, None),
        ("", None),
        ('{"gpus": 2, "settings": {"tensor_parallel": 2}}', 'gpus 2, settings {"tensor_parallel": 2}'),
        ("not json", "not json"),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_a_stored_value_that_is_not_a_whole_configuration_is_named_by_what_it_holds(
    stored: str | None, label: str | None
) -> None:
    assert config_label(stored) == label
