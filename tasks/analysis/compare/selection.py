"""selection: which stored runs a side of a comparison (or the report's ``--select``) takes.

A selection is ``key=value`` terms joined by commas (all must hold); ``|`` separates alternatives of one key:
``vendor=nvidia``, ``host=gpu-a|gpu-b,since=2026-11-01``, ``run=3f2a`` (run id prefix), ``config=9c1e`` (serving
configuration id prefix), ``tp=4``, ``gpus=2``. Keys: ``SELECTION_KEYS``, and the run columns they read work as keys
too (``gpu_vendor=amd``, ``run_id=...``). ``engine=`` matches the nightly matrix's engine label (``engine_label``) or
the engine's product name (``engine_name``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from tcobench.errors import ConfigError, QueryError

__all__ = [
    "SELECTION_KEYS",
    "MatchMode",
    "Selection",
    "SelectionTerm",
    "date_bounds",
    "left_out_words",
    "level_bounds",
    "parse_selection",
    "pick",
    "workload_bounds",
]


class MatchMode(StrEnum):
    """How a term's value matches a run's column (case-insensitive except prefixes)."""

    exact = "exact"
    contains = "contains"  # the value is a substring of the column
    prefix = "prefix"  # the column starts with the value (ids)
    since = "since"  # the column is >= the value (dates)
    until = "until"  # the column is <= the value (dates)


# key -> (run column, or columns any of which may match, how a value matches)
SELECTION_KEYS: dict[str, tuple[str | tuple[str, ...], MatchMode]] = {
    "vendor": ("gpu_vendor", MatchMode.exact),
    "gpu": ("gpu_name", MatchMode.contains),
    "host": ("host", MatchMode.exact),
    "hardware": ("hardware_key", MatchMode.exact),
    "site": ("site_key", MatchMode.exact),
    "engine": (("engine_label", "engine_name"), MatchMode.exact),
    "engine_version": ("engine_version", MatchMode.exact),
    "driver": ("driver_version", MatchMode.exact),
    "model": ("model_name", MatchMode.exact),
    "workload": ("workload", MatchMode.exact),
    "concurrency": ("concurrency", MatchMode.exact),
    "date": ("date", MatchMode.exact),
    "since": ("date", MatchMode.since),
    "until": ("date", MatchMode.until),
    "run": ("run_id", MatchMode.prefix),
    "batch": ("batch_id", MatchMode.prefix),
    "config": ("config_id", MatchMode.prefix),
    "tp": ("tensor_parallel", MatchMode.exact),
    "max_num_seqs": ("max_num_seqs", MatchMode.exact),
    "gpus": ("gpus_counted", MatchMode.exact),
}
# column names work as keys too (gpu_vendor=nvidia, hardware_key=..., run_id=..., batch_id=...)
_COLUMN_KEYS: dict[str, tuple[str | tuple[str, ...], MatchMode]] = {
    column: (column, mode)
    for columns, mode in SELECTION_KEYS.values()
    if mode not in (MatchMode.since, MatchMode.until)
    for column in ((columns,) if isinstance(columns, str) else columns)
}


@dataclass(frozen=True)
class SelectionTerm:
    """One ``key=value[|value...]`` term: the run column it reads, how it matches, the alternatives."""

    key: str
    column: str | tuple[str, ...]  # several: the term holds when it holds for any of them
    mode: MatchMode
    values: tuple[str, ...]
    # holds() per value seen (by type and value: 4 and "4" are one text, 4 and 4.0 are not): a selection is
    # matched against every stored run, whose columns repeat a few values (docs/dev/performance.md#selection-memo)
    _seen: dict[tuple[type, object], bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def holds_in(self, row: Mapping[str, object]) -> bool:
        for column in (self.column,) if isinstance(self.column, str) else self.column:  # loops, not any(): per run
            if self.holds(row.get(column)):
                return True
        return False

    def holds(self, actual: object) -> bool:
        key = (type(actual), actual)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = self._holds(actual)
        return found

    def _holds(self, actual: object) -> bool:
        if actual is None:
            return False
        text = str(actual)
        if self.mode is MatchMode.exact:
            return any(text.lower() == v.lower() for v in self.values)
        if self.mode is MatchMode.contains:
            return any(v.lower() in text.lower() for v in self.values)
        if self.mode is MatchMode.prefix:
            return any(text.startswith(v) for v in self.values)
        if self.mode is MatchMode.since:
            return any(text >= v for v in self.values)
        return any(text <= v for v in self.values)  # until


@dataclass(frozen=True)
class Selection:
    """A parsed selection: terms that must all hold."""

    text: str
    terms: tuple[SelectionTerm, ...]

    def matches(self, row: Mapping[str, object]) -> bool:
        return all(term.holds_in(row) for term in self.terms)

    def dates(self) -> tuple[str | None, str | None]:
        """The first and last ``date`` a matching run can have, as its terms compare them (text), or None where
        the selection does not bound it: a superset filter a query can apply before ``matches``."""
        first: str | None = None
        last: str | None = None
        for term in self.terms:
            if term.column != "date":
                continue
            if term.mode in (MatchMode.since, MatchMode.exact):
                low = min(term.values)
                first = low if first is None else max(first, low)
            if term.mode in (MatchMode.until, MatchMode.exact):
                high = max(term.values)
                last = high if last is None else min(last, high)
        return first, last

    def workloads(self) -> frozenset[str] | None:
        """The workloads (lower case) a matching run can have, or None where the selection does not bound them: like
        ``dates``, a superset filter a query can apply (on the lower-cased column) before ``matches``."""
        found: frozenset[str] | None = None
        for term in self.terms:
            if term.column == "workload" and term.mode is MatchMode.exact:
                values = frozenset(v.lower() for v in term.values)
                found = values if found is None else found & values
        return found

    def levels(self) -> frozenset[int] | None:
        """The concurrency levels a matching run can have, or None where the selection does not bound them (or a
        value is not a number): like ``dates``, a superset filter a query can apply before ``matches``."""
        found: frozenset[int] | None = None
        for term in self.terms:
            if term.column != "concurrency" or term.mode is not MatchMode.exact:
                continue
            try:  # a run matches a value only when its level's text is that value, so it is that number
                values = frozenset(int(v) for v in term.values)
            except ValueError:
                return None
            found = values if found is None else found & values
        return found


def date_bounds(*selections: Selection) -> tuple[str | None, str | None]:
    """The dates any of the selections' runs can have (Selection.dates over them; None: unbounded)."""
    firsts, lasts = zip(*(s.dates() for s in selections), strict=True)
    return (
        None if None in firsts else min(f for f in firsts if f is not None),
        None if None in lasts else max(last for last in lasts if last is not None),
    )


