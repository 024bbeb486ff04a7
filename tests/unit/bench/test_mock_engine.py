"""bench/mock_engine.py on a real socket (127.0.0.1, port 0): each option changes what a client sees."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import pytest
from mock_engine import Fault, Options, Reply, Request, mock_engine

PROMPT = {"model": "zero", "prompt": "one two three", "max_tokens": 3, "stream": True}


def _sse(url: str, body: dict[str, Any] | None = None, path: str = "/v1/completions", **kw: Any) -> list[Any]:
    """The data lines of one streamed answer (JSON parsed; ``[DONE]`` as is)."""
    with (
        httpx.Client(trust_env=False, timeout=10) as client,
        client.stream("POST", url + path, json=body or PROMPT, **kw) as r,
    ):
        assert r.status_code == 200, r.read()
        data = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    return [d if d == "[DONE]" else json.loads(d) for d in data]


def _texts(chunks: list[Any]) -> list[str]:
    return [c["choices"][0]["text"] for c in chunks if c != "[DONE]" and c["choices"] and c["choices"][0]["text"]]


def _usage(chunks: list[Any]) -> dict[str, int] | None:
    found = [c["usage"] for c in chunks if c != "[DONE]" and "usage" in c]
    return found[0] if found else None


@pytest.fixture
def plain() -> Iterator[str]:
    with mock_engine(Options()) as running:
        yield running.url


@pytest.mark.parametrize(
    ("wire", "openai", "ollama"), [("both", 200, 200), ("openai", 200, 404), ("ollama", 404, 200), ("none", 404, 404)]
)
def test_wire_picks_the_built_in_routes(
    wire: Literal["both", "openai", "ollama", "none"], openai: int, ollama: int
) -> None:
    body = {"model": "zero", "prompt": "hi"}
    with mock_engine(Options(wire=wire)) as running, httpx.Client(base_url=running.url, trust_env=False) as c:
        assert c.post("/v1/completions", json=body).status_code == openai
        assert c.get("/v1/models").status_code == openai
        assert c.post("/api/generate", json=body).status_code == ollama
        assert c.get("/api/tags").status_code == ollama


def test_length_options(plain: str) -> None:
    assert _texts(_sse(plain)) == [" tok"] * 3  # max_tokens
    assert len(_texts(_sse(plain, {"prompt": "x"}))) == 16  # the default
    with mock_engine(Options(tokens=4, fixed_tokens=True, token_text=" hi")) as running:
        assert _texts(_sse(running.url)) == [" hi"] * 4


def test_natural_stop_unless_ignore_eos() -> None:
    body = {**PROMPT, "max_tokens": 8}
    with mock_engine(Options(natural_stop=5)) as running:
        stopped = _sse(running.url, body)
        forced = _sse(running.url, {**body, "ignore_eos": True})
    assert len(_texts(stopped)) == 5 and stopped[5]["choices"][0]["finish_reason"] == "stop"
    assert len(_texts(forced)) == 8 and forced[8]["choices"][0]["finish_reason"] == "length"
    with mock_engine(Options(natural_stop=5, honours_ignore_eos=False)) as running:
        assert len(_texts(_sse(running.url, {**body, "ignore_eos": True}))) == 5


def test_usage_and_the_servers_own_prompt_count(plain: str) -> None:
    assert _usage(_sse(plain)) == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}  # words
    with mock_engine(Options(prompt_tokens=lambda body: 40)) as running:
        assert _usage(_sse(running.url)) == {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
    with mock_engine(Options(usage=False)) as running:
        chunks = _sse(running.url)
    assert _usage(chunks) is None and chunks[-1] == "[DONE]"


def test_models_lists_the_model_and_its_context_length(plain: str) -> None:
    assert "max_model_len" not in httpx.get(plain + "/v1/models", trust_env=False).json()["data"][0]
    with mock_engine(Options(model="m1", max_model_len=2048)) as running:
        (entry,) = httpx.get(running.url + "/v1/models", trust_env=False).json()["data"]
    assert (entry["id"], entry["max_model_len"]) == ("m1", 2048)


def _first_and_total_s(url: str, body: dict[str, Any] | None = None) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    with (
        httpx.Client(trust_env=False, timeout=10) as client,
        client.stream("POST", url + "/v1/completions", json=body or PROMPT) as r,
    ):
        for line in r.iter_lines():
            if line.startswith("data: ") and not first:
                first = time.perf_counter() - start
    return first, time.perf_counter() - start


def test_fixed_latency_and_per_request_ttft() -> None:
    """Timers never fire early: the lower bounds hold on any machine."""
    with mock_engine(Options(ttft_s=0.15, itl_s=0.1)) as running:
        first, total = _first_and_total_s(running.url)
    assert first >= 0.15 and total >= 0.15 + 2 * 0.1
    ttft_for = lambda body: 0.3 if body.get("seed") == 1 else 0.0  # noqa: E731
    with mock_engine(Options(ttft_for=ttft_for)) as running:
        assert _first_and_total_s(running.url, {**PROMPT, "seed": 1})[0] >= 0.3
        assert _first_and_total_s(running.url, {**PROMPT, "seed": 2})[0] < 0.3


def test_itl_grows_with_the_streams_in_flight() -> None:
    """ITL = a + b x active: 4 streams at once take at least 3 steps of a + 4b each; 1 stream 3 steps of a + b."""
    options = Options(ttft_s=0.01, itl_s=0.01, itl_per_active_s=0.05, tokens=3)
    with mock_engine(options) as running:
        alone = _first_and_total_s(running.url)[1]
        totals: list[float] = []
        threads = [threading.Thread(target=lambda: totals.append(_first_and_total_s(running.url)[1])) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        deadline = time.monotonic() + 5  # the server ends a stream just after its last write
        while running.engine.active and time.monotonic() < deadline:
            time.sleep(0.01)
        assert running.engine.max_active == 4 and running.engine.active == 0
    assert alone >= 3 * 0.06
    assert min(totals) >= 3 * (0.01 + 0.05 * 2)  # at least two in flight at every step of every stream
    assert max(totals) >= 3 * (0.01 + 0.05 * 4) - 0.05  # the first steps saw all four


def test_framing_close_ends_each_answer_with_its_connection() -> None:
    with mock_engine(Options(framing="close")) as running, httpx.Client(trust_env=False) as client:
        with client.stream("POST", running.url + "/v1/completions", json=PROMPT) as r:
            assert "transfer-encoding" not in r.headers and r.headers["connection"] == "close"
            lines = [line for line in r.iter_lines() if line]
        assert lines[-1] == "data: [DONE]"
        # every answer says so, or a pooling client sends its next request on a connection about to close
        for path in ("/v1/models", "/nowhere"):
            assert client.get(running.url + path).headers["connection"] == "close", path


def _post(url: str, body: dict[str, Any] | None = None, **kw: Any) -> httpx.Response:
    return httpx.post(url + "/v1/completions", json=body or PROMPT, trust_env=False, timeout=10, **kw)


def test_fault_status_for_the_first_attempts_of_a_seed() -> None:
    fault = Fault(status=429, body={"error": "slow down"}, retry_after="1", first_attempts=2)
    with mock_engine(Options(fault=fault, record=True)) as running:
        seeded = {**PROMPT, "seed": 7}
        first, second, third = (_post(running.url, seeded) for _ in range(3))
        assert running.attempts == {7: 3}
    assert (first.status_code, first.headers["retry-after"], first.text) == (429, "1", '{"error": "slow down"}')
    assert second.status_code == 429 and third.status_code == 200


def test_fault_for_seeds_that_are_a_multiple() -> None:
    with mock_engine(Options(fault=Fault(status=500, seed_multiple=4))) as running:
        codes = [_post(running.url, {**PROMPT, "seed": s}).status_code for s in range(42, 50)]
    assert codes == [200, 200, 500, 200, 200, 200, 500, 200]


def test_fault_hang_answers_nothing_until_stopped() -> None:
    with mock_engine(Options(fault=Fault("hang"))) as running, pytest.raises(httpx.ReadTimeout):
        httpx.post(running.url + "/v1/completions", json=PROMPT, trust_env=False, timeout=0.3)


def test_fault_endless_never_finishes() -> None:
    with mock_engine(Options(fault=Fault("endless"))) as running, httpx.Client(trust_env=False) as client:
        with client.stream("POST", running.url + "/v1/completions", json=PROMPT) as r:
            seen = []
            for line in r.iter_lines():
                seen += [json.loads(line[6:])] if line else []
                if len(seen) == 40:
                    break
        assert len(seen) == 40 and all(c["choices"][0]["finish_reason"] is None for c in seen)


def test_fault_malformed_and_no_newline_frames() -> None:
    with mock_engine(Options(fault=Fault("malformed"))) as running:
        assert _post(running.url).text == "data: {not json at all\n\n"
    with mock_engine(Options(fault=Fault("no_newline"))) as running, httpx.Client(trust_env=False) as client:
        with client.stream("POST", running.url + "/v1/completions", json=PROMPT) as r:
            got = b""
            for part in r.iter_raw():
                got += part
                if len(got) >= 1 << 20:
                    break
        assert len(got) >= 1 << 20 and set(got) == {ord("x")}


def test_bearer_and_an_error_that_echoes_it() -> None:
    with mock_engine(Options(bearer="s3cret", record=True)) as running:
        assert _post(running.url).status_code == 401
        assert httpx.get(running.url + "/v1/models", trust_env=False).status_code == 401
        assert _post(running.url, headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert [r.headers.get("authorization") for r in running.requests if r.method == "POST"] == [
            None,
            "Bearer s3cret",
        ]
    with mock_engine(Options(fault=Fault("echo_auth", status=500))) as running:
        echoed = _post(running.url, headers={"Authorization": "Bearer k"})
    assert echoed.status_code == 500 and "Bearer k" in echoed.text


def test_webhook_posts_are_recorded_and_answered() -> None:
    with mock_engine(Options(webhook_status=503, record=True)) as running:
        answer = httpx.post(running.url + "/hooks/abc", json={"text": "night"}, trust_env=False)
        assert (answer.status_code, answer.text) == (503, "ok")
        assert [(r.path, r.body) for r in running.requests] == [("/hooks/abc", {"text": "night"})]
    with mock_engine(Options(record=True)) as running:  # no webhook option: no such route
        assert httpx.post(running.url + "/hooks/abc", json={}, trust_env=False).status_code == 404


def test_record_is_off_by_default() -> None:
    with mock_engine(Options()) as running:
        _post(running.url)
        assert running.requests == [] and running.attempts == {}


def test_replay_routes_play_frames_on_time_and_cut_short() -> None:
    def replay(request: Request) -> Reply:
        frames = [(0.0, b'{"a":1}\n'), (0.2, b'{"b":2}\n')]
        if request.body["how"] == "cut":
            return Reply(frames=[*frames, (0.0, b'{"half')], content_type="application/x-ndjson", end="cut")
        return Reply(frames=frames, content_type="application/x-ndjson")

    options = Options(wire="none", routes={("POST", "/api/x"): replay})
    with mock_engine(options) as running, httpx.Client(base_url=running.url, trust_env=False) as client:
        start = time.perf_counter()
        whole = client.post("/api/x", json={"how": "finish"})
        assert time.perf_counter() - start >= 0.2
        assert whole.text == '{"a":1}\n{"b":2}\n'
        with pytest.raises(httpx.RemoteProtocolError):
            client.post("/api/x", json={"how": "cut"})
        assert client.post("/api/y", json={}).status_code == 404


def test_a_stopped_server_releases_what_it_held() -> None:
    with mock_engine(Options(fault=Fault("hang"))) as running:
        errors: list[BaseException] = []

        def call() -> None:
            try:
                _post(running.url)
            except httpx.HTTPError as exc:
                errors.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        time.sleep(0.2)
    caller.join(5)
    assert not caller.is_alive() and len(errors) == 1  # the connection closed: the request ended at once
