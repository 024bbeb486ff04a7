"""classify_failure: the ``failure_class`` of a run that is not ok, from the ordered rules kept as data.

The shipped rules are ``tcobench/data/failure_classes.toml`` (its header documents each condition). The first rule
whose conditions all hold decides; a run none matches is ``unknown``; an ok run has no class. A bad rules file is
one ConfigError line naming the file, the rule, the field and the value.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import tomllib
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tcobench.errors import ConfigError
from tcobench.schemas import FailureClass, FailureRule, FailureRules, RunRecord, RunStatus

__all__ = [
    "DOCS_BEGIN",
    "DOCS_END",
    "SHIPPED_RULES",
    "classify_failure",
    "docs_with_rules",
    "error_kind",
    "exit_code_of",
    "load_failure_rules",
    "matching_rule",
    "rules_markdown",
]

SHIPPED_RULES = "tcobench/data/failure_classes.toml"  # how the shipped file is named in messages

_KIND = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): ")
_EXITED = re.compile(r"exited with code (-?\d+)")
_SIGNAL_NAME = re.compile(r"killed by (SIG[A-Z0-9]+)")
_SIGNAL_NUMBER = re.compile(r"killed by signal (\d+)")


def error_kind(error: str | None) -> str | None:
    """The error's kind: the word before its first ': ' (``EngineError: ...`` -> ``EngineError``), or None."""
    found = _KIND.match(error or "")
    return found[1].rsplit(".", 1)[-1] if found else None


def exit_code_of(error: str | None) -> int | None:
    """The engine's exit status the error reports: ``exited with code N`` -> N; ``killed by SIGNAME`` or ``killed
    by signal N`` -> 128 + the signal's number (the shell's convention); None when it reports none."""
    text = error or ""
    if (found := _EXITED.search(text)) is not None:
        return int(found[1])
    if (named := _SIGNAL_NAME.search(text)) is not None and named[1] in signal.Signals.__members__:
        return 128 + signal.Signals[named[1]].value
    if (number := _SIGNAL_NUMBER.search(text)) is not None:
        return 128 + int(number[1])
    return None


def _holds(rule: FailureRule, run: RunRecord) -> bool:
    error = run.error or ""
    if rule.status is not None and run.status not in rule.status:
        return False
    if rule.kind is not None and error_kind(error) not in rule.kind:
        return False
    if rule.text is not None and re.search(rule.text, error) is None:
        return False
    if rule.exit_code is not None and exit_code_of(error) not in rule.exit_code:
        return False
    for field, pattern in (rule.telemetry or {}).items():
        value = getattr(run, field)
        if value is None or re.search(pattern, str(value)) is None:
            return False
    return True


def matching_rule(run: RunRecord, rules: FailureRules) -> FailureRule | None:
    """The first rule whose conditions all hold for ``run``, or None."""
    return next((rule for rule in rules.rule if _holds(rule, run)), None)


def classify_failure(run: RunRecord, rules: FailureRules | None = None) -> RunRecord:
    """The run row with ``failure_class`` and ``failure_rule`` decided (None for an ok run); ``rules``: the shipped
    ones unless given."""
    if run.status is RunStatus.ok:
        return run.model_copy(update={"failure_class": None, "failure_rule": None})
    rule = matching_rule(run, rules if rules is not None else load_failure_rules())
    if rule is None:
        return run.model_copy(update={"failure_class": FailureClass.unknown, "failure_rule": None})
    return run.model_copy(update={"failure_class": rule.failure_class, "failure_rule": rule.name})


def _read(path: Path | None) -> tuple[str, str]:
    if path is None:
        return SHIPPED_RULES, files("tcobench").joinpath("data/failure_classes.toml").read_text("utf-8")
    try:
        return str(path), path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the failure rules: {' '.join(str(exc).split())}") from exc


