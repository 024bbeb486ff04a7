"""Terminal output at 80 columns (issue 29, item 7): every command's `--help` and the presets table.

Rules checked on the real CLI (typer + rich, COLUMNS=80): no line wider than 80; no help text, value or default cut
(each option's whole help is in the output, and no ellipsis); a plain flag shows no value placeholder; a default is
shown at most once; a table never breaks a name or an identifier mid-word (it wraps at separators or leaves out
columns with a note)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli._fit import Col, print_table
from tcobench.cli.reference import commands
from tcobench.tasks.workload import preset_workload, presets

runner = CliRunner()
WIDTH = 80
COMMANDS = [(path, command, ctx) for path, command, ctx in commands()]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help_of(path: list[str]) -> str:
    done = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert done.exit_code == 0, done.output
    return done.stdout


def _options(command: Any, ctx: Any) -> list[Any]:
    return [p for p in command.get_params(ctx) if p.param_type_name == "option" and not getattr(p, "hidden", False)]


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[" ".join(p) or "tcobench" for p, _, _ in COMMANDS])
def test_help_fits_80_columns_and_cuts_nothing(path: list[str], command: Any, ctx: Any) -> None:
    text = _help_of(path)
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, wide
    assert "…" not in text and "<bool>" not in text and not re.search(r"<\w+>", text), text
    flat = _flat(text)
    for param in _options(command, ctx):
        help_text = _flat((param.help or "").replace("\\[", "["))
        assert help_text in flat, f"{param.opts}: help cut or missing: {help_text!r}"


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[" ".join(p) or "tcobench" for p, _, _ in COMMANDS])
def test_plain_flags_have_no_placeholder_and_defaults_show_once(path: list[str], command: Any, ctx: Any) -> None:
    lines = _help_of(path).splitlines()
    for param in _options(command, ctx):
        first = sorted(param.opts, key=lambda o: (not o.startswith("--"), o))[0]
        (line,) = [ln for ln in lines if re.match(rf"\s+{re.escape(first)}(?=[\s,]|$)", ln)]
        if param.is_flag:  # the names, then the help (after two spaces) or nothing: no VALUE
            names = ", ".join(sorted(param.opts, key=lambda o: (not o.startswith("--"), o)))
            names += " / " + ", ".join(param.secondary_opts) if param.secondary_opts else ""
            rest = line.strip()[len(names) :]
            assert line.strip().startswith(names) and (rest == "" or rest.startswith("  ")), line
        block = _flat(_block(lines, line))
        own = re.findall(r"\[([^\]]*)\]", _flat((param.help or "").replace("\\[", "[")))
        shown = block.count("[default:")
        assert shown <= 1, block
        if param.default not in (None, "", (), []) and not param.is_flag:
            value = str(getattr(param.default, "value", param.default))
            assert not (shown and any(value in given for given in own)), f"default twice: {block}"


def _block(lines: list[str], first: str) -> str:
    """An option's lines: its first line and the more-indented lines below it."""
    k = lines.index(first)
    indent = len(first) - len(first.lstrip())
    out = [first]
    for line in lines[k + 1 :]:
        if not line.strip() or len(line) - len(line.lstrip()) <= indent:
            break
        out.append(line)
    return "\n".join(out)


def _unbroken(text: str, words: list[str]) -> list[str]:
    """Words broken mid-word in ``text``: neither whole on a line nor split only after separators."""
    tokens = {w for line in text.splitlines() for w in re.sub(r"[│┃║|]", " ", line).split()}

    def whole(word: str) -> bool:  # the word is a token, or a token ending at a separator followed by the rest
        if word in tokens:
            return True
        cuts = [m.end() for m in re.finditer(r"[,\-/:|_.=]+", word) if m.end() < len(word)]
        return any(word[:k] in tokens and whole(word[k:]) for k in cuts)

    return [word for word in words if not whole(word)]


def test_presets_table_at_80_columns_breaks_no_name() -> None:
    done = runner.invoke(app, ["presets"], env={"COLUMNS": str(WIDTH)})
    assert done.exit_code == 0, done.output
    text = done.stdout
    assert not [line for line in text.splitlines() if len(line) > WIDTH], text
    names = list(presets())
    tables = [line for line in text.splitlines() if line.startswith(("│", "┃"))]
    for name in names:  # a preset's name is whole on one line of the table
        assert any(f" {name} " in line for line in tables), (name, text)
    words = []
    for preset in presets().values():
        w = preset_workload(preset)
        for shape in (w.input_tokens, w.output_tokens):
            if shape is not None:
                words.append(shape.describe())
    assert not _unbroken(text, words), _unbroken(text, words)
    if "SLO" not in text.split("\n", 3)[2]:  # a column left out is named in a note
        assert "left out to fit 80 columns: SLO" in _flat(text)


def test_the_table_check_can_fail(capsys: pytest.CaptureFixture[str]) -> None:
    """The check above catches a table that folds a name mid-word (rich's overflow="fold" at 80 columns)."""
    table = Table()
    for column in ("preset", "input tokens", "output tokens", "concurrency", "measure", "SLO"):
        table.add_column(column, overflow="fold", width=8)
    table.add_row("summarise-8k-1k", "uniform:6553-8192", "uniform:819-1024", "1, 2", "20 requests", "-")
    Console(width=WIDTH).print(table)
    folded = capsys.readouterr().out
    assert _unbroken(folded, ["summarise-8k-1k", "uniform:6553-8192"]) == ["summarise-8k-1k", "uniform:6553-8192"]


def test_fit_wraps_identifiers_at_separators(capsys: pytest.CaptureFixture[str]) -> None:
    cols = [Col("name", "left"), Col("shape", "left", wrap=True), Col("note", "left", wrap=True)]
    rows = [["reasoning-1k-8k", "uniform:6553-8192,normal:1024,128", "a b c d e f g h i j k l m n o p q r s t u v"]]
    print_table(None, cols, rows, Console(width=40))
    text = capsys.readouterr().out
    assert not [line for line in text.splitlines() if len(line) > 40], text
    assert not _unbroken(text, ["reasoning-1k-8k", "uniform:6553-8192,normal:1024,128"]), text


def test_run_help_lists_its_options_in_panels() -> None:
    """Issue 42 item 7: `run --help` groups its options by configuration section, in run.PANELS' order; every option
    of run is in one of those panels (only --help is left in "Options")."""
    from tcobench.cli.run import PANELS

    lines = _help_of(["run"]).splitlines()
    titles = [line[:-1] for line in lines if line.endswith(":") and not line.startswith(" ")]
    assert titles == [*PANELS, "Options"], titles
    below = {title: lines[lines.index(title + ":") + 1 :] for title in titles}
    for title in PANELS:
        block = below[title][: next(k for k, ln in enumerate(below[title]) if not ln.strip())]
        assert block and all(ln.startswith(" ") for ln in block), (title, block)
    options = below["Options"][: next(k for k, ln in enumerate(below["Options"] + [""]) if not ln.strip())]
    assert [ln.split()[0] for ln in options] == ["--help"], options
    assert lines.index("Load:") < next(k for k, ln in enumerate(lines) if ln.strip().startswith("--concurrency"))
    assert next(k for k, ln in enumerate(lines) if ln.strip().startswith("--concurrency")) < lines.index("SLO:")
