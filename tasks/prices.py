"""load_prices: read and validate a price table (TOML); check_keys: the rows a run asks for exist.

The shipped table is ``tcobench/data/prices.toml``. Every failure is one PricingError line that
names the file and the field path, e.g.
``prices.toml: hardware.nvidia-h200-sxm.lifetime_months: Input should be greater than 0``.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tcobench.errors import PricingError
from tcobench.schemas import PriceTable

if TYPE_CHECKING:
    from tcobench.schemas import PricingConfig

__all__ = ["SHIPPED_TABLE", "check_keys", "load_prices"]

SHIPPED_TABLE = "tcobench/data/prices.toml"  # how the shipped table is named in messages


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read(path: Path | None) -> tuple[str, str]:
    """(name for messages, TOML text) of the given table or of the shipped one."""
    if path is None:
        return SHIPPED_TABLE, files("tcobench").joinpath("data/prices.toml").read_text("utf-8")
    try:
        return str(path), path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PricingError(f"{path}: cannot read the price table: {_one_line(str(exc))}") from exc


def _first_non_finite(data: Any, where: str = "") -> str | None:
    """Field path of the first inf/nan in the parsed TOML (JSON mode would accept inf), or None."""
    if isinstance(data, float) and not math.isfinite(data):
        return where
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        found = _first_non_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def load_prices(path: Path | None = None) -> PriceTable:
    """Read and validate a price table; None means the shipped one."""
    name, text = _read(path)
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PricingError(_one_line(f"{name}: invalid TOML: {exc}")) from exc
    bad = _first_non_finite(data)
    if bad is not None:
        raise PricingError(f"{name}: {bad}: Input should be a finite number")
    try:
        # JSON mode: TOML dates become ISO strings, which the strict date fields accept there.
        return PriceTable.model_validate_json(json.dumps(data, default=str))
    except ValidationError as exc:
        from tcobench.tasks.config import validation_message  # the run's configuration module: not on a read path

        raise PricingError(validation_message(exc, name)) from exc


def check_keys(prices: PriceTable, pricing: PricingConfig, where: str, names: Mapping[str, str] | None = None) -> None:
    """Raise PricingError unless the hardware, site and ops rows named by ``pricing`` exist; the error names
    ``where: pricing.SECTION``, or ``names[SECTION]`` (where that key was given: a flag, an inventory's field)."""
    table = str(pricing.table) if pricing.table is not None else SHIPPED_TABLE
    wanted = (
        ("hardware", pricing.hardware, prices.hardware),
        ("site", pricing.site, prices.site),
        ("ops", pricing.ops, prices.ops),
    )
    for section, key, rows in wanted:
        if key not in rows:
            named = (names or {}).get(section) or f"{where}: pricing.{section}"
            raise PricingError(f"{named}: no row {key!r} in [{section}] of {table} (valid: {', '.join(sorted(rows))})")
