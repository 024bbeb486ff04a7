"""`tcobench presets`: the named workload shapes `run --preset` and matrix workloads can start from."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from tcobench.cli._common import guard, out
from tcobench.cli._fit import Col, print_table

__all__ = ["register"]


def _presets(
    name: Annotated[str | None, typer.Argument(help="Show one preset's fields in full.")] = None,
) -> None:
    """List the workload presets: lengths, concurrency sweep, duration, SLO and the public shape each follows."""
    from tcobench.errors import ConfigError
    from tcobench.tasks.workload import preset_workload, presets

    known = presets()
    if name is not None:
        if name not in known:
            raise ConfigError(f"preset: unknown preset {name!r} (presets: {', '.join(known)})")
        preset = known[name]
        out.print(f"{preset.name}: {preset.description}\nsource: {preset.source}", highlight=False)
        for key, value in preset.workload.items():
            out.print(f"  {key} = {value}", highlight=False)
        return
    rows = []
    for preset in known.values():
        w = preset_workload(preset)
        slo = [(name, getattr(w.slo, f"{name}_ms")) for name in ("ttft", "tpot", "itl")]
        targets = ", ".join(f"{name} {value:g} ms" for name, value in slo if value is not None)
        rows.append(
            [
                preset.name,
                w.input_tokens.describe() if w.input_tokens is not None else "literal prompts",
                w.output_tokens.describe() if w.output_tokens is not None else f"up to {w.max_tokens}",
                ", ".join(map(str, w.concurrency)) + (" (sweep)" if w.sweep is not None else ""),
                f">= {w.duration_s:g} s" if w.duration_s is not None else f"{w.requests} requests",
                f"{targets} at p{w.slo.quantile * 100:g}" if targets else "-",
            ]
        )
    # a name is never wrapped; the other columns wrap at spaces and separators; the SLO goes first when too narrow
    cols = [
        Col("preset", "left"),
        Col("input tokens", "left", wrap=True),
        Col("output tokens", "left", wrap=True),
        Col("concurrency", "left", wrap=True),
        Col("measure", "left", wrap=True, drop=1),
        Col("SLO", "left", wrap=True, drop=2),
    ]
    print_table("Workload presets (tcobench run --preset NAME)", cols, [[escape(c) for c in r] for r in rows])
    out.print("`tcobench presets NAME` shows a preset's fields and the public benchmark it follows.", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("presets")(guard(_presets))
