"""The measured model's tokenizer: the engine's own (``POST /tokenize``) or a local file, never a download.

``resolve_tokenizer`` picks one from ``workload.tokenizer``:

- ``auto``: the engine's ``POST /tokenize`` (llama.cpp's ``{"content"}`` form, else vLLM's ``{"model", "prompt"}``
  form), else the GGUF file the engine serves (embedded engine, llama.cpp container), else none;
- ``engine``: the engine's, or a ConfigError when it offers none;
- a path: a ``.gguf`` file (its vocabulary, ``gguf_vocab``) or a ``tokenizer.json`` (or a folder holding one),
  read with the ``tokenizers`` library.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tcobench.errors import ConfigError
from tcobench.tasks.tls import tls_context
from tcobench.tasks.workload.gguf_vocab import gguf_tokenizer

__all__ = [
    "Encoded",
    "EngineTokenizer",
    "LocalTokenizer",
    "PromptTokenizer",
    "engine_tokenizer",
    "lead_of_token_string",
    "local_tokenizer",
]

Spans = list[tuple[int, int]]
# How a tokenizer's own token strings spell a leading space or newline (byte-level BPE, SentencePiece)
_SPACE_MARKS = ("\u0120", "\u2581", " ", "<0x20>")
_NEWLINE_MARKS = ("\u010a", "\n", "<0x0A>")


def lead_of_token_string(token: str) -> str:
    """' ', '\\n' or '' : what a token string in the tokenizer's own spelling ("Ġthe", "▁the", "<0x0A>") starts with."""
    if token.startswith(_SPACE_MARKS):
        return " "
    if token.startswith(_NEWLINE_MARKS):
        return "\n"
    return ""


@dataclass(frozen=True)
class Encoded:
    """Token ids of a text, with each token's character span where known, else each token's first character
    class (' ', '\\n' or '') from the tokenizer's token strings."""

    ids: list[int]
    spans: Spans | None = None
    leads: list[str] | None = None


class PromptTokenizer(ABC):
    """Counts and cuts text in the measured model's tokens (no special tokens unless asked)."""

    name: str  # provenance for the run row, e.g. "engine POST /tokenize (llama.cpp)" or "gguf:/path (sha256 ...)"

    @abstractmethod
    def encode(self, text: str) -> Encoded:
        """Token ids of ``text`` without special tokens, with spans (or leading characters) where known."""

    @abstractmethod
    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``."""

    @abstractmethod
    def special_tokens(self) -> int:
        """Tokens the model adds to a plain prompt (BOS): a completion prompt's overhead."""

    def count(self, text: str) -> int:
        return len(self.encode(text).ids)

    def close(self) -> None:
        """Release connections (engine tokenizers)."""
        return None


class LocalTokenizer(PromptTokenizer):
    """A ``tokenizers.Tokenizer`` from a tokenizer.json or a GGUF file's vocabulary."""

    def __init__(self, tokenizer: Any, name: str) -> None:
        self._tok, self.name = tokenizer, name

    def encode(self, text: str) -> Encoded:
        encoding = self._tok.encode(text, add_special_tokens=False)
        return Encoded(list(encoding.ids), [(int(a), int(b)) for a, b in encoding.offsets])

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=False))

    def special_tokens(self) -> int:
        with_specials = self._tok.encode("a", add_special_tokens=True).ids
        return len(with_specials) - len(self._tok.encode("a", add_special_tokens=False).ids)


