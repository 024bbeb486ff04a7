"""load: drive an engine with requests and record what came back.

- `measure`: one run's measurement (streams, pacing, records); `loadgen`: the open- and closed-loop schedules;
- `http1`: the HTTP/1.1 client; `protocols`: one module per wire protocol (OpenAI, Ollama);
- `limits`: the concurrency a run can reach; `placement`: where the client runs and its round trip;
- `shutdown`: stopping a run on a signal or its deadline; `selfcheck`: the client's own overhead.
"""

from __future__ import annotations

__all__: list[str] = []
