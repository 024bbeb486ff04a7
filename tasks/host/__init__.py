"""host: the measured machine, its accelerators and its processes.

- `gpu`, `telemetry`, `engine_metrics`: accelerators found, power and utilisation sampled, engine counters scraped;
- `hostinfo`, `identity`: what the host is, detected and declared; `doctor`: what this host can run;
- `procs`, `docker_client`: processes and containers started and stopped.
"""

from __future__ import annotations

__all__: list[str] = []
