"""An engine's URL is the server's base: one that ends in a path tcobench adds itself (``/v1``, as OpenAI clients
take it) is refused at validation with the base URL to give instead (issue 41, item 5), never asked for
``/v1/v1/models`` later."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tcobench.schemas import BenchmarkConfig
from tcobench.schemas.inventory import MatrixEngine
from tcobench.schemas.urls import check_api_base


@pytest.mark.parametrize(
    ("url", "tail", "fix"),
    [
        ("http://127.0.0.1:8000/v1", "/v1", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/v1/", "/v1", "http://127.0.0.1:8000"),
        ("https://gateway.example/llm/V1", "/V1", "https://gateway.example/llm"),
        ("http://127.0.0.1:8000/v1/chat/completions", "/v1/chat/completions", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:11434/api/generate", "/api/generate", "http://127.0.0.1:11434"),
    ],
)
def test_a_url_ending_in_an_api_path_is_refused_with_its_base(url: str, tail: str, fix: str) -> None:
    with pytest.raises(ValueError, match="a path tcobench adds itself") as info:
        check_api_base(url)
    assert f"ends in {tail}," in str(info.value) and str(info.value).endswith(f"give the server's base URL: {fix}")


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        ("http://gateway.example/api", "http://gateway.example/api"),  # a gateway's prefix, not Ollama's /api
        ("http://gateway.example/v1beta", "http://gateway.example/v1beta"),
    ],
)
def test_a_base_url_is_kept(url: str, base: str) -> None:
    assert check_api_base(url) == base


def _endpoint(url: str) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate_json(json.dumps({"engine": {"kind": "endpoint", "url": url}}))


def test_engine_url_and_matrix_endpoint_refuse_v1() -> None:
    with pytest.raises(ValidationError, match=r"ends in /v1, .*give the server's base URL: http://127.0.0.1:8000"):
        _endpoint("http://127.0.0.1:8000/v1")
    assert _endpoint("http://127.0.0.1:8000/").engine.url == "http://127.0.0.1:8000"
    with pytest.raises(ValidationError, match=r"ends in /v1, .*give the server's base URL: http://127.0.0.1:8000"):
        MatrixEngine.model_validate({"name": "e", "endpoint": "http://127.0.0.1:8000/v1"})
    with pytest.raises(ValidationError, match="port 70000 is outside 1-65535"):
        MatrixEngine.model_validate({"name": "e", "endpoint": "http://127.0.0.1:70000"})
    assert MatrixEngine.model_validate({"name": "e", "endpoint": "http://127.0.0.1:8000"}).endpoint == (
        "http://127.0.0.1:8000"
    )
