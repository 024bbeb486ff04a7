"""URLs in configuration: a known scheme, a host, and a port that is a number in 1-65535 (checked once, here).

An engine's URL is its base (``http://host:8000``): tcobench adds the API's paths itself (``/v1/...``,
``/api/...``), so a URL that already ends in one (``http://host:8000/v1``, as OpenAI clients take it) would be asked
for ``/v1/v1/models``; ``check_api_base`` refuses it with the URL to give instead.

``urllib`` parses ``http://host:70000`` and ``http://host:abc`` without complaint and raises only when the port is
read, deep inside a run; a configuration that names such a URL is refused at validation instead, naming the value.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["API_PATHS", "check_api_base", "check_url"]


def check_url(url: str, schemes: tuple[str, ...], *, needs_host: bool = True) -> str:
    """``url`` when its scheme is one of ``schemes`` (without ``://``), it names a host (unless ``needs_host`` is
    false) and any port is a number in 1-65535; ValueError naming the value and the valid choices otherwise."""
    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in schemes:
        choices = ", ".join(f"{s}://" for s in schemes)
        raise ValueError(f"must start with {choices}, got {url!r}")
    parts = urlsplit(url)
    if needs_host and not parts.hostname:
        raise ValueError(f"{url!r} names no host ({scheme}://HOST[:PORT])")
    try:
        port = parts.port
    except ValueError:
        text = parts.netloc.rpartition(":")[2]
        if text.isdigit():
            raise ValueError(f"{url!r}: port {text} is outside 1-65535") from None
        raise ValueError(f"{url!r}: port {text!r} is not a number (1-65535)") from None
    if port == 0:
        raise ValueError(f"{url!r}: port 0 is outside 1-65535")
    return url


# what a base URL must not end in: the paths the protocols add (tasks/load/protocols), longest first
API_PATHS = (
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/models",
    "/api/generate",
    "/api/chat",
    "/api/tags",
    "/v1",
)  # not a bare /api: a gateway may serve the OpenAI API under it (http://gateway/api/v1/...)


def check_api_base(url: str) -> str:
    """``url`` without a trailing ``/`` when its path does not end in an API path tcobench adds itself; ValueError
    with the base URL to give instead otherwise."""
    base = url.rstrip("/")
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    for suffix in API_PATHS:
        if path.lower().endswith(suffix):
            fix = urlunsplit(parts._replace(path=path[: len(path) - len(suffix)]))
            raise ValueError(
                f"{url!r} ends in {path[len(path) - len(suffix) :]}, a path tcobench adds itself (/v1/... for "
                f"protocol openai, /api/... for ollama); give the server's base URL: {fix}"
            )
    return base
