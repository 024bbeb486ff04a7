"""`tcobench presets`: the named workload shapes `run --preset` and matrix workloads can start from."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ._common import guard, out

__all__ = ["register"]


def _presets(
    name: Annotated[str | None, typer.Argument(help="Show one preset's fields in full.")] = None,
) -> None:
    """List the workload presets: lengths, concurrency sweep, duration, SLO and the public shape each follows."""
    from tcobench.errors import ConfigError
    from tcobench.tasks.workload import presets

    known = presets()
    if name is not None:
        if name not in known:
            raise ConfigError(f"preset: unknown preset {name!r} (presets: {', '.join(known)})")
        preset = known[name]
        out.print(f"{preset.name}: {preset.description}\nsource: {preset.source}", highlight=False)
        for key, value in preset.workload.items():
            out.print(f"  {key} = {value}", highlight=False)
        return
    table = Table(title="Workload presets (tcobench run --preset NAME)", header_style="bold")
    for column in ("preset", "input tokens", "output tokens", "concurrency", "measure", "SLO"):
        table.add_column(column, overflow="fold")
    for preset in known.values():
        w = preset.workload
        slo = w.get("slo") if isinstance(w.get("slo"), dict) else {}
        targets = ", ".join(f"{k.removesuffix('_ms')} {v} ms" for k, v in (slo or {}).items() if k.endswith("_ms"))
        table.add_row(
            preset.name,
            str(w.get("input_tokens", "literal prompts")),
            str(w.get("output_tokens", w.get("max_tokens", "-"))),
            str(w.get("concurrency", "-")) + (" (sweep)" if w.get("sweep") else ""),
            f">= {w['duration_s']} s" if "duration_s" in w else f"{w.get('requests', '-')} requests",
            f"{targets} at p{float(slo['quantile']) * 100:g}" if targets and slo and "quantile" in slo else "-",
        )
    out.print(table)
    out.print("`tcobench presets NAME` shows a preset's fields and the public benchmark it follows.", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("presets")(guard(_presets))
