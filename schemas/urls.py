"""URLs in configuration: a known scheme, a host, and a port that is a number in 1-65535 (checked once, here).

``urllib`` parses ``http://host:70000`` and ``http://host:abc`` without complaint and raises only when the port is
read, deep inside a run; a configuration that names such a URL is refused at validation instead, naming the value.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["check_url"]


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
