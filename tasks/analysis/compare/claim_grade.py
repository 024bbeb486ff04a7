"""claim_grade: whether a comparison meets the rules a published claim needs, rule by rule (docs/claim-grade.md).

Each rule has a stable name and gives ``{name, passed, value, required, where}``:

Design notes: docs/dev/architecture/analysis.md#tasks-compare-claim-grade.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypedDict

import duckdb

from tcobench.errors import ConfigError
from tcobench.tasks.analysis.compare.candidates import CandidateRun, shape_differences
from tcobench.tasks.store.rows import IDS, fetch_rows, id_list, listed

__all__ = [
    "CLAIM_MACROS",
    "RULES",
    "ClaimGrade",
    "ClaimThresholds",
    "RuleResult",
    "accuracy_scores",
    "claim_grade",
    "claim_thresholds",
    "prefix_parity",
]

# the macros (tcobench/sql/macros) this module calls: a connection for it names them in its needs
CLAIM_MACROS = ("claim_run_facts", "prefix_parity", "accuracy_answers")

RULES = ("duration", "samples", "steady_share", "power", "setup", "shape", "parity", "accuracy")
_UNPINNED = ("", "unknown")  # engine versions that pin nothing


@dataclass(frozen=True)
class ClaimThresholds:
    """What each rule requires (docs/claim-grade.md says why); ``off``: rules turned off."""

    duration: float = 600.0  # s of steady window per run
    samples: float = 1000.0  # ok measured requests per run
    steady_share: float = 0.5  # fraction of the measured window
    shape: float = 0.05  # relative difference of the achieved ISL/OSL means
    parity: float = 0.9  # share of identical 64-character prefixes
    accuracy: float = 0.05  # largest difference of the exact-match scores
    accuracy_floor: float | None = None  # smallest score either side may have
    off: frozenset[str] = field(default_factory=frozenset)


_NUMERIC = tuple(f.name for f in fields(ClaimThresholds) if f.name != "off")


def claim_thresholds(texts: Iterable[str] = ()) -> ClaimThresholds:
    """ClaimThresholds from ``NAME=VALUE`` texts (``NAME=off`` turns rule NAME off); a ConfigError names the text."""
    found = ClaimThresholds()
    for text in texts:
        name, sep, value = (part.strip() for part in text.partition("="))
        valid = sorted({*RULES, *_NUMERIC})
        if not sep or name not in valid:
            raise ConfigError(f"--claim-rule {text!r}: expected NAME=VALUE with NAME one of {', '.join(valid)}")
        if value.lower() == "off":
            if name not in RULES:
                raise ConfigError(f"--claim-rule {text!r}: only a rule can be off ({', '.join(RULES)})")
            found = replace(found, off=found.off | {name})
            continue
        if name not in _NUMERIC:
            raise ConfigError(f"--claim-rule {text!r}: rule {name!r} has no threshold; only off is accepted")
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"--claim-rule {text!r}: {value!r} is not a number (or off)") from None
        if not math.isfinite(number) or number < 0:
            raise ConfigError(f"--claim-rule {text!r}: the threshold must be a finite number >= 0")
        found = replace(found, **{name: number})  # type: ignore[arg-type]
    return found


@dataclass(frozen=True)
class RuleResult:
    """One rule's outcome; ``message``: what failed, with its value and requirement (empty when it passed)."""

    name: str
    passed: bool
    value: Any
    required: Any
    where: str
    message: str = ""
    off: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "value": self.value,
            "required": self.required,
            "where": self.where,
        }


