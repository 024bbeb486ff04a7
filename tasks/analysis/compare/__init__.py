"""compare: cost efficiency of two selections of runs, with a bootstrap confidence interval and a verdict.

Cost efficiency is tokens per USD (view ``cost_basis``: output_tokens_per_usd or total_tokens_per_usd); the ratio
is A / B, which equals (cost per 1M tokens of B) / (cost per 1M tokens of A): "A is R times as cost-efficient".

Design notes: docs/dev/architecture/analysis.md#tasks-compare.
"""

from __future__ import annotations

from tcobench.schemas import CompareOptions
from tcobench.tasks.analysis.compare.bootstrap import (
    NightDraws,
    RunSample,
    TokenCount,
    bootstrap_bases,
    bootstrap_efficiency,
    load_samples,
    night_draws,
    percentile_interval,
)
from tcobench.tasks.analysis.compare.candidates import (
    COMPARABLE,
    SHAPE_COLUMNS,
    CandidateRun,
    CostTermName,
    PricedRun,
    SideFigures,
    comparison_differences,
    goodput_of,
    load_priced,
    load_runs,
    night_weighted,
    priced,
    samples_of,
    shape_differences,
)
from tcobench.tasks.analysis.compare.claim_frame import ClaimJudgement, ClaimTarget, judge
from tcobench.tasks.analysis.compare.claim_grade import (
    RULES,
    ClaimGrade,
    ClaimThresholds,
    RuleResult,
    accuracy_scores,
    claim_grade,
    claim_thresholds,
    prefix_parity,
)
from tcobench.tasks.analysis.compare.comparison import (
    Comparison,
    CostTerm,
    FlaggedRun,
    Stratum,
    Verdict,
    compare,
    compare_on,
    compare_with_operations,
    token_count,
    verdict,
)
from tcobench.tasks.analysis.compare.document import comparison_document, comparison_rows, unsupported
from tcobench.tasks.analysis.compare.frontier import Frontier, Level, RunPoint, level_points, load_points, pareto_mask
from tcobench.tasks.analysis.compare.interactivity import (
    ConfigCurve,
    Crossover,
    FrontierComparison,
    FrontierSide,
    TargetRow,
    compare_frontiers,
    parse_targets,
    spread_targets,
)
from tcobench.tasks.analysis.compare.selection import (
    SELECTION_KEYS,
    MatchMode,
    Selection,
    SelectionTerm,
    parse_selection,
    pick,
)
from tcobench.tasks.analysis.compare.setup_table import SETUP_COLUMNS, SetupDifference, setup_differences

__all__ = [
    "ClaimJudgement",
    "ClaimTarget",
    "ConfigCurve",
    "judge",
    "Crossover",
    "Frontier",
    "FrontierComparison",
    "FrontierSide",
    "Level",
    "RunPoint",
    "TargetRow",
    "compare_frontiers",
    "comparison_document",
    "comparison_rows",
    "level_points",
    "load_points",
    "pareto_mask",
    "parse_targets",
    "spread_targets",
    "unsupported",
    "COMPARABLE",
    "RULES",
    "SETUP_COLUMNS",
    "ClaimGrade",
    "ClaimThresholds",
    "RuleResult",
    "SetupDifference",
    "accuracy_scores",
    "claim_grade",
    "claim_thresholds",
    "prefix_parity",
    "setup_differences",
    "SELECTION_KEYS",
    "SHAPE_COLUMNS",
    "CandidateRun",
    "CompareOptions",
    "Comparison",
    "CostTerm",
    "CostTermName",
    "PricedRun",
    "FlaggedRun",
    "MatchMode",
    "NightDraws",
    "RunSample",
    "Selection",
    "SelectionTerm",
    "SideFigures",
    "Stratum",
    "TokenCount",
    "Verdict",
    "bootstrap_bases",
    "bootstrap_efficiency",
    "compare",
    "compare_with_operations",
    "compare_on",
    "comparison_differences",
    "goodput_of",
    "load_priced",
    "load_runs",
    "load_samples",
    "night_draws",
    "night_weighted",
    "parse_selection",
    "percentile_interval",
    "pick",
    "priced",
    "samples_of",
    "shape_differences",
    "token_count",
    "verdict",
]
