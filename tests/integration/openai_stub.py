"""The mock server (bench/mock_engine.py) speaking the OpenAI streaming API with *its own* tokenizer, for tests.

What it stands in for: an OpenAI-compatible engine (vLLM, SGLang, ...) serving a model whose tokenizer is not
Gemma's. It follows the documented wire formats:

- ``GET /v1/models`` -> ``{"data": [{"id", "max_model_len"}]}`` (vLLM lists the context length there);
  ``GET /version`` -> ``{"version": ...}``;
- ``POST /tokenize`` and ``POST /detokenize`` in vLLM's form (``{"model", "prompt", "add_special_tokens",
  "return_token_strs"}`` -> ``{"count", "max_model_len", "tokens", "token_strs"}``; ``{"model", "tokens"}`` ->
  ``{"prompt"}``), only when ``tokenize_endpoint`` is on;
- ``POST /v1/completions`` and ``/v1/chat/completions`` with ``stream: true``: SSE chunks of one token each,
  then (with ``usage`` on) a final chunk whose ``usage.prompt_tokens`` is the server's own count: the tokenizer's
  ids of the prompt with special tokens (BOS); for chat, of a simple template ``<|role|>\\n{content}\\n`` per message
  plus ``<|assistant|>\\n``; then ``data: [DONE]``.

Output length: ``max_tokens`` tokens when the request has ``ignore_eos: true`` (and ``honours_ignore_eos``), else
the model "stops" after ``natural_stop`` tokens (finish_reason ``stop``). Each output token is the text
``ANSWER_WORD`` (one token of the tokenizer). The first token waits ``ttft_s(body)`` seconds (plantable per
request), the next ones ``token_gap_s``. Every request body is recorded for assertions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.mock_server import Options, Reply, Request, Running, start

__all__ = ["ANSWER_WORD", "StubConfig", "StubServer", "openai_stub"]

ANSWER_WORD = " the"


@dataclass
class StubConfig:
    tokenizer: Any  # a tokenizers.Tokenizer (with a BOS post-processor)
    model: str = "stub-model"
    max_model_len: int = 4096
    tokenize_endpoint: bool = True
    usage: bool = True
    natural_stop: int = 5
    honours_ignore_eos: bool = True  # False: a server that ignores ignore_eos (its model stops at natural_stop)
    token_gap_s: float = 0.002
    ttft_s: Callable[[dict[str, Any]], float] = lambda body: 0.005


@dataclass
class StubServer:
    url: str
    config: StubConfig
    running: Running | None = None

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """Every completion request's body, in arrival order."""
        assert self.running is not None
        return [r.body for r in self.running.requests if r.method == "POST" and r.path.startswith("/v1/")]

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The server's own count of a request's prompt (what it reports as usage.prompt_tokens)."""
        if "messages" in body:
            text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in body["messages"]) + "<|assistant|>\n"
        else:
            text = body["prompt"]
        return len(self.config.tokenizer.encode(text, add_special_tokens=True).ids)


def _routes(cfg: StubConfig) -> dict[tuple[str, str], Callable[[Request], Reply]]:
    def tokenize(request: Request) -> Reply:
        body = request.body or {}
        if "prompt" not in body:
            return Reply(400, {"error": "prompt is required"})
        enc = cfg.tokenizer.encode(body["prompt"], add_special_tokens=bool(body.get("add_special_tokens", True)))
        strs = enc.tokens if body.get("return_token_strs") else None
        return Reply(
            body={"count": len(enc.ids), "max_model_len": cfg.max_model_len, "tokens": enc.ids, "token_strs": strs}
        )

    def detokenize(request: Request) -> Reply:
        return Reply(body={"prompt": cfg.tokenizer.decode(request.body["tokens"], skip_special_tokens=False)})

    routes = {("GET", "/version"): lambda request: Reply(body={"version": "stub-1"})}
    if cfg.tokenize_endpoint:
        routes |= {("POST", "/tokenize"): tokenize, ("POST", "/detokenize"): detokenize}
    return routes


@contextmanager
def openai_stub(config: StubConfig) -> Iterator[StubServer]:
    """The stub on a free port of 127.0.0.1 (started in a thread, shut down on exit)."""
    server = StubServer("", config)
    options = Options(
        model=config.model,
        max_model_len=config.max_model_len,
        usage=config.usage,
        natural_stop=config.natural_stop,
        honours_ignore_eos=config.honours_ignore_eos,
        itl_s=config.token_gap_s,
        ttft_for=config.ttft_s,
        token_text=ANSWER_WORD,
        prompt_tokens=server.prompt_tokens,
        routes=_routes(config),
        record=True,
    )
    server.running = start(options)
    server.url = server.running.url
    try:
        yield server
    finally:
        server.running.stop()
