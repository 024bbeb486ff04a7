"""analysis: stored runs read and judged.

- `compare`: two or more setups side by side, with claims graded; `history`: trends and flagged changes;
- `ranktests`, `quantile`: the statistics; `summarise`, `sweep`, `shape`: one run's summary, a sweep's verdict
  and asked-vs-served shape; `classify_failure`: why a run that is not ok failed (its failure class).
"""

from __future__ import annotations

__all__: list[str] = []
