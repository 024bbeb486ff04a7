"""tls_context: one SSL context per process, for every httpx client tcobench opens.

httpx builds a new default SSL context (certifi's CA bundle loaded and parsed) for each client it is not given one, even
for a plain-HTTP loopback engine, and a nightly cell opens five (tokenizer, engine metrics, preflight, the load
generator's pool...): a measurable share of a fleet host run's CPU (docs/dev/performance.md#tls-context). One context
serves every connection: OpenSSL's context is safe to share once built, and ``trust_env=False`` keeps SSL_CERT_FILE /
SSL_CERT_DIR from the environment out, as the clients' own ``trust_env=False`` keeps proxies out.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx

__all__ = ["tls_context"]


@cache
def tls_context() -> ssl.SSLContext:
    """httpx's default client context (certificates verified against certifi's bundle), built once per process."""
    return httpx.create_ssl_context(trust_env=False)
