"""Command-line options shared by the command modules (cli, cli_analytics, cli_docker, cli_nightly)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["PricesOpt", "StoreOpt"]

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help=r"Parquet store root \[env TCOBENCH_STORE; default ~/.local/share/tcobench/store]."),
]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help="Price table (TOML); default: the shipped one.")]
