"""cli/_coercion.py: an option's value that needs no conversion skips typer's pydantic adapter, and every value
comes out as typer's own converter gives it (or fails with its message)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
import typer._coercion
from typer.core import TyperGroup
from typer.testing import CliRunner

from tcobench.cli._coercion import defer_coercion


class Colour(enum.Enum):
    red = "red"
    blue = "blue"


class _Deferring(TyperGroup):
    """A group that defers its commands' conversion as tcobench's root group does (cli/main.py)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return defer_coercion(command) if command is not None else None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        defer_coercion(self)
        return super().main(*args, **kwargs)


def _app(seen: dict[str, Any], deferred: bool) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, cls=_Deferring if deferred else TyperGroup)

    @app.command()
    def show(
        name: Annotated[str | None, typer.Option()] = None,
        label: Annotated[str, typer.Option()] = "plain",
        count: Annotated[int, typer.Option()] = 5,
        ranged: Annotated[int, typer.Option(min=1, max=9)] = 3,
        clamped: Annotated[int, typer.Option(min=1, max=9, clamp=True)] = 9,
        low: Annotated[float, typer.Option(min=0.0)] = 300.0,
        share: Annotated[float, typer.Option()] = 0.5,
        whole: Annotated[float, typer.Option()] = 2,
        colour: Annotated[Colour, typer.Option()] = Colour.red,
        path: Annotated[Path | None, typer.Option()] = None,
        tags: Annotated[list[str] | None, typer.Option("--tag")] = None,
        loud: Annotated[bool, typer.Option("--loud")] = False,
    ) -> None:
        given = dict(name=name, label=label, count=count, ranged=ranged, clamped=clamped, low=low, share=share)
        given.update(whole=whole)
        seen.update(given, colour=colour, path=path, tags=tags, loud=loud)
        seen["types"] = {k: type(v).__name__ for k, v in seen.items()}

    @app.command()
    def other() -> None:
        """A second command, so that `show` is a sub-command of a group."""

    return app


CASES = [
    [],
    ["--name", "x", "--label", " spaced "],
    ["--count", "7", "--share", "0.25", "--whole", "3"],
    ["--count", "abc"],
    ["--share", "1e-3", "--count", "+4"],
    ["--ranged", "12"],
    ["--ranged", "4"],
    ["--clamped", "12", "--low", "-1"],
    ["--clamped", "0", "--low", "0"],
    ["--colour", "blue", "--path", "a/b"],
    ["--colour", "green"],
    ["--tag", "a", "--tag", "b", "--loud"],
    ["--help"],
]


def _invoke(args: list[str], deferred: bool) -> tuple[int, str, dict[str, Any]]:
    seen: dict[str, Any] = {}
    done = CliRunner().invoke(_app(seen, deferred), ["show", *args])
    return done.exit_code, done.output, seen


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a) or "defaults")
def test_every_value_and_error_is_typers_own(args: list[str]) -> None:
    assert _invoke(args, deferred=True) == _invoke(args, deferred=False)


def test_defaults_and_values_that_need_no_conversion_build_no_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    real = typer._coercion.build_runtime_param
    monkeypatch.setattr(typer._coercion, "build_runtime_param", lambda d: built.append(d.annotation) or real(d))
    monkeypatch.setattr(typer.core, "build_runtime_param", typer._coercion.build_runtime_param)
    code, _, seen = _invoke(["--name", "x", "--label", "y"], deferred=True)
    assert code == 0 and (seen["name"], seen["count"], seen["whole"]) == ("x", 5, 2)
    # built: whole's (its default is an int for a float option: 2 -> 2.0) and the enum's; not name's, label's,
    # count's, share's, path's, tags', --help's, nor those of the ranged options, whose defaults are within range
    assert sorted(map(str, built)) == sorted(map(str, [float, Colour]))
    built.clear()
    code, _, seen = _invoke(["--count", "7"], deferred=True)
    assert code == 0 and seen["count"] == 7 and int in built
