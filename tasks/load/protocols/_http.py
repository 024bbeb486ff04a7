"""Small helpers shared by the adapters' preflight checks."""

from __future__ import annotations

from typing import Any

import httpx

from tcobench.errors import EngineError

__all__ = ["get_json"]


async def get_json(
    client: httpx.AsyncClient, url: str, *, method: str = "GET", body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """(status, parsed JSON or None); connection problems become one EngineError naming the URL."""
    try:
        response = await client.request(method, url, json=body)
    except httpx.TimeoutException as exc:
        raise EngineError(f"no answer from {url} in time ({type(exc).__name__})") from exc
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot reach {url}: {exc or type(exc).__name__}") from exc
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
