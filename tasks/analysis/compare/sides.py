"""sides: a comparison's two selections read as frontiers (every concurrency level of each side), and named.

A side is named by what it ran on, as a verdict should say it: "NVIDIA H200 (gpu-nv-01, declared)": the GPU
(vendor and model; "CPU" without one), the hosts and where the GPU facts came from (detected | declared).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

import duckdb

from tcobench.errors import QueryError
from tcobench.schemas import CostBasis, config_label
from tcobench.tasks.analysis.compare.candidates import CandidateRun, comparison_differences, left_out_runs, priced
from tcobench.tasks.analysis.compare.frontier import RunPoint, load_points
from tcobench.tasks.analysis.compare.interactivity import FrontierComparison, compare_frontiers
from tcobench.tasks.analysis.compare.selection import Selection, pick

__all__ = ["config_key", "config_labels", "frontier_comparison", "side_name", "side_points"]


def _gpu_words(row: CandidateRun) -> str:
    name, vendor = row["gpu_name"], row["gpu_vendor"]
    if not name and not vendor:
        return "CPU"
    words = str(name or "")
    if vendor and str(vendor).lower() not in words.lower():
        label = str(vendor).upper() if len(str(vendor)) <= 3 or str(vendor).lower() == "nvidia" else str(vendor)
        words = f"{label} {words}".strip()
    return words


def side_name(rows: Sequence[CandidateRun]) -> str:
    """'NVIDIA H200 (gpu-nv-01, declared)'; several GPUs or hosts are joined with ' + ' and ', '."""
    gpus = " + ".join(sorted({_gpu_words(r) for r in rows})) or "-"
    hosts = ", ".join(sorted({r["host"] for r in rows}))
    sources = "/".join(sorted({str(r["gpu_source"]) for r in rows if r["gpu_source"]}))
    return f"{gpus} ({hosts}{', ' + sources if sources else ''})"


def config_key(row: CandidateRun) -> str:
    """The curve a run belongs to: "<hardware_key> <config_id>" (frontier.RunPoint.config)."""
    return f"{row['hardware_key']} {row['config_id']}"


def config_labels(rows: Sequence[CandidateRun]) -> dict[str, str]:
    """Each configuration's name (by config_key), as a verdict says it: its ServingConfig label ('vllm 0.32.0, TP=4,
    max_num_seqs 256, 4 GPUs'); a run stored before configurations: its engine, version and GPU count. Where the
    runs (a side's) span several hardware keys, each name adds its hardware ('on nvidia-h200-sxm')."""
    several = len({r["hardware_key"] for r in rows}) > 1
    found: dict[str, str] = {}
    for row in rows:
        key = config_key(row)
        if key in found:
            continue
        label = config_label(row["serving_config"])
        if label is None:
            gpus = row["gpus_counted"]
            label = f"{row['engine_name']} {row['engine_version']}, {gpus} GPU{'s' if gpus > 1 else ''}"
        found[key] = f"{label} on {row['hardware_key']}" if several else label
    return found


def side_points(
    con: duckdb.DuckDBPyConnection, sides: Sequence[tuple[Sequence[CandidateRun], str, str]], basis: CostBasis
) -> list[list[RunPoint]]:
    """Each side's RunPoints (frontier.load_points), both sides read in one query (one scan of their requests)."""
    rows = [r for side_rows, _, _ in sides for r in side_rows]
    dates = (min(r["date"] for r in rows), max(r["date"] for r in rows))
    points = load_points(con, [(r["run_id"], r["batch_id"], r["concurrency"]) for r in rows], basis, dates)
    by_run = {p.run_id: p for p in points}
    found = []
    for side_rows, label, text in sides:
        mine = [by_run[r["run_id"]] for r in side_rows if r["run_id"] in by_run]
        if not any(len(p.tpot_ms) for p in mine):
            raise QueryError(
                f"selection {label} {text!r}: no request has a TPOT (every ok request has a single "
                "output token), so it has no interactivity; measure with max_tokens >= 2"
            )
        found.append(mine)
    return found


def frontier_comparison(
    con: duckdb.DuckDBPyConnection,
    rows: list[CandidateRun],
    sel_a: Selection,
    sel_b: Selection,
    basis: CostBasis,
    targets: Sequence[float] | None,
    allow_different: bool,
    **options: float | int | None,
) -> tuple[FrontierComparison, list[CandidateRun], list[CandidateRun]]:
    """Both sides' runs at every level, priced on ``basis``, compared at ``targets`` (interactivity.compare_frontiers
    with ``options``: q, resamples, seed, confidence, claim). QueryError when the sides differ in what was
    measured (unless ``allow_different``), a side has no priced run or no TPOT."""
    notes: list[str] = []
    left_out = functools.partial(left_out_runs, con)  # read only when a side matches no run
    a_rows, b_rows = pick(rows, sel_a, "A", left_out), pick(rows, sel_b, "B", left_out)
    diffs = comparison_differences(a_rows, b_rows)
    if diffs and not allow_different:
        raise QueryError(
            "refused: the selections differ in what was measured: "
            + "; ".join(diffs)
            + " (compare like with like, or pass --allow-different to compare anyway)"
        )
    a_rows, b_rows = priced(a_rows, "A", basis, notes), priced(b_rows, "B", basis, notes)
    a_points, b_points = side_points(con, [(a_rows, "A", sel_a.text), (b_rows, "B", sel_b.text)], basis)
    labels = {**config_labels(a_rows), **config_labels(b_rows)}
    found = compare_frontiers(
        a_points,
        b_points,
        side_name(a_rows),
        side_name(b_rows),
        targets,
        labels=labels,
        **options,  # type: ignore[arg-type]
    )
    if any(t.ratio is not None for t in found.targets):  # a ratio read off the frontiers: say what they are made of
        found = replace(found, notes=(*found.notes, _steady_note(a_points, b_points)))
    return found, a_rows, b_rows


def _steady_note(a_points: Sequence[RunPoint], b_points: Sequence[RunPoint]) -> str:
    """Which runs' frontier points are their steady state (view frontier), side by side."""
    counts = [
        f"{label} {sum(p.steady for p in points)} of {len(points)} runs"
        for label, points in (("A", a_points), ("B", b_points))
    ]
    return (
        f"frontier points from the steady state (all streams in flight; view steady_window): {', '.join(counts)}; "
        "the others from the whole measured window"
    )
