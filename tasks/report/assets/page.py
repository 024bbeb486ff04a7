"""The report page: its CSS, its one script, and the HTML shell. Nothing here loads anything from a network.

The Content-Security-Policy forbids every fetch (scripts, styles, images, fonts, connections) except what is
inline, so a report that tried to load something would show it as a console error. The script checks each
chart has data marks, counts the tables wider than the page (``data-tables-wide``: cells wrap, so none), wires the
legends (click to hide a series) and the filter, and sets ``data-report-ready="ok"`` on ``<html>`` only when all of
that ran without an exception (the headless-browser test reads both).

The filter (``filter_bar``): a host, a model and a workload, each "all" by default. It hides the table rows
whose ``data-host``/``data-model``/``data-workload`` do not match, and the chart series (``data-series``) whose
facets (a JSON map slug -> {host, model, workload} in the page) do not match. The choice is kept in the page's
address (``#host=gpu-a&workload=chat``), so a filtered view can be linked; nothing is fetched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape

__all__ = ["FACETS", "PAGE_CSS", "PAGE_SCRIPT", "filter_bar", "page"]

FACETS = ("host", "model", "workload")  # what the page's filter chooses by

PAGE_CSS = """
:root { --fg: #1d2125; --muted: #5f6b76; --line: #d9dee3; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); }
main { max-width: 1400px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
p.meta, .note { color: var(--muted); font-size: 12.5px; }
p.warning { background: #fff4e5; border-left: 4px solid #b25c00; padding: 8px 12px; }
.headline { background: var(--panel); border-left: 4px solid #1f77b4; padding: 10px 14px; font-size: 15px; }
.verdict-above, .verdict-below { color: #b2182b; font-weight: 600; }
.verdict-inside { color: #1a7f37; font-weight: 600; }
.warning { color: #b2182b; font-weight: 600; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(580px, 1fr)); gap: 18px; }
figure { margin: 0; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figcaption { font-weight: 600; margin: 2px 4px 6px; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg .plot-area { fill: #fbfcfd; stroke: var(--line); }
svg .grid { stroke: #e8ebee; stroke-width: 1; }
svg .tick { font-size: 11px; fill: var(--muted); }
svg .axis-label { font-size: 12px; fill: var(--fg); }
svg .point-label { font-size: 10.5px; fill: var(--fg); }
svg .group-label { font-size: 12px; font-weight: 600; fill: var(--fg); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 6px 4px 0; }
.legend-item { display: inline-flex; align-items: center; gap: 6px; border: 0; background: none; padding: 2px 4px;
               font: inherit; font-size: 12px; cursor: pointer; color: var(--fg); }
.legend-item.off { opacity: 0.35; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 4px; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: var(--panel); font-weight: 600; }
table.wide { font-size: 12px; }
table.wide th, table.wide td { padding: 3px 4px; }
table.wide td { overflow-wrap: anywhere; }
@media (max-width: 1250px) { table.wide th { overflow-wrap: anywhere; } }
@media (max-width: 900px) { th, td { overflow-wrap: anywhere; } }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
p.left-out { font-style: italic; }
code { font-size: 12px; }
tr.flagged td { background: #fff1f0; }
nav.toc { font-size: 13px; margin: 4px 0 10px; }
nav.toc a { color: #1f5fa8; text-decoration: none; }
form.filter { position: sticky; top: 0; z-index: 2; background: var(--panel); border: 1px solid var(--line);
              border-radius: 6px; padding: 6px 10px; margin: 6px 0 10px; font-size: 13px; display: flex;
              flex-wrap: wrap; gap: 6px 16px; align-items: center; }
form.filter select { font: inherit; }
.filtered-out { display: none !important; }
"""

PAGE_SCRIPT = """
(function () {
  "use strict";
  var charts = document.querySelectorAll("svg.chart");
  var drawn = 0;
  charts.forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    if (svg.querySelectorAll(".mark").length > 0 && box.width > 0 && box.height > 0) { drawn += 1; }
  });
  document.querySelectorAll(".legend-item").forEach(function (button) {
    button.addEventListener("click", function () {
      var figure = button.closest("figure");
      var off = button.classList.toggle("off");
      figure.querySelectorAll("svg [data-series='" + button.dataset.series + "']").forEach(function (el) {
        el.style.display = off ? "none" : "";
      });
    });
  });
  var root = document.documentElement;
  var form = document.getElementById("filter");
  if (form) {
    var facetsNode = document.getElementById("series-facets");
    var facets = JSON.parse(facetsNode ? facetsNode.textContent : "{}");
    var keys = ["host", "model", "workload"];
    var matches = function (attrs, chosen) {
      return keys.every(function (k) { return !chosen[k] || attrs[k] === chosen[k]; });
    };
    var apply = function () {
      var chosen = {}, parts = [], shown = 0;
      keys.forEach(function (k) {
        chosen[k] = form.elements[k].value;
        if (chosen[k]) { parts.push(k + "=" + encodeURIComponent(chosen[k])); }
      });
      document.querySelectorAll("tr[data-host]").forEach(function (row) {
        var ok = matches(row.dataset, chosen);
        row.classList.toggle("filtered-out", !ok);
        if (ok) { shown += 1; }
      });
      Object.keys(facets).forEach(function (slug) {
        var ok = matches(facets[slug], chosen);
        document.querySelectorAll("[data-series='" + slug + "']").forEach(function (el) {
          el.classList.toggle("filtered-out", !ok);
        });
      });
      root.dataset.filter = parts.join("&");
      root.dataset.filterRows = String(shown);
      var count = document.getElementById("filter-count");
      if (count) { count.textContent = parts.length ? shown + " table rows match" : ""; }
      return parts.join("&");
    };
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var kv = pair.split("=");
      var select = keys.indexOf(kv[0]) >= 0 ? form.elements[kv[0]] : null;
      var value = kv.length > 1 ? decodeURIComponent(kv[1]) : "";
      if (select && Array.prototype.some.call(select.options, function (o) { return o.value === value; })) {
        select.value = value;
      }
    });
    apply();
    form.addEventListener("change", function () {
      var state = apply();
      history.replaceState(null, "", state ? "#" + state : location.pathname + location.search);
    });
  }
  var wide = 0;  // tables wider than the page's column: their text wraps, so none should be
  document.querySelectorAll("table").forEach(function (t) {
    if (t.getBoundingClientRect().width > t.parentElement.getBoundingClientRect().width + 1) { wide += 1; }
  });
  root.dataset.tablesWide = String(wide);
  root.dataset.charts = String(charts.length);
  root.dataset.chartsDrawn = String(drawn);
  root.dataset.reportReady = (charts.length > 0 && drawn === charts.length) ? "ok" : "incomplete";
})();
"""

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "font-src 'none'; connect-src 'none'"
)


def filter_bar(choices: Mapping[str, list[str]], series: Mapping[str, Mapping[str, str]]) -> str:
    """The filter form (a select per FACETS key, with its values) and the chart series' facets (JSON)."""
    selects = []
    for key in FACETS:
        options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in choices.get(key, []))
        selects.append(f'<label>{key} <select name="{key}"><option value="">all</option>{options}</select></label>')
    facets = json.dumps(series, sort_keys=True).replace("</", "<\\/")
    return (
        f'<form class="filter" id="filter" aria-label="Filter the report"><b>Show</b>{"".join(selects)}'
        f'<span id="filter-count" class="note"></span></form>'
        f'<script type="application/json" id="series-facets">{facets}</script>'
    )


def page(title: str, body: str) -> str:
    """One self-contained HTML document around ``body`` (already HTML)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en" data-report-ready="pending">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n<script>{PAGE_SCRIPT}</script>\n</body>\n</html>\n"
    )
