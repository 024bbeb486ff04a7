"""The tokenizer stored in a GGUF file, as a ``tokenizers.Tokenizer`` (no download, no model weights read).

A GGUF file carries its model's vocabulary (``tokenizer.ggml.*``): tokens, scores, token types and, for BPE
vocabularies, merges. Two families are converted:

Design notes: docs/dev/architecture/workloads.md#tasks-workload-gguf-vocab.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from pathlib import Path
from typing import Any

from tcobench.errors import ConfigError

__all__ = ["gguf_tokenizer", "read_gguf_metadata"]

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# byte-level BPE pre-tokenizer patterns by tokenizer.ggml.pre (llama.cpp src/llama-vocab.cpp)
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)
_QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_PRE_PATTERNS = {
    "default": _GPT2,
    "gpt2": _GPT2,
    "gpt-2": _GPT2,
    "llama3": _LLAMA3,
    "llama-bpe": _LLAMA3,
    "llama-v3": _LLAMA3,
    "smaug-bpe": _LLAMA3,
    "qwen2": _QWEN2,
    "deepseek-r1-qwen": _QWEN2,
}
_NORMAL, _CONTROL, _USER_DEFINED = 1, 3, 4


class _Reader:
    def __init__(self, buf: mmap.mmap) -> None:
        self.buf, self.off = buf, 0

    def unpack(self, fmt: str) -> Any:
        value = struct.unpack_from(fmt, self.buf, self.off)[0]
        self.off += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        size = self.unpack("<Q")
        raw = self.buf[self.off : self.off + size]
        self.off += size
        return raw.decode("utf-8", "replace")

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            itype, count = self.unpack("<I"), self.unpack("<Q")
            return [self.value(itype) for _ in range(count)]
        raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_metadata(path: Path, prefix: str = "") -> dict[str, Any]:
    """The key/value metadata of a GGUF file (keys starting with ``prefix``); ConfigError if it is not GGUF."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            if buf[:4] != b"GGUF":
                raise ConfigError(f"{path} is not a GGUF file (no GGUF magic)")
            reader = _Reader(buf)
            reader.off = 8  # magic, version
            _tensors, count = reader.unpack("<Q"), reader.unpack("<Q")
            meta: dict[str, Any] = {}
            for _ in range(count):
                key, vtype = reader.string(), reader.unpack("<I")
                value = reader.value(vtype)
                if key.startswith(prefix):
                    meta[key] = value
            return meta
    except (OSError, ValueError, struct.error) as exc:
        raise ConfigError(f"cannot read GGUF metadata from {path}: {exc}") from exc


def _spm_merges(tokens: list[str], scores: list[float], types: list[int], vocab: dict[str, int]) -> list[Any]:
    ranked: list[tuple[float, int, str, str]] = []
    for index, piece in enumerate(tokens):
        if types[index] != _NORMAL:
            continue
        local = sorted(
            (vocab[piece[:k]], vocab[piece[k:]], piece[:k], piece[k:])
            for k in range(1, len(piece))
            if piece[:k] in vocab and piece[k:] in vocab
        )
        ranked.extend((-scores[index], order, left, right) for order, (_, _, left, right) in enumerate(local))
    ranked.sort(key=lambda item: item[0])  # stable: ties keep the vocabulary order
    return [(left, right) for _, _, left, right in ranked]


def _build(meta: dict[str, Any], where: Path) -> Any:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    kind = meta.get("tokenizer.ggml.model")
    tokens: list[str] = meta.get("tokenizer.ggml.tokens") or []
    types: list[int] = meta.get("tokenizer.ggml.token_type") or [_NORMAL] * len(tokens)
    if not tokens:
        raise ConfigError(f"{where} holds no tokenizer (tokenizer.ggml.tokens missing)")
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    if kind == "llama":
        scores: list[float] = meta.get("tokenizer.ggml.scores") or [0.0] * len(tokens)
        merges = _spm_merges(tokens, scores, types, vocab)
        unk = tokens[unk_id] if unk_id is not None else None
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=unk, fuse_unk=True, byte_fallback=True))
        steps: list[Any] = [normalizers.Replace(" ", "\u2581")]
        if meta.get("tokenizer.ggml.add_space_prefix", True):
            steps.insert(0, normalizers.Prepend("\u2581"))
        tokenizer.normalizer = normalizers.Sequence(steps)
        tokenizer.decoder = decoders.Sequence(
            [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
            + ([decoders.Strip(" ", 1, 0)] if meta.get("tokenizer.ggml.add_space_prefix", True) else [])
        )
    elif kind == "gpt2":
        pre = str(meta.get("tokenizer.ggml.pre", "default"))
        if pre not in _PRE_PATTERNS:
            raise ConfigError(
                f"{where}: byte-level BPE with pre-tokenizer {pre!r} is not supported "
                f"(supported: {', '.join(sorted(_PRE_PATTERNS))}); give the model's tokenizer.json instead"
            )
        merges = [tuple(m.split(" ", 1)) for m in meta.get("tokenizer.ggml.merges") or []]
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_PRE_PATTERNS[pre]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tokenizer.decoder = decoders.ByteLevel()
    else:
        raise ConfigError(
            f"{where}: tokenizer model {kind!r} is not supported (llama, gpt2); give the model's tokenizer.json instead"
        )
    specials = [i for i, t in enumerate(types) if t in (_CONTROL, _USER_DEFINED)]
    tokenizer.add_special_tokens([AddedToken(tokens[i], normalized=False) for i in specials if types[i] == _CONTROL])
    tokenizer.add_tokens(
        [AddedToken(tokens[i], normalized=False, special=False) for i in specials if types[i] == _USER_DEFINED]
    )
    bos = meta.get("tokenizer.ggml.bos_token_id")
    if bos is not None and meta.get("tokenizer.ggml.add_bos_token", kind == "llama"):
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{tokens[bos]} $A", pair=f"{tokens[bos]} $A $B", special_tokens=[(tokens[bos], bos)]
        )
    return tokenizer


def _vocab_key(meta: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    for key in sorted(meta):
        digest.update(key.encode())
        digest.update(repr(meta[key]).encode())
    return digest.hexdigest()[:24]


def gguf_tokenizer(path: Path, cache_dir: Path | None) -> Any:
    """The GGUF file's tokenizer as a ``tokenizers.Tokenizer``; converted once per vocabulary, then cached."""
    from tokenizers import Tokenizer

    meta = read_gguf_metadata(path, prefix="tokenizer.")
    meta.pop("tokenizer.chat_template", None)
    cached = cache_dir / f"gguf-tokenizer-{_vocab_key(meta)}.json" if cache_dir is not None else None
    if cached is not None and cached.is_file():
        try:
            return Tokenizer.from_file(str(cached))
        except Exception:  # a damaged cache entry (tokenizers raises its own exception types): convert afresh
            cached.unlink(missing_ok=True)
    tokenizer = _build(meta, path)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{id(tokenizer)}.tmp")
        tokenizer.save(str(tmp))
        tmp.replace(cached)
    return tokenizer
