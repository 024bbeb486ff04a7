"""`tcobench nightly` with a webhook from configuration (TCOBENCH_WEBHOOK_URL), end to end: the CLI in a subprocess,
one simulated host whose engine is ``ollama_replay`` (a real HTTP server on 127.0.0.1 replaying Ollama's documented
API: no Ollama binary exists here), and a webhook receiver started by the test on 127.0.0.1.
The webhook URL carries a secret token: it must reach the receiver and nothing else (rows, logs, report, output)."""

from __future__ import annotations

import json
from pathlib import Path

from ollama_replay import ollama_replay
from test_cli import tcobench

from tests.hook_server import SECRET, Hook

INVENTORY = """\
[[hosts]]
name = "sim-nv-1"
vendor = "nvidia"
gpu_model = "H200"
gpu_count = 1
hardware = "nvidia-h200-sxm"
"""

MATRIX = """\
[[engines]]
name = "ollama-sim"
endpoint = "{url}"
protocol = "ollama"

[[models]]
name = "normal"

[[workloads]]
name = "short"
requests = 3
warmup_requests = 0
concurrency = [1]
max_tokens = 5
"""


def test_nightly_posts_to_the_webhook_and_stores_no_url(cli_env: dict[str, str], tmp_path: Path) -> None:
    inventory, matrix = tmp_path / "inventory.toml", tmp_path / "matrix.toml"
    inventory.write_text(INVENTORY, "utf-8")
    with ollama_replay() as replay, Hook() as hook:
        matrix.write_text(MATRIX.format(url=replay.url), "utf-8")
        env = {**cli_env, "TCOBENCH_WEBHOOK_URL": hook.url}
        done = tcobench("nightly", "--no-prefect", "-i", str(inventory), "-m", str(matrix), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    ((path, payload),) = hook.posts
    assert path == f"/hooks/{SECRET}"
    assert payload["text"].startswith("# tcobench nightly ") and payload["cells"] == 1 and payload["failed"] == []
    assert payload["flags"] == [] and "No flagged changes in this night's runs" in payload["text"]
    store = Path(cli_env["TCOBENCH_STORE"])
    report = store / "reports" / f"nightly-{payload['batch_id']}.html"
    assert payload["report"] == report.resolve().as_uri() and report.is_file()
    assert "Webhook: delivered (HTTP 200)." in done.stdout
    for text in (done.stdout, done.stderr):
        assert SECRET not in text
    leaked = [p for p in store.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == [], f"the webhook URL reached {leaked}"
    assert json.dumps(payload).count(SECRET) == 0  # nor the payload itself
