"""publish_summary: the run summary as a Prefect Markdown artifact, only inside a Prefect flow run.

With Prefect switched off (``TCOBENCH_PREFECT=off``), nothing imports ``prefect``, so a flow run cannot exist:
``prefect`` is then absent from ``sys.modules`` and these functions return None without importing it (importing Prefect
takes seconds: docs/dev/performance.md#prefect-import). tasks/ never imports flows/, so this checks for a flow run
rather than the setting.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tcobench.errors import TcobenchError
from tcobench.schemas import PriceTable
from tcobench.tasks.redact import redact_text

if TYPE_CHECKING:
    import duckdb

    from tcobench.tasks.analysis.summarise import Summary
    from tcobench.tasks.store.store import StoreRef

__all__ = [
    "ARTIFACT_KEY",
    "in_prefect_flow_run",
    "publish_link",
    "publish_run_cards",
    "publish_summary",
    "summarise_and_publish",
]

ARTIFACT_KEY = "tcobench-summary"  # lowercase letters, digits and dashes (Prefect's rule for keys)


def in_prefect_flow_run() -> bool:
    """True inside a running Prefect flow; never imports Prefect when nothing else has."""
    if "prefect" not in sys.modules:
        return False
    from prefect.context import FlowRunContext

    return FlowRunContext.get() is not None


def publish_summary(markdown: str, key: str = ARTIFACT_KEY, description: str = "tcobench run summary") -> str | None:
    """Create a Markdown artifact in the current flow run; its id, or None outside a flow run."""
    if not in_prefect_flow_run():
        return None
    from prefect.artifacts import create_markdown_artifact

    artifact_id = create_markdown_artifact(markdown=redact_text(markdown), key=key, description=description)
    return str(artifact_id)


def publish_link(link: str, text: str, key: str) -> str | None:
    """Create a link artifact (e.g. to a report) in the current flow run; its id, or None outside a flow run."""
    if not in_prefect_flow_run():
        return None
    from prefect.artifacts import create_link_artifact

    link, text = redact_text(link), redact_text(text)
    return str(create_link_artifact(link=link, link_text=text, key=key, description=text))


def summarise_and_publish(store: StoreRef, prices: PriceTable, run_ids: Sequence[str], publish: bool = True) -> Summary:
    """``summarise`` of these runs and, when ``publish`` and inside a flow run, the Markdown artifact of
    ``report.summary_markdown`` for them, both from one connection (one attach of the store and one binding of the
    views a cell's end reads, not two)."""
    from tcobench.tasks.analysis.summarise import SUMMARY_NEEDS, summary_of
    from tcobench.tasks.store.query import connect

    views: tuple[str, ...] = SUMMARY_NEEDS
    render: Callable[[duckdb.DuckDBPyConnection, Sequence[str]], str] | None = None
    if publish and in_prefect_flow_run():  # outside a flow run nothing is published: the markdown is not built
        from tcobench.tasks.report.report import MARKDOWN_VIEWS, markdown_of

        views, render = views + MARKDOWN_VIEWS, markdown_of
    con = connect(store, prices, needs=views)
    try:
        summary = summary_of(con, run_ids)
        text = render(con, run_ids) if render is not None else None
    finally:
        con.close()
    if text is not None:
        publish_summary(text)
    return summary


def publish_run_cards(
    store: StoreRef, prices: PriceTable, run_ids: Sequence[str], description: str = "tcobench run summary"
) -> str | None:
    """The summary artifact (``report.summary_markdown``: record card and cost per run, flagged changes) of many
    runs at once, from one connection: a nightly's cells skip their own (``benchmark(summarise=False)``) and the
    night, or a fleet host's run, publishes this one. Its id; None outside a flow run or with no runs (nothing is
    read then), or when it could not be made: the runs are stored already, so a store that cannot be read back now
    is logged as a warning instead of failing the night that measured them."""
    if not run_ids or not in_prefect_flow_run():
        return None
    from tcobench.tasks.report.report import summary_markdown

    try:
        text = summary_markdown(store, prices, run_ids)
    except TcobenchError as exc:
        logging.getLogger("tcobench").warning(
            "the summary artifact of %d run(s) was not published: %s", len(run_ids), exc
        )
        return None
    return publish_summary(text, description=description)
