"""store: the DuckLake store of runs, its SQL views and its upkeep.

- `store`: write and read runs; `lake`: where the lake lives and how it is attached; `rows`: typed view rows;
- `query`, `query_bounds`, `readonly`, `views`: read-only connections with the views, their limits and locks;
- `health`, `verify`, `checksums`, `outage`: damage and outages found, reported and ridden out;
- `migrate`, `compact`, `inspect`: schema moves, file compaction and a look inside.
"""

from __future__ import annotations

__all__: list[str] = []
