"""Report of bench/gpu_validate.sh: decode rate against llama-bench, integrated energy against the counter.

    python bench/gpu_report.py --store /tmp/tcobench-gpu/store --llama-bench-dir gpu-results

Runs are grouped by model alias ``synth-<shape>+<server configuration>``; each shape's llama-bench tg128 comes
from ``<dir>/llama-bench-<shape>.json``. Figures (all from the stored rows and llama-bench's JSON):
  ours / tg128       client-side decode tok/s per request ((output_tokens - 1) / decode time, mean over the run's
                     measured requests) / llama-bench tg128 avg_ts; the target (>= 0.97) applies at concurrency 1
  ms over tg128      1000/ours - 1000/tg128: per-token time the server spends beyond bare forward passes
  integrated/counter trapezoid integral of NVML power over the measurement span, divided by the NVML
                     total-energy counter delta over the same span                                 target within 1%
  J/token            energy of the measurement window / output tokens of its successful requests
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.query import connect

TARGET = 0.97


def _tg(path: Path) -> float | None:
    try:
        entries = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    rates = [e["avg_ts"] for e in entries if e.get("n_gen") and not e.get("n_prompt")]
    return float(rates[0]) if rates else None


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _shape_and_config(model_name: str) -> tuple[str, str]:
    name, _, config = model_name.partition("+")
    return name.removeprefix("synth-"), config or "default"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--llama-bench-dir", type=Path, required=True, help="holds llama-bench-<shape>.json")
    args = parser.parse_args()
    con = connect(args.store, load_prices(None))
    rows = (
        con.sql(
            "SELECT r.concurrency, r.gpu_name, r.driver_version, r.cuda_version, r.gpu_power_limit_mw,"
            " r.engine_version, r.extra_body,"
            " r.model_name, r.synthetic_model, r.telemetry_source, r.telemetry_note, s.n, s.errors,"
            " s.req_decode_tok_s_mean, s.server_decode_tok_s_mean, s.output_tok_s, e.counter_j, e.integrated_j,"
            " e.mean_w, e.idle_w, e.j_per_output_token, e.peak_vram_bytes, e.max_gap_ms, e.valid, e.invalid_reason,"
            " t.usd_per_m_output_tokens"
            " FROM runs r JOIN run_summary s USING (run_id) LEFT JOIN energy e USING (run_id)"
            " LEFT JOIN tco t USING (run_id) ORDER BY r.started_ns"
        )
        .to_arrow_table()
        .to_pylist()
    )
    if not rows:
        raise SystemExit(f"no runs in {args.store}")
    first = rows[0]
    print(
        f"GPU: {first['gpu_name']}, driver {first['driver_version']}, CUDA {first['cuda_version']}, "
        f"power limit {_fmt((first['gpu_power_limit_mw'] or 0) / 1000, '.0f')} W"
    )
    print(f"engine: {first['engine_version']}; synthetic models: {first['synthetic_model']}")
    print(f"telemetry: {first['telemetry_source']} {first['telemetry_note'] or ''}\n")
    shapes = dict.fromkeys(_shape_and_config(r["model_name"])[0] for r in rows)
    tgs = {shape: _tg(args.llama_bench_dir / f"llama-bench-{shape}.json") for shape in shapes}
    for shape, tg in tgs.items():
        print(f"llama-bench tg128 {shape}: {_fmt(tg, '.1f')} tok/s")
    print(
        "\n| shape | server | extra_body | conc | n | err | ours decode tok/s | engine-reported tok/s |"
        " ours / tg128 | ms over tg128 | aggregate tok/s | counter J | integrated J | integrated/counter - 1 |"
        " mean W | idle W | J/token | peak VRAM GiB | $/1M out |"
    )
    print("|" + "---|" * 19)
    for r in rows:
        shape, config = _shape_and_config(r["model_name"])
        tg, ours = tgs[shape], r["req_decode_tok_s_mean"]
        ratio = ours / tg if tg and ours else None
        over = 1000 / ours - 1000 / tg if tg and ours else None
        mark = "" if ratio is None or r["concurrency"] != 1 else (" (met)" if ratio >= TARGET else " (not met)")
        diff = r["integrated_j"] / r["counter_j"] - 1 if r["counter_j"] and r["integrated_j"] else None
        vram = r["peak_vram_bytes"] / 2**30 if r["peak_vram_bytes"] else None
        print(
            f"| {shape} | {config} | {r['extra_body'] or '-'} | {r['concurrency']} | {r['n']} | {r['errors']} | "
            f"{_fmt(ours, '.1f')} | {_fmt(r['server_decode_tok_s_mean'], '.1f')} | {_fmt(ratio, '.4f')}{mark} | "
            f"{_fmt(over, '.3f')} | {_fmt(r['output_tok_s'], '.1f')} | "
            f"{_fmt(r['counter_j'], '.1f')} | {_fmt(r['integrated_j'], '.1f')} | {_fmt(diff, '+.4%')} | "
            f"{_fmt(r['mean_w'], '.1f')} | {_fmt(r['idle_w'], '.1f')} | {_fmt(r['j_per_output_token'], '.4f')} | "
            f"{_fmt(vram, '.2f')} | {_fmt(r['usd_per_m_output_tokens'], '.4f')} |"
        )
        if r["valid"] is False:
            print(
                f"  energy figures of {r['model_name']} at concurrency {r['concurrency']} invalid: "
                f"{r['invalid_reason']}"
            )


if __name__ == "__main__":
    main()