def _file_id(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def local_tokenizer(path: Path, cache_dir: Path | None) -> LocalTokenizer:
    """A tokenizer.json (or a folder with one) or a .gguf file; ConfigError naming the path otherwise."""
    from tokenizers import Tokenizer

    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise ConfigError(f"workload.tokenizer: {path} does not exist (give a tokenizer.json or a .gguf file)")
    if path.suffix == ".gguf":
        return LocalTokenizer(gguf_tokenizer(path, cache_dir), f"gguf:{path}")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises plain Exception subclasses for malformed files
        raise ConfigError(f"workload.tokenizer: {path} is not a tokenizer.json: {exc}") from exc
    return LocalTokenizer(tokenizer, f"tokenizer.json:{path} (sha256 {_file_id(path)})")


_MAX_ANSWER_BYTES = 64 << 20  # a /tokenize answer larger than this is refused (a hostile or broken server)


def _post_json(client: httpx.Client, url: str, body: dict[str, Any], timeout_s: float) -> tuple[int, Any]:
    """POST ``body`` and read the whole answer within ``timeout_s`` in all (httpx's timeout is per read, so a server
    that keeps sending would never end) and at most _MAX_ANSWER_BYTES; (status, parsed JSON or None)."""
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    size = 0
    with client.stream("POST", url, json=body) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > _MAX_ANSWER_BYTES:
                raise httpx.ReadError(f"answer over {_MAX_ANSWER_BYTES >> 20} MiB")
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(f"answer not complete after {timeout_s:g} s")
            chunks.append(chunk)
        status = response.status_code
    if status != 200:
        return status, None
    return status, json.loads(b"".join(chunks))


class EngineTokenizer(PromptTokenizer):
    """The engine's own ``POST /tokenize`` and ``POST /detokenize`` (llama.cpp or vLLM request forms)."""

    def __init__(self, base_url: str, model: str, flavour: str, client: httpx.Client, timeout_s: float = 30.0) -> None:
        self._base, self._model, self._flavour, self._client = base_url, model, flavour, client
        self._timeout_s = timeout_s
        self.name = f"engine POST /tokenize ({flavour})"

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        try:
            status, answer = _post_json(self._client, f"{self._base}{path}", body, self._timeout_s)
        except (httpx.HTTPError, ValueError) as exc:
            raise ConfigError(f"engine tokenizer {self._base}{path}: {exc or type(exc).__name__}") from exc
        if status != 200:
            raise ConfigError(f"engine tokenizer {self._base}{path} answered HTTP {status}")
        return answer

    def _tokenize(self, text: str, special: bool, pieces: bool = False) -> dict[str, Any]:
        if self._flavour == "llama.cpp":
            body: dict[str, Any] = {"content": text, "add_special": special, "with_pieces": pieces}
        else:
            body = {"model": self._model, "prompt": text, "add_special_tokens": special, "return_token_strs": pieces}
        answer = self._post("/tokenize", body)
        if not isinstance(answer, dict) or not isinstance(answer.get("tokens"), list):
            raise ConfigError(f"engine tokenizer {self._base}/tokenize gave no token list")
        return answer

    def encode(self, text: str) -> Encoded:
        answer = self._tokenize(text, special=False, pieces=True)
        tokens = answer["tokens"]
        if self._flavour != "llama.cpp":  # vLLM: ids, and the tokenizer's own token strings when it offers them
            strings = answer.get("token_strs")
            leads = [lead_of_token_string(str(t)) for t in strings] if isinstance(strings, list) else None
            return Encoded([int(t) for t in tokens], leads=leads)
        ids = [int(t["id"]) for t in tokens]
        pieces = [t.get("piece") for t in tokens]
        if not all(isinstance(p, str) for p in pieces) or "".join(pieces) != text:
            leads = [p[:1] if isinstance(p, str) and p[:1] in (" ", "\n") else "" for p in pieces]
            return Encoded(ids, leads=leads)  # byte pieces or a normalising tokenizer: cut by decoding instead
        spans, at = [], 0
        for piece in pieces:
            spans.append((at, at + len(piece)))
            at += len(piece)
        return Encoded(ids, spans)

    def decode(self, ids: list[int]) -> str:
        body: dict[str, Any] = (
            {"tokens": ids} if self._flavour == "llama.cpp" else {"model": self._model, "tokens": ids}
        )
        answer = self._post("/detokenize", body)
        text = answer.get("content", answer.get("prompt"))
        if not isinstance(text, str):
            raise ConfigError(f"engine tokenizer {self._base}/detokenize gave no text")
        return text

    def special_tokens(self) -> int:
        return len(self._tokenize("a", special=True)["tokens"]) - len(self._tokenize("a", special=False)["tokens"])

    def close(self) -> None:
        self._client.close()


def engine_tokenizer(base_url: str, model: str, timeout_s: float = 30.0) -> EngineTokenizer | None:
    """The engine's tokenizer when it offers ``POST /tokenize`` in llama.cpp's or vLLM's form, else None."""
    client = httpx.Client(timeout=timeout_s, trust_env=False, verify=tls_context())
    probes = [
        ("llama.cpp", {"content": "Hello world", "add_special": False}),
        ("vllm", {"model": model, "prompt": "Hello world", "add_special_tokens": False}),
    ]
    for flavour, body in probes:
        try:
            _, answer = _post_json(client, f"{base_url}/tokenize", body, timeout_s)
            tokens = answer.get("tokens") if isinstance(answer, dict) else None
        except httpx.TimeoutException:
            break  # no answer in time: the other form would wait as long for nothing
        except (httpx.HTTPError, ValueError):
            tokens = None
        if isinstance(tokens, list) and tokens:
            return EngineTokenizer(base_url, model, flavour, client, timeout_s)
    client.close()
    return None
