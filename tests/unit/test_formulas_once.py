"""Every formula once: a grep over the shipped SQL and the Python package finds each piece of the monthly TCO
arithmetic, each per-request formula and the "ok measured request" filter in exactly one view.

A formula written twice drifts apart (issue 10). The patterns match arithmetic, not prose: SQL comments (view
headers state their formulas in words) and Python comments are left out.
Where one of these fails, read the named view's column instead of computing it again.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from pathlib import Path

import pytest

import tcobench

PACKAGE = Path(tcobench.__file__).resolve().parent
TCO_VIEW = "tco_scenarios.sql"
REQUEST_VIEW = "request_metrics.sql"

# pattern -> what it computes; each must occur once, in TCO_VIEW
TCO_ARITHMETIC = {
    r"\(\s*purchase_usd\s*\+\s*server_share_usd\s*\)": "hardware capital",
    r"/\s*lifetime_months\b": "a cost spread over the hardware lifetime",
    r"\bhours_per_month\b\W{0,3}\s*[*/]|[*/]\s*\w*\W{0,2}hours_per_month\b": "a rate times the hours of a month",
    r"\*\s*3600\b": "tokens/s to tokens per hour",
    r"\b730(\.0)?\b": "hours per month",
    r"\bhourly_usd\b\W{0,3}\s*\*|\*\s*\w*\W{0,2}hourly_usd\b": "ops labour per month",
    r"\bdaily_usd\b\W{0,3}\s*[*/]|\*\s*\w*\W{0,2}daily_usd\b": "adaptation labour per month",
    r"\busd_per_gpu_hour\b\W{0,3}\s*\*": "GPU-hour rent per month",
    r"\bpower_usd_month\b\W{0,3}\s*\+|\+\s*\w*\W{0,2}power_usd_month\b": "the sum of the monthly terms",
    r"\btokens_month\b\W{0,3}\s*/|/\s*(NULLIF\()?\s*\w*\W{0,2}\w*tokens_month\b": "cost per token or tokens per USD",
}
# pattern -> what it computes; each must occur once, in REQUEST_VIEW
PER_REQUEST = {
    r"output_tokens\s*-\s*1\b": "decode rate and TPOT (tokens after the first)",
    r"server_eval_count\s*/": "the engine's decode rate",
    r"error\s+IS\s+NULL": "the ok filter",
    r"phase\s*=\s*'measure'": "the measured filter",
}
QUANTILE_MODULE = "quantile.py"
# percentile rules other than tcobench's one (linear interpolation: SQL quantile_cont, Python
# tasks/analysis/quantile.py);
# each must occur nowhere outside QUANTILE_MODULE (statistics.median is the same rule at 0.5 and stays allowed)
OTHER_PERCENTILES = {
    r"\bnp\.(nan)?(percentile|quantile|median)\s*\(": "numpy's percentile (a second implementation of the rule)",
    r"\bstatistics\.quantiles\s*\(": "statistics.quantiles (its default method is not linear interpolation)",
    r"\b(quantile_disc|percentile_disc|approx_quantile|reservoir_quantile)\s*\(": "a SQL percentile by another rule",
    r"\[\s*int\([^\]]*\blen\(": "a nearest-rank index, values[int(q * len(values))]",
    r"\bdef\s+(percentile|quantile|nearest_rank)\s*\(": "a percentile function",
}
LIST_MACROS = {"night_means.sql", "night_weighted_mean.sql"}  # the night-weighting of a list per group
POSITIONS_MACRO = "night_weighted_lists.sql"  # the same rule position by position over lists (list_avg too)
NIGHT_MACROS = LIST_MACROS | {"night_weighted.sql", POSITIONS_MACRO}  # and of a table of groups
# pattern -> what it computes; each must occur once, in its macro's file
NIGHT_WEIGHTING = {
    r"CREATE\s+(OR\s+REPLACE\s+)?MACRO\s+night_means\b": "a night's mean over its runs",
    r"CREATE\s+(OR\s+REPLACE\s+)?MACRO\s+night_weighted_mean\b": "the mean over nights of the nights' means",
    r"CREATE\s+(OR\s+REPLACE\s+)?MACRO\s+night_weighted\b": "the same over a table of groups",
    r"CREATE\s+(OR\s+REPLACE\s+)?MACRO\s+night_weighted_lists\b": "the same position by position over lists",
}
LIST_MEAN = r"\blist_avg\s*\(|\blist_aggregate\s*\([^)]*'avg'"  # a mean of a list: only inside the macros
UNITS_MODULE = "schemas/units.py"  # the display conversions of figures no view holds, once each
# pattern -> (what it computes, the view that owns it); each occurs in that view and UNITS_MODULE only
CONVERSIONS = {
    r"\b1e6\s*/\s*(NULLIF\s*\(|float\s*\(|[A-Za-z_][\w.]*\s*(\[|\(|\)|,|\*|/|\+|\n|AS\b|if\b|for\b))": (
        "USD per 1M tokens from tokens per USD",
        "cost/platform_cost.sql",
    ),
    r"/\s*(\w+\.)?total_usd_month\b": ("a monthly term's share of the cost per 1M tokens", "cost/platform_cost.sql"),
    r"\b3\.6e6\s*/\s*(NULLIF\b|[A-Za-z_])": ("tokens per kWh from joules per token", "cost/efficiency.sql"),
}
# pattern -> what it computes; nowhere: read the view's per-1M column (record_card, efficiency)
PER_TOKEN_TO_PER_M = r"\bper_\w*token\w*\s*\*\s*1e6\b"
# the steps of the percentile rule (position h, its floor, the interpolation): only in QUANTILE_MODULE
PERCENTILE_STEPS = {
    r"\b(np|math)\.floor\(\s*h\s*\)": "the floor of a percentile's position h",
    r"\(\s*h\s*-\s*lo\s*\)\s*\*": "the interpolation between two order statistics",
}


def _sql_code(text: str) -> str:
    """SQL without -- comments."""
    return re.sub(r"--[^\n]*", "", text)


def _python_code(text: str) -> str:
    """Python without comments and docstrings (prose, like SQL comments); other strings stay: they hold SQL."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    kept = []
    for i, t in enumerate(tokens):
        before = next((p.type for p in reversed(tokens[:i]) if p.type not in (tokenize.NL, tokenize.COMMENT)), None)
        starts_statement = before in (None, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        docstring = t.type == tokenize.STRING and starts_statement and tokens[i + 1].type == tokenize.NEWLINE
        if t.type != tokenize.COMMENT and not docstring:
            kept.append(t)
    return tokenize.untokenize(kept)


def _sources() -> dict[str, str]:
    """Relative path -> code of every .sql and .py file of the installed package (links resolved once), and of
    bench/ where the package runs from a source checkout."""
    found: dict[str, str] = {}
    roots = [PACKAGE] + [b for b in [PACKAGE.parent / "bench"] if b.is_dir()]
    for folder, _, names in (w for root in roots for w in os.walk(root, followlinks=True)):  # tasks/ ... are links
        for path in (Path(folder) / n for n in sorted(names)):
            key = str(path.relative_to(PACKAGE.parent))
            if path.suffix == ".sql":
                found[key] = _sql_code(path.read_text("utf-8"))
            elif path.suffix == ".py":
                found[key] = _python_code(path.read_text("utf-8"))
    return found


SOURCES = _sources()


def _hits(pattern: str) -> list[str]:
    return [name for name, code in SOURCES.items() for _ in re.finditer(pattern, code, flags=re.IGNORECASE)]


def test_the_package_sources_are_found() -> None:
    names = {Path(n).name for n in SOURCES}
    assert {TCO_VIEW, REQUEST_VIEW, "candidates.py", "history.py", "figures.py"} <= names
    assert len(SOURCES) > 50


@pytest.mark.parametrize(("pattern", "what"), TCO_ARITHMETIC.items(), ids=list(TCO_ARITHMETIC.values()))
def test_tco_arithmetic_exists_in_exactly_one_view(pattern: str, what: str) -> None:
    hits = _hits(pattern)
    assert hits, f"{what}: not found at all (pattern {pattern!r}): has the formula moved?"
    assert {Path(h).name for h in hits} == {TCO_VIEW}, f"{what} is computed outside {TCO_VIEW}: {sorted(hits)}"


@pytest.mark.parametrize(("pattern", "what"), PER_REQUEST.items(), ids=list(PER_REQUEST.values()))
def test_per_request_formulas_exist_in_exactly_one_view(pattern: str, what: str) -> None:
    hits = _hits(pattern)
    assert [Path(h).name for h in hits] == [REQUEST_VIEW], f"{what}: found in {sorted(hits)}, want {REQUEST_VIEW} once"


@pytest.mark.parametrize(("pattern", "what"), OTHER_PERCENTILES.items(), ids=list(OTHER_PERCENTILES.values()))
def test_one_percentile_rule(pattern: str, what: str) -> None:
    hits = [h for h in _hits(pattern) if Path(h).name != QUANTILE_MODULE]
    assert not hits, f"{what} in {sorted(hits)}: use tcobench.tasks.analysis.quantile.quantile or SQL quantile_cont"


def test_the_percentile_rule_is_written_once() -> None:
    assert [Path(h).name for h in _hits(r"\bdef\s+quantile\s*\(")] == [QUANTILE_MODULE]
    assert _hits(r"\bquantile_cont\s*\(")  # the SQL side of the same rule is what the views use


@pytest.mark.parametrize(("pattern", "what"), NIGHT_WEIGHTING.items(), ids=list(NIGHT_WEIGHTING.values()))
def test_night_weighting_exists_once(pattern: str, what: str) -> None:
    hits = _hits(pattern)
    assert len(hits) == 1 and Path(hits[0]).name in NIGHT_MACROS, f"{what}: found in {sorted(hits)}"


def test_no_mean_of_a_list_outside_the_night_macros() -> None:
    hits = {Path(h).name for h in _hits(LIST_MEAN)}
    # night_weighted averages a sorted list too: a night's values in a fixed order (docs/store.md#duckdb-threads)
    allowed = NIGHT_MACROS
    assert hits == allowed, f"a list's mean outside the night macros: {sorted(hits - allowed)}"


@pytest.mark.parametrize(
    ("pattern", "what", "view"),
    [(p, w, v) for p, (w, v) in CONVERSIONS.items()],
    ids=[w for w, _ in CONVERSIONS.values()],
)
def test_each_conversion_in_its_view_and_once_for_display(pattern: str, what: str, view: str) -> None:
    hits = set(_hits(pattern))
    assert any(h.endswith(view) for h in hits), f"{what}: not in {view} (pattern {pattern!r}): has it moved?"
    others = {h for h in hits if not h.endswith((view, UNITS_MODULE))}
    assert not others, f"{what} is computed again in {sorted(others)}: read {view}'s column or use {UNITS_MODULE}"
    assert [h for h in _hits(pattern) if h.endswith(UNITS_MODULE)] == [f"tcobench/{UNITS_MODULE}"], "once for display"


def test_no_per_token_figure_scaled_to_per_million() -> None:
    hits = _hits(PER_TOKEN_TO_PER_M)
    assert not hits, f"a per-token figure times 1e6 in {sorted(hits)}: read the view's per-1M column"


@pytest.mark.parametrize(("pattern", "what"), PERCENTILE_STEPS.items(), ids=list(PERCENTILE_STEPS.values()))
def test_the_percentile_steps_only_in_the_quantile_module(pattern: str, what: str) -> None:
    hits = {Path(h).name for h in _hits(pattern)}
    assert hits == {QUANTILE_MODULE}, f"{what} outside {QUANTILE_MODULE}: {sorted(hits)}; use its quantile_positions"


def test_the_grep_finds_a_formula_written_again() -> None:
    """The check itself can fail: the old sensitivity view's arithmetic and history's decode rate are caught."""
    old_sensitivity = _sql_code(
        "SELECT (purchase_usd + server_share_usd) * units / l + (u * load_w_used) * pue * hours_per_month / 1000 * k "
        "-- (purchase_usd + server_share_usd) in a comment does not count\nFROM tco"
    )
    assert re.search(next(iter(TCO_ARITHMETIC)), old_sensitivity)
    assert len(re.findall(r"\(\s*purchase_usd", old_sensitivity)) == 1
    assert re.search(r"\bhours_per_month\b\W{0,3}\s*[*/]", old_sensitivity)
    old_history = _python_code(
        'query = "CASE WHEN output_tokens > 1 THEN (output_tokens - 1) / decode_ns * 1e9 END"  # output_tokens - 1\n'
    )
    assert len(re.findall(next(iter(PER_REQUEST)), _python_code(old_history))) == 1
    # the percentile rules bench/_common.py and the zero endpoint used before the rule was shared
    old_bench = _python_code("def percentile(xs, q):\n    return sorted(xs)[int(q * len(xs))]  # nearest rank\n")
    assert sum(bool(re.search(p, old_bench)) for p in OTHER_PERCENTILES) == 2
    old_compare = _python_code('sql = "SELECT list_avg(list(v)) FROM (SELECT avg(x) AS v FROM t GROUP BY date)"\n')
    assert re.search(LIST_MEAN, old_compare)
    # the copies issue 28 removed: compare's and the report's cost per 1M, compare's cost split, tokens per kWh,
    # the record card's per-1M electricity cost and ranktests' own median
    old_copies = [
        ("        return 1e6 / self.a_tokens_per_usd\n", 0),
        ("x = (math.nan if not per_usd else 1e6 / float(per_usd))\n", 0),
        ('        value, level, basis = 1e6 / point["mean"], point["concurrency"], point["basis"]\n', 0),
        ("        lo, hi = 1e6 / most, 1e6 / fewest\n", 0),
        ("        return 1e6 / eff * side.term_usd_month(term) / side.total_usd_month\n", 1),
        ("            per_kwh = 3.6e6 / j if j else 0.0\n", 2),
    ]
    patterns = list(CONVERSIONS)
    for code, which in old_copies:
        assert re.search(patterns[which], _python_code(code.lstrip())), code
    caption = _python_code('note = "Cost per 1M output tokens = 1e6 / tokens per USD, averaged"\n')
    assert not any(re.search(p, caption) for p in patterns)  # a caption's words are not the formula
    old_card = _python_code('x = f"{usd(per_token * 1e6 if per_token is not None else None)} per 1M"\n')
    assert re.search(PER_TOKEN_TO_PER_M, old_card)
    old_ranktests = _python_code(
        "h = (n - 1) * 0.5\nlo = np.floor(h).astype(np.int64)\nr = low + (h - lo) * (high - low)\n"
    )
    assert all(re.search(p, old_ranktests) for p in PERCENTILE_STEPS)
    docstring = _python_code('"""ours = (output_tokens - 1) / decode time"""\nq = "SELECT output_tokens - 1"\n')
    assert len(re.findall(next(iter(PER_REQUEST)), docstring)) == 1  # the prose is left out, the SQL string is not
