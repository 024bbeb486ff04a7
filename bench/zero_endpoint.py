"""A streaming endpoint that costs (almost) nothing: measures the client, not an engine.

The mock server (bench/mock_engine.py) with its default options: OpenAI SSE (``/v1/completions``,
``/v1/chat/completions``, ``/v1/models``) and Ollama NDJSON (``/api/generate``, ``/api/chat``, ``/api/version``,
``/api/tags``); every response streams ``tokens`` chunks of one token each (the text `` tok``), the first one
``ttft`` after the request arrived and the next ones every ``itl``, on an absolute schedule. A request's
``max_tokens`` (or ``num_predict``) sets its length unless ``--fixed-tokens``.

    .venv/bin/python bench/zero_endpoint.py --port 0 --ttft-ms 20 --itl-ms 2 --tokens 16

Design notes: docs/dev/architecture/bench-and-build.md#bench-zero-endpoint.
"""

from __future__ import annotations

from mock_engine import EndpointConfig, Stats, ZeroProtocol, main, serve, start_in_thread

__all__ = ["EndpointConfig", "Stats", "ZeroProtocol", "main", "serve", "start_in_thread"]

if __name__ == "__main__":
    main(description=__doc__.splitlines()[0])
