"""announce_night: after a nightly, write its report and metrics textfile (``_metrics``), give its cost per platform,
list its flagged changes, link the report from the Prefect artifact, and post the night's summary to the webhook.

- Report: ``tasks.report.report.write_report`` over the whole store to ``Settings.report_dir/nightly-<batch id>.html``
  (default: the ``reports/`` folder of a store in a local folder); linked as ``Settings.report_url/<file>`` when
  that is set (a web server publishing report_dir), else by its ``file://`` URI. A Prefect link artifact (key
  ``tcobench-nightly-report``) points there.
- Flags: ``tasks.analysis.history.history`` over the store (default rules): this night's runs' flagged changes.
- Webhook: ``Settings.webhook_url`` (TCOBENCH_WEBHOOK_URL); one ``POST`` of JSON ``{"text": markdown, "batch_id",
  "cells", "failed": [...], "flags": [...], "report": link}``; ``text`` is what Slack, Mattermost and Teams incoming
  webhooks display. The URL is a secret: it is read here from the environment, never passed as a task parameter,
  and no message names it (a failed post says only how it failed). A failed post never fails the night.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from tcobench.errors import TcobenchError
from tcobench.schemas import PriceTable, RunStatus
from tcobench.settings import Settings
from tcobench.tasks.analysis.history import history
from tcobench.tasks.fleet.nightly import CellResult
from tcobench.tasks.report.artifacts import publish_link
from tcobench.tasks.report.exposition import write_metrics
from tcobench.tasks.report.night_cost import night_cost_markdown
from tcobench.tasks.report.report import write_report
from tcobench.tasks.store.store import StoreRef, open_store
from tcobench.tasks.tls import tls_context

__all__ = ["Flag", "announce_night", "flags_markdown", "night_flags", "post_webhook"]

REPORT_ARTIFACT_KEY = "tcobench-nightly-report"


@dataclass(frozen=True)
class Flag:
    """One flagged change of a run of this night against its series' prior runs (tasks.analysis.history)."""

    host: str
    model_name: str
    workload: str
    concurrency: int
    run_id: str
    metric: str
    median: float
    prior_median: float
    change_pct: float
    better: bool
    usd_per_m_output_tokens: float | None


def night_flags(store: StoreRef, prices: PriceTable, run_ids: Sequence[str]) -> list[Flag]:
    """The flagged changes of ``run_ids`` (history's default rules)."""
    wanted = set(run_ids)
    return [
        Flag(
            s.host,
            s.model_name,
            s.workload,
            s.concurrency,
            p.run_id,
            c.metric,
            c.median,
            c.prior_median,
            c.change_pct,
            c.better,
            p.usd_per_m_output_tokens,
        )
        for s in history(store, prices)
        for p, c in s.flags
        if p.run_id in wanted
    ]


def flags_markdown(flags: Sequence[Flag]) -> str:
    if not flags:
        return "No flagged changes in this night's runs (`tcobench history` rules).\n"
    lines = [
        f"## {len(flags)} flagged change(s)",
        "",
        "| host | model | workload | concurrency | metric | median | prior median | change | run |",
        "|---|---|---|---:|---|---:|---:|---:|---|",
    ]
    for f in flags:
        way = "better" if f.better else "worse"
        lines.append(
            f"| {f.host} | {f.model_name} | {f.workload} | {f.concurrency} | {f.metric} | {f.median:.4g} | "
            f"{f.prior_median:.4g} | {f.change_pct:+.1f}% ({way}) | {f.run_id[:8]} |"
        )
    return "\n".join(lines) + "\n"


def post_webhook(
    url: str, payload: Mapping[str, Any], timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None
) -> str:
    """POST ``payload`` as JSON; 'delivered (HTTP n)' or 'not delivered: why' (never the URL, never raises)."""
    try:
        with httpx.Client(timeout=timeout_s, trust_env=False, verify=tls_context(), transport=transport) as client:
            status = client.post(url, json=dict(payload)).status_code
    except httpx.HTTPError as exc:  # its message may quote the URL: name the failure only
        return f"not delivered: {type(exc).__name__}"
    except ValueError:
        return "not delivered: TCOBENCH_WEBHOOK_URL is not a valid http(s) URL"
    return f"delivered (HTTP {status})" if 200 <= status < 300 else f"not delivered: HTTP {status}"


def _metrics(store: StoreRef, prices: PriceTable, settings: Settings) -> str:
    """A markdown line about the Prometheus textfile (Settings.metrics_textfile); '' when none is asked for."""
    if settings.metrics_textfile is None:
        return ""
    try:
        write_metrics(store, prices, settings.metrics_textfile)
    except TcobenchError as exc:
        return f"\nMetrics not written: {exc}"
    return f"\nMetrics: {settings.metrics_textfile}"


def _report(store: StoreRef, prices: PriceTable, batch_id: str, settings: Settings) -> tuple[str | None, str]:
    """(link to the night's report, a markdown line about it)."""
    root = open_store(store).location.root
    folder = settings.report_dir or (root / "reports" if root is not None else None)
    if folder is None:
        return None, "Report not written: the store is not a local folder; set TCOBENCH_REPORT_DIR"
    out = folder / f"nightly-{batch_id}.html"
    try:
        write_report(store, prices, out)
    except TcobenchError as exc:
        return None, f"Report not written: {exc}"
    link = f"{settings.report_url.rstrip('/')}/{out.name}" if settings.report_url else out.resolve().as_uri()
    publish_link(link, f"tcobench report, nightly {batch_id}", key=REPORT_ARTIFACT_KEY)
    return link, f"Report: [{out.name}]({link})"


def announce_night(
    store: StoreRef, prices: PriceTable, batch_id: str, cells: Sequence[CellResult], markdown: str
) -> str:
    """The night's markdown with its cost per platform, report link and flags; posted to the webhook when one is
    configured."""
    settings = Settings()
    link, report_line = _report(store, prices, batch_id, settings)
    run_ids = [run_id for cell in cells for run_id in cell.run_ids]
    try:
        flags = night_flags(store, prices, run_ids)
        flag_text = flags_markdown(flags)
    except TcobenchError as exc:
        flags, flag_text = [], f"Change detection failed: {exc}\n"
    try:
        cost_text = night_cost_markdown(store, prices, batch_id)
    except TcobenchError as exc:
        cost_text = f"Cost summary failed: {exc}\n"
    report_line += _metrics(store, prices, settings)
    text = f"{markdown.rstrip()}\n\n{cost_text}\n{report_line}\n\n{flag_text}"
    if settings.webhook_url is None:
        return text
    failed = [{"cell": c.cell, "host": c.host, "error": c.error} for c in cells if c.status is RunStatus.failed]
    payload = {
        "text": text,
        "batch_id": batch_id,
        "cells": len(cells),
        "failed": failed,
        "flags": [asdict(f) for f in flags],
        "report": link,
    }
    return f"{text}\nWebhook: {post_webhook(settings.webhook_url.get_secret_value(), payload)}.\n"