def workload_bounds(*selections: Selection) -> frozenset[str] | None:
    """The workloads any of the selections' runs can have (Selection.workloads over them; None: unbounded)."""
    found = [s.workloads() for s in selections]
    return None if any(f is None for f in found) else frozenset().union(*(f for f in found if f is not None))


def level_bounds(*selections: Selection) -> frozenset[int] | None:
    """The concurrency levels any of the selections' runs can have (Selection.levels over them; None: unbounded)."""
    found = [s.levels() for s in selections]
    return None if any(f is None for f in found) else frozenset().union(*(f for f in found if f is not None))


def parse_selection(text: str, label: str = "selection") -> Selection:
    """Parse ``key=value[|value...][,key=value...]``; a bad term is a one-line ConfigError naming the keys."""
    terms = []
    valid = ", ".join(sorted({*SELECTION_KEYS, *_COLUMN_KEYS}))
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        values = tuple(v.strip() for v in value.split("|") if v.strip())
        if not sep or not values:
            raise ConfigError(f"{label} {text!r}: term {part!r} is not key=value (keys: {valid})")
        spec = SELECTION_KEYS.get(key) or _COLUMN_KEYS.get(key)
        if spec is None:
            raise ConfigError(f"{label} {text!r}: unknown key {key!r} (keys: {valid})")
        terms.append(SelectionTerm(key, spec[0], spec[1], values))
    if not terms:
        raise ConfigError(f"{label} is empty: give key=value terms, e.g. vendor=nvidia (keys: {valid})")
    return Selection(text, tuple(terms))


Row = TypeVar("Row", bound=Mapping[str, object])


def pick(
    rows: Sequence[Row],
    selection: Selection,
    label: str,
    left_out: Callable[[], Sequence[Mapping[str, object]]] | None = None,
) -> list[Row]:
    """The rows the selection matches. When none does, a QueryError: with ``left_out`` (the stored runs ``rows``
    leaves out, each with its ``status``; read only then), how many of those the selection matches and why they
    are out; else the vendors and hosts ``rows`` has."""
    chosen = [r for r in rows if selection.matches(r)]
    if not chosen:
        raise QueryError(_no_match(rows, selection, label, left_out() if left_out is not None else ()))
    return chosen


def left_out_words(left_out: Sequence[Mapping[str, object]], selection: Selection | None = None) -> str | None:
    """How many of the ``left_out`` runs (each with its ``status``) the selection matches (all without one), and
    their statuses: '4 stored runs, all left out: 3 interrupted, 1 failed'; None when it matches none."""
    skipped = Counter(
        str(r.get("status") or "of no status") for r in left_out if selection is None or selection.matches(r)
    )
    if not skipped:
        return None
    n = sum(skipped.values())
    why = ", ".join(f"{count} {status}" for status, count in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{n} stored run{'s' if n != 1 else ''}, {'all ' if n > 1 else ''}left out: {why}"


def _no_match(
    rows: Sequence[Mapping[str, object]], selection: Selection, label: str, left_out: Sequence[Mapping[str, object]]
) -> str:
    """Why selection ``label`` has no run, in words (never a Python None)."""
    head = f"selection {label} {selection.text!r}"
    words = left_out_words(left_out, selection)
    if words is not None:
        return f"{head} matches {words}; only ok and partial runs are compared"
    vendors = sorted({str(r["gpu_vendor"]) for r in rows if r.get("gpu_vendor")})
    cpu = sum(1 for r in rows if not r.get("gpu_vendor"))
    if cpu:
        vendors.append(f"no GPU ({cpu} run{'s' if cpu != 1 else ''})")
    hosts = sorted({str(r["host"]) for r in rows if r.get("host")})
    searched = f"{len(rows)} run{'s' if len(rows) != 1 else ''} searched"
    configs = ""
    if any(term.column == "config_id" for term in selection.terms):  # name the configurations there are
        others = Selection(selection.text, tuple(t for t in selection.terms if t.column != "config_id"))
        found = sorted({str(r["config_id"]) for r in rows if r.get("config_id") and others.matches(r)})
        configs = f"; configurations: {', '.join(found) or 'none'}"
    return (
        f"{head} matches no stored run ({searched}; vendors: {', '.join(vendors) or 'none'}; "
        f"hosts: {', '.join(hosts) or 'none'}{configs})"
    )
