"""`tcobench models synth|tokenizer`: synthetic models (random weights, real shapes) for hosts without downloads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcobench.cli._common import err, guard, out
from tcobench.schemas import SHAPES
from tcobench.settings import Settings

__all__ = ["register"]


def _models_synth(
    shape: Annotated[str, typer.Option(help=f"Architecture shape: {', '.join(SHAPES)}.")],
    path_out: Annotated[Path, typer.Option("--out", help="GGUF file to write.")],
    tokenizer: Annotated[
        Path | None, typer.Option(help=r"GGUF to take the tokenizer from \[the bundled Gemma 3 model].")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
) -> None:
    """Write a random-weight F16 GGUF of a real architecture shape (rows measured on it say synthetic)."""
    from tcobench.tasks.engine.model import bundled_model
    from tcobench.tasks.models import synth_model

    if shape not in SHAPES:
        raise typer.BadParameter(f"{shape!r}: choose one of {', '.join(SHAPES)}", param_hint="--shape")
    source = tokenizer or bundled_model(Settings().model_cache)[0]
    err.print(f"[dim]writing {shape} with the tokenizer of {source}...[/]")
    path = synth_model(SHAPES[shape], path_out, source, seed)
    size = path.stat().st_size / 2**30
    out.print(f"wrote {path} ({size:.2f} GiB): use --model-path {path}, or serve it and pass --synthetic")


def _models_tokenizer(
    path_out: Annotated[Path, typer.Option("--out", help="Tokenizer-only GGUF to write (a few MB).")],
    source: Annotated[Path | None, typer.Option("--from", help=r"GGUF to copy it from \[bundled Gemma 3].")] = None,
) -> None:
    """Copy a model's tokenizer into a small GGUF, to carry to a host that synthesises models offline."""
    from tcobench.tasks.engine.model import bundled_model
    from tcobench.tasks.models import write_tokenizer

    path = write_tokenizer(source or bundled_model(Settings().model_cache)[0], path_out)
    out.print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MiB)", highlight=False)


def register(app: typer.Typer) -> None:
    models = typer.Typer(
        help="Synthetic models (random weights, real shapes) for hosts without downloads.", no_args_is_help=False
    )
    models.command("synth")(guard(_models_synth))
    models.command("tokenizer")(guard(_models_tokenizer))
    app.add_typer(models, name="models")
