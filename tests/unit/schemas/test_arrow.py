"""Arrow schemas derived from the record models: types, nullability, descriptions."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pydantic import BaseModel

from tcobench.schemas import RequestRecord, RunRecord, TelemetryRecord, arrow_schema, arrow_type
from tcobench.schemas.base import RunStatus

RECORDS: list[type[BaseModel]] = [RunRecord, RequestRecord, TelemetryRecord]


@pytest.mark.parametrize("model", RECORDS)
def test_schema_follows_the_model_field_by_field(model: type[BaseModel]) -> None:
    schema = arrow_schema(model)
    assert schema.names == list(model.model_fields)


@pytest.mark.parametrize("model", RECORDS)
def test_every_field_has_a_description(model: type[BaseModel]) -> None:
    for field in arrow_schema(model):
        assert field.metadata is not None, field.name
        description = field.metadata[b"description"].decode()
        assert description.strip(), f"{model.__name__}.{field.name} has no description"
        assert description == model.model_fields[field.name].description


@pytest.mark.parametrize(
    ("model", "name", "dtype", "nullable"),
    [
        (RunRecord, "run_id", pa.string(), False),
        (RunRecord, "started_ns", pa.int64(), False),
        (RunRecord, "measure_start_ns", pa.int64(), True),
        (RunRecord, "status", pa.string(), False),
        (RunRecord, "error", pa.string(), True),
        (RunRecord, "temperature", pa.float64(), True),
        (RunRecord, "rate_rps", pa.float64(), True),
        (RunRecord, "ignore_eos", pa.bool_(), False),
        (RunRecord, "utilisation", pa.float64(), False),
        (RequestRecord, "phase", pa.string(), False),
        (RequestRecord, "itl_ns", pa.list_(pa.int64()), False),
        (RequestRecord, "ttft_ns", pa.int64(), True),
        (RequestRecord, "output_tokens", pa.int64(), True),
        (TelemetryRecord, "power_mw", pa.int64(), True),
        (TelemetryRecord, "util_pct", pa.float64(), True),
    ],
)
def test_types_and_nullability(model: type[BaseModel], name: str, dtype: pa.DataType, nullable: bool) -> None:
    field = arrow_schema(model).field(name)
    assert field.type == dtype
    assert field.nullable is nullable


def test_nullability_matches_optional_annotations() -> None:
    for model in RECORDS:
        for field in arrow_schema(model):
            annotation = model.model_fields[field.name].annotation
            assert field.nullable == ("None" in repr(annotation)), f"{model.__name__}.{field.name}"


def test_arrow_type_maps_scalars_enums_lists_and_optionals() -> None:
    assert arrow_type(int) == (pa.int64(), False)
    assert arrow_type(float | None) == (pa.float64(), True)
    assert arrow_type(RunStatus) == (pa.string(), False)
    assert arrow_type(list[str]) == (pa.list_(pa.string()), False)


@pytest.mark.parametrize("annotation", [dict[str, int], int | str, bytes])
def test_arrow_type_refuses_what_it_cannot_store(annotation: object) -> None:
    with pytest.raises(TypeError):
        arrow_type(annotation)


def test_records_round_trip_through_the_schema() -> None:
    from tests.unit.factories import make_request, make_run

    for record in (make_run(), make_request()):
        schema = arrow_schema(type(record))
        table = pa.Table.from_pylist([record.model_dump(mode="json")], schema=schema)
        assert table.to_pylist() == [record.model_dump(mode="json")]
