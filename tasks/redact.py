"""redact: the one function that masks secrets in whatever tcobench records (rows, logs, artifacts, Prefect
parameters), so a credential given on a command line or in a request body never reaches a file.

A secret is:
- the value of a command-line flag named like one (``--api-key KEY``, ``--api-key=KEY``, ``--hf-token T``);
- the user info of a URL (``http://user:password@host`` -> ``http://***@host``);
- the credential after ``Bearer`` or ``Basic`` (as an Authorization header carries it);
- the value of a mapping key named like one, at any depth (``--extra-body '{"api_key": ...}'``, an engine
  container's ``HF_TOKEN``).

Design notes: docs/dev/architecture/hosts-and-engines.md#tasks-redact.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tcobench.schemas.base import redact_url

__all__ = ["MASK", "is_secret_name", "redact", "redact_args", "redact_text"]

MASK = "***"
_SECRET_WORDS = frozenset(
    {"secret", "password", "passwd", "apikey", "authorization", "auth", "credential", "credentials", "cookie", "bearer"}
)
_KEY_OWNERS = frozenset({"api", "private", "access", "secret", "signing", "encryption"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# "Bearer X" / "Basic X" as an Authorization header carries them: X a credential-like word (6+ characters; Basic's is
# base64 of user:password), so prose ("Basic setup") is left alone.
_SCHEME_CREDENTIAL = re.compile(r"\b(Bearer|Basic)(\s+)([^\s\"',;|]{6,})", re.IGNORECASE)
_FLAG_IN_TEXT = re.compile(r"(--?[A-Za-z][A-Za-z0-9_.-]*)(=|\s+)([^\s\"']+)")


def is_secret_name(name: str) -> bool:
    """Whether a flag, key or variable name names a secret (module docstring)."""
    words = [w.lower() for w in _WORD.findall(name)]
    if not words:
        return False
    if any(w in _SECRET_WORDS for w in words) or words[-1] == "token":
        return True
    return words[-1] == "key" and len(words) > 1 and words[-2] in _KEY_OWNERS


def _mask_flags(text: str) -> str:
    return _FLAG_IN_TEXT.sub(lambda m: f"{m[1]}{m[2]}{MASK}" if is_secret_name(m[1]) else m[0], text)


def _basic_credential(word: str) -> bool:
    """Whether ``word`` is what an Authorization: Basic header carries: base64 of ``user:password``."""
    try:
        return b":" in base64.b64decode(word + "=" * (-len(word) % 4), validate=True)
    except ValueError:
        return False


def _mask_credential(m: re.Match[str]) -> str:
    if m[1].lower() == "basic" and not _basic_credential(m[3]):
        return m[0]
    return f"{m[1]}{m[2]}{MASK}"


def redact_text(text: str) -> str:
    """``text`` with URL user info, ``Bearer``/``Basic`` credentials and secret flags' values masked."""
    text = redact_url(text)
    text = _SCHEME_CREDENTIAL.sub(_mask_credential, text)
    return _mask_flags(text)


def redact_args(args: Sequence[str]) -> list[str]:
    """A command line (argv) with the value after each secret flag masked, and each argument as ``redact_text``."""
    out: list[str] = []
    masked_next = False
    for arg in args:
        if masked_next:
            out.append(MASK)
            masked_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if arg.startswith("-") and is_secret_name(flag):
            if eq:
                out.append(f"{flag}={MASK}")
            else:
                out.append(arg)
                masked_next = True
            continue
        out.append(redact_text(arg))
    return out


def redact(value: Any) -> Any:
    """``value`` with every secret in it masked: strings (``redact_text``), argument lists (``redact_args``),
    mappings (secret-named keys' values masked, the others redacted in turn), other values unchanged."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {
            k: (MASK if is_secret_name(str(k)) and value[k] not in (None, "") else redact(v)) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            return type(value)(redact_args(value)) if isinstance(value, tuple) else redact_args(value)
        return type(value)(redact(v) for v in value)
    return value
