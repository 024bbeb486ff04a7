"""One worker, one cell on a GPU host: a fleet night measured next to the GPU.

Everything real and on 127.0.0.1: PostgreSQL (Debian's server binaries in a temporary directory; without them, as on
the lent GPU machine, Prefect's own SQLite database, enough for one worker), `prefect server start` on it with an API
auth string, llama-server (a CUDA build) serving a synthetic model, one `tcobench worker
--host gpu-0`, and a `[fleet]` inventory of that one host whose matrix has one engine, the llama-server on the
host's loopback, and one workload (one cell: concurrency 1, ``--requests`` requests of ``--max-tokens`` tokens,
ignore_eos). Telemetry is the default (`auto`): NVML on an NVIDIA host, whose total-energy counter the `energy`
view uses. Prints the run row's placement, telemetry source and energy, and writes them as JSON to ``--out``.

    .venv/bin/python bench/gpu_fleet.py --llama-server /tmp/tcobench-gpu/build/bin/llama-server \\
        --model /tmp/tcobench-gpu/synth-llama-3b.gguf --out gpu-results/fleet.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import ROOT, load_average, machine
from fleet_overhead import POOL, night, workers

sys.path.insert(0, str(ROOT))
from tests.services import PostgresServer, PrefectServer, pg_bin  # noqa: E402  (a checkout's test services)

QUERY = """select r.client_placement, r.rtt_p50_ns, r.engine_url, r.telemetry_source, r.telemetry_note, r.gpu_name,
  r.status, e.energy_source, e.counter_j, e.integrated_j, e.energy_j, e.mean_w, e.j_per_output_token, e.valid,
  s.output_tok_s
from runs r join run_summary s using (run_id) left join energy e using (run_id)"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_llama(binary: Path, model: Path, alias: str, ngl: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(binary),
            "-m",
            str(model),
            "--alias",
            alias,
            "-ngl",
            str(ngl),
            "-np",
            "1",
            "-c",
            "8192",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-webui",
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=2, trust_env=False).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama-server not healthy after 600 s")


def write_plan(folder: Path, url: str, alias: str, requests: int, max_tokens: int) -> tuple[Path, Path]:
    inventory = folder / "inventory.toml"
    inventory.write_text(
        f'[fleet]\nwork_pool = "{POOL}"\npoll_s = 1\npickup_timeout_s = 600\n[[hosts]]\n'
        'name = "gpu-0"\nvendor = "nvidia"\ngpu_count = 1\nhardware = "nvidia-h200-sxm"\n'
        'site = "datacenter"\n'
    )
    matrix = folder / "matrix.toml"
    matrix.write_text(
        f'[[engines]]\nname = "llama-server"\nendpoint = "{url}"\n[[models]]\nname = "{alias}"\n'
        f'synthetic = true\n[[workloads]]\nname = "decode-{max_tokens}"\nrequests = {requests}\n'
        f"warmup_requests = 1\nmax_tokens = {max_tokens}\nignore_eos = true\n"
        "concurrency = [1]\n"
    )
    return inventory, matrix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-server", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="GGUF (tcobench models synth --shape llama-3b)")
    parser.add_argument("--alias", default="synth-llama-3b")
    parser.add_argument("--ngl", type=int, default=999, help="layers on the GPU (0 for a CPU dry run)")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=Path("gpu-results/fleet.json"))
    args = parser.parse_args()
    print(f"# {machine()}; load {load_average()}")
    folder = Path(tempfile.mkdtemp(prefix="tcob-gpu-fleet-"))
    # PostgreSQL when this machine has its server binaries (as a fleet runs); else Prefect's SQLite database, which
    # serves one worker (the lent GPU machine has no PostgreSQL): what this check shows is the worker measuring next
    # to the GPU, not the server's database
    pg = PostgresServer.start() if pg_bin() is not None else None
    database = "postgresql" if pg is not None else "sqlite"
    print(f"prefect server database: {database}")
    llama = None
    try:
        server = PrefectServer.start(pg.url) if pg is not None else PrefectServer.start_on(None)
        try:
            llama, url = start_llama(args.llama_server, args.model, args.alias, args.ngl, folder / "llama-server.log")
            inventory, matrix = write_plan(folder, url, args.alias, args.requests, args.max_tokens)
            with workers(server, None, ["gpu-0"], folder) as online_s:
                print(f"worker online in {online_s:.1f} s")
                result = night(server, None, inventory, matrix, str(folder / "store"), folder)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "TCOBENCH_"))}
            done = subprocess.run(
                [
                    str(Path(sys.executable).parent / "tcobench"),
                    "query",
                    QUERY,
                    "--format",
                    "json",
                    "--store",
                    str(folder / "store"),
                ],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            rows = json.loads(done.stdout) if done.returncode == 0 else done.stderr
        finally:
            server.stop()
    finally:
        if llama is not None:
            llama.terminate()
            llama.wait(30)
        if pg is not None:
            pg.stop()
    report = {"prefect_database": database, "night": {k: result[k] for k in ("rc", "wall_s", "status")}, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
