"""report: what tcobench tells people after a run or a night.

- `report`: the HTML/markdown report; `assets`: its tables, figures and page;
- `artifacts`: the Prefect summary artifact; `alerts`: the night's announcement and webhook post;
- `exposition`: the store's key figures as Prometheus metrics (textfile and HTTP endpoint).
"""

from __future__ import annotations

__all__: list[str] = []