@dataclass(frozen=True)
class ClaimGrade:
    """Every rule's outcome; passed when every rule that is on passed."""

    rules: tuple[RuleResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules if not r.off)

    def failed(self) -> list[RuleResult]:
        return [r for r in self.rules if not r.off and not r.passed]

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready stamp: ``{"passed": bool, "rules": [{name, passed, value, required, where}, ...]}``."""
        return {"passed": self.passed, "rules": [r.as_dict() for r in self.rules]}

    def lines(self) -> list[str]:
        """'claim-grade: yes' or 'claim-grade: no', then one line per failed rule (and the rules turned off)."""
        off = [r.name for r in self.rules if r.off]
        head = "claim-grade: " + ("yes" if self.passed else "no")
        if off:
            head += f" (rules turned off: {', '.join(off)})"
        return [head, *(f"  {r.name}: {r.message}" for r in self.failed())]


class _RunFacts(TypedDict):
    run_id: str
    concurrency: int
    engine_kind: str
    engine_version: str
    model_digest: str | None
    image_digest: str | None
    telemetry_source: str | None
    source: str | None
    ok: int
    steady_s: float | None
    steady_share: float | None


def _facts(con: duckdb.DuckDBPyConnection, rows: Sequence[CandidateRun]) -> dict[str, _RunFacts]:
    found = fetch_rows(
        con, f"SELECT * FROM claim_run_facts({IDS})", _RunFacts, {"ids": id_list(r["run_id"] for r in rows)}
    )
    return {f["run_id"]: f for f in found}


def _worst(sides: dict[str, list[_RunFacts]], read: str) -> tuple[float | None, str]:
    """The smallest value of ``read`` over every run of both sides (None counts as 0), and where it is."""
    worst: tuple[float, str] | None = None
    for side, facts in sides.items():
        for f in facts:
            raw = f[read]  # type: ignore[literal-required]
            value = 0.0 if raw is None else float(raw)
            if worst is None or value < worst[0]:
                worst = (value, f"level {f['concurrency']}, {side}")
    return (None, "") if worst is None else worst


def _minimum(name: str, sides: dict[str, list[_RunFacts]], read: str, required: float, say: str) -> RuleResult:
    value, where = _worst(sides, read)
    passed = value is not None and value >= required
    return RuleResult(
        name,
        passed,
        value,
        required,
        where,
        "" if passed else say.format(value=value if value is not None else 0, required=required, where=where),
    )


def _power(rows: dict[str, list[CandidateRun]], facts: dict[str, _RunFacts]) -> RuleResult:
    estimated = []
    for side, runs in rows.items():
        bad = [r for r in runs if not r["energy_valid"]]
        if bad:
            why = (
                "no telemetry"
                if all(facts[r["run_id"]]["telemetry_source"] is None for r in bad)
                else ("telemetry not valid")
            )
            estimated.append(f"estimate on {side} ({why})")
    where = "; ".join(estimated)
    return RuleResult(
        "power",
        not estimated,
        "measured" if not estimated else where,
        "measured on both sides",
        where,
        "" if not estimated else where,
    )


def _setup(rows: dict[str, list[CandidateRun]], facts: dict[str, _RunFacts]) -> RuleResult:
    missing = []
    for side, runs in rows.items():
        gaps = set()
        for r in runs:
            f = facts[r["run_id"]]
            if (f["engine_version"] or "").strip().lower() in _UNPINNED:
                gaps.add("engine version unknown")
            if not f["model_digest"]:
                gaps.add("model digest missing")
            if f["engine_kind"] == "container" and not f["image_digest"]:
                gaps.add("image digest missing")
            if r["client_saturated"]:
                gaps.add("client saturated")
            if f["source"]:
                gaps.add(f"imported ({f['source']}): not measured by tcobench")
        if gaps:
            missing.append(f"{side}: {', '.join(sorted(gaps))}")
    text = "; ".join(missing)
    return RuleResult("setup", not missing, text or "pinned and disclosed", "pinned and disclosed", text, text)


def _shape(rows: dict[str, list[CandidateRun]], differences: Sequence[str], tolerance: float) -> RuleResult:
    found = [*differences, *shape_differences(rows["A"], rows["B"], tolerance)]
    text = "; ".join(dict.fromkeys(found))
    required = f"same workload and settings, achieved ISL/OSL within {tolerance:.0%}"
    return RuleResult("shape", not found, text or "same", required, text, f"differs: {text}" if found else "")


def prefix_parity(
    con: duckdb.DuckDBPyConnection, a_ids: Sequence[str], b_ids: Sequence[str], dates: tuple[str, str] | None = None
) -> tuple[int, int]:
    """(prompts both sides answered at temperature 0 with the same seed, how many of them with identical first 64
    output characters); a prompt is its sha256 (its index where none was stored). ``dates``: the runs' first and last
    date (requests carry their run's date: the store skips other dates' files)."""
    first, last = dates if dates is not None else (None, None)
    row = con.execute(
        f"SELECT * FROM prefix_parity({IDS}, {listed('b_ids')}, first_date := $first, last_date := $last)",
        {"ids": id_list(a_ids), "b_ids": id_list(b_ids), "first": first, "last": last},
    ).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _parity(con: duckdb.DuckDBPyConnection, rows: dict[str, list[CandidateRun]], required: float) -> RuleResult:
    both = [*rows["A"], *rows["B"]]
    dates = (min(r["date"] for r in both), max(r["date"] for r in both)) if both else None
    pairs, same = prefix_parity(con, [r["run_id"] for r in rows["A"]], [r["run_id"] for r in rows["B"]], dates)
    if not pairs:
        why = "no prompt answered at temperature 0 with the same seed on both sides"
        return RuleResult("parity", False, None, required, "A and B", why)
    share = same / pairs
    passed = share >= required
    say = f"identical first 64 characters {share:.0%} < {required:.0%} ({same} of {pairs} prompts)"
    return RuleResult("parity", passed, share, required, f"{pairs} prompts", "" if passed else say)


def accuracy_scores(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> float | None:
    """The exact-match score over these runs' accuracy requests (workloads named by tasks/workload/accuracy.py), or None
    when none of them is an accuracy run."""
    from tcobench.tasks.workload.accuracy import score_answers

    rows = con.execute(f"SELECT * FROM accuracy_answers({IDS})", {"ids": id_list(run_ids)}).fetchall()
    return score_answers([(str(w), int(i), p) for _, w, i, p in rows])


def _accuracy(con: duckdb.DuckDBPyConnection, accuracy_ids: dict[str, Sequence[str]], t: ClaimThresholds) -> RuleResult:
    scores = {side: accuracy_scores(con, ids) if ids else None for side, ids in accuracy_ids.items()}
    required = f"within {t.accuracy:g}" + (f", each >= {t.accuracy_floor:g}" if t.accuracy_floor is not None else "")
    missing = [side for side, s in scores.items() if s is None]
    if missing:
        say = f"not measured on {' and '.join(missing)} (run `tcobench accuracy` on each side's engine)"
        return RuleResult("accuracy", False, None, required, " and ".join(missing), say)
    a, b = float(scores["A"] or 0.0), float(scores["B"] or 0.0)
    problems = [f"accuracy differs {abs(a - b):.2f} > {t.accuracy:g}"] if abs(a - b) > t.accuracy + 1e-12 else []
    floor = t.accuracy_floor
    problems += [
        f"{side} scores {s:.2f} < floor {floor:g}"
        for side, s in (("A", a), ("B", b))
        if floor is not None and s < floor
    ]
    return RuleResult("accuracy", not problems, {"A": a, "B": b}, required, "A and B", "; ".join(problems))


def claim_grade(
    con: duckdb.DuckDBPyConnection,
    a_rows: Sequence[CandidateRun],
    b_rows: Sequence[CandidateRun],
    thresholds: ClaimThresholds | None = None,
    differences: Sequence[str] = (),
    accuracy_ids: dict[str, Sequence[str]] | None = None,
) -> ClaimGrade:
    """Every rule over the compared runs of sides A and B. ``differences``: what the comparison accepted despite
    differing (--allow-different); ``accuracy_ids``: each side's accuracy runs (None: looked up among the rows)."""
    t = thresholds or ClaimThresholds()
    rows = {"A": list(a_rows), "B": list(b_rows)}
    facts = _facts(con, [*a_rows, *b_rows])
    sides = {side: [facts[r["run_id"]] for r in runs if r["run_id"] in facts] for side, runs in rows.items()}
    if accuracy_ids is None:
        accuracy_ids = {side: [r["run_id"] for r in runs] for side, runs in rows.items()}
    checks = {
        "duration": lambda: _minimum(
            "duration", sides, "steady_s", t.duration, "steady duration {value:.0f} s < {required:.0f} s ({where})"
        ),
        "samples": lambda: _minimum(
            "samples", sides, "ok", t.samples, "measured requests {value:.0f} < {required:.0f} ({where})"
        ),
        "steady_share": lambda: _minimum(
            "steady_share",
            sides,
            "steady_share",
            t.steady_share,
            "steady share {value:.0%} < {required:.0%} ({where}): short_steady, run more requests or use --duration",
        ),
        "power": lambda: _power(rows, facts),
        "setup": lambda: _setup(rows, facts),
        "shape": lambda: _shape(rows, differences, t.shape),
        "parity": lambda: _parity(con, rows, t.parity),
        "accuracy": lambda: _accuracy(con, accuracy_ids, t),
    }
    results = []
    for name in RULES:
        if name in t.off:
            results.append(RuleResult(name, True, "off", "off", "turned off (--claim-rule)", off=True))
        else:
            results.append(checks[name]())
    return ClaimGrade(tuple(results))