def _problem(name: str, data: Any, exc: ValidationError) -> str:
    """One line: the file, the rule (its name and place), the field and the value, and what is wrong."""
    err = exc.errors(include_url=False)[0]
    loc = list(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top level)"
    if len(loc) >= 2 and loc[0] == "rule" and isinstance(loc[1], int):
        rules = data.get("rule") if isinstance(data, dict) else None
        raw = rules[loc[1]] if isinstance(rules, list) and loc[1] < len(rules) else None
        label = raw.get("name") if isinstance(raw, dict) else None
        field = ".".join(str(p) for p in loc[2:]) or "(the rule)"
        where = f"rule {label!r} (rule {loc[1] + 1}), field {field}" if label else f"rule {loc[1] + 1}, field {field}"
    message = str(err["msg"]).removeprefix("Value error, ")
    given = err["input"]
    whole = isinstance(given, dict) or (isinstance(given, list) and any(isinstance(g, dict) for g in given))
    value = "" if err["type"] == "missing" or whole else f" = {json.dumps(given, default=str)[:120]}"
    return " ".join(f"{name}: {where}{value}: {message}".split())


def _load(path: Path | None) -> FailureRules:
    name, text = _read(path)
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(" ".join(f"{name}: invalid TOML: {exc}".split())) from exc
    try:
        # JSON mode: the enums (class, status) are read from their text, as the strict models accept there
        return FailureRules.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        raise ConfigError(_problem(name, data, exc)) from exc


@cache
def _shipped() -> FailureRules:
    return _load(None)


def load_failure_rules(path: Path | None = None) -> FailureRules:
    """Read and validate a rules file; None: the shipped one (read once per process)."""
    return _shipped() if path is None else _load(path)


DOCS_BEGIN = (
    "<!-- failure rules: generated by `python -m tcobench.tasks.analysis.classify_failure`; edit "
    "tcobench/data/failure_classes.toml, not here -->"
)
DOCS_END = "<!-- end of failure rules -->"


def _conditions(rule: FailureRule) -> list[str]:
    said = []
    if rule.status is not None:
        said.append("the run is " + " or ".join(s.value for s in rule.status))
    if rule.kind is not None:
        said.append("the error's kind is " + ", ".join(f"`{k}`" for k in rule.kind))
    if rule.text is not None:
        said.append(f"the error matches `{rule.text}`")
    if rule.exit_code is not None:
        said.append("the engine's exit status is " + ", ".join(str(c) for c in rule.exit_code))
    for field, pattern in (rule.telemetry or {}).items():
        said.append(f"`{field}` matches `{pattern}`")
    return said


def rules_markdown(rules: FailureRules) -> str:
    """The rules as docs/cost-model.md lists them: in order, each with its class, its conditions and its reason."""
    lines = []
    for n, rule in enumerate(rules.rule, 1):
        lines.append(f"{n}. `{rule.name}`: **{rule.failure_class.value}** when {'; and '.join(_conditions(rule))}.")
        lines.append(f"    {rule.reason}")
    return "\n".join(lines) + "\n"


def docs_with_rules(text: str, rules: FailureRules) -> str:
    """docs/cost-model.md's text with the list between DOCS_BEGIN and DOCS_END replaced by ``rules_markdown``."""
    if DOCS_BEGIN not in text or DOCS_END not in text:
        raise ValueError(f"docs/cost-model.md lacks the markers {DOCS_BEGIN!r} ... {DOCS_END!r}")
    head, rest = text.split(DOCS_BEGIN, 1)
    return f"{head}{DOCS_BEGIN}\n\n{rules_markdown(rules)}\n{DOCS_END}{rest.split(DOCS_END, 1)[1]}"


def _main() -> None:
    """Write docs/cost-model.md's list of failure rules from the shipped file (run from a source checkout)."""
    docs = Path(str(files("tcobench"))) / "docs" / "cost-model.md"
    docs.write_text(docs_with_rules(docs.read_text("utf-8"), load_failure_rules()), "utf-8")
    sys.stdout.write(f"wrote {docs}\n")


if __name__ == "__main__":
    _main()
