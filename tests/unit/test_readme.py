"""The README fits a page (issue 29, item 8): at most 200 lines, the two set-up commands, the five commands a user
needs each with one example, and links to docs/ pages that exist (or that other work adds, named here)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
# pages linked before they exist in every branch (added by other work on issues 30-33 and 29)
PENDING = {"interactivity.md", "claim-grade.md", "engines-gpu.md", "run-behaviour.md", "reliability.md"}
TOPICS = [
    "getting-started.md",
    "workloads.md",
    "engines.md",
    "nightly.md",
    "fleet.md",
    "store.md",
    "cost-model.md",
    "formulas.md",
    "comparing.md",
    "failures.md",
    "cli/index.md",
    "dev/readme-map.md",
]


def test_readme_fits_a_page() -> None:
    assert len(README.splitlines()) <= 200


def test_readme_has_the_two_commands_and_the_five_with_an_example_each() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert commands[:2] == ["make run", "make test"]
    for name in ("run", "nightly", "compare", "report", "query"):
        examples = [c for c in commands if c.startswith(f"tcobench {name} ")]
        assert len(examples) == 1, (name, examples)


def test_readme_links_every_topic_page_and_each_exists() -> None:
    linked = set(re.findall(r"\]\(docs/([\w./-]+\.md)", README))
    assert set(TOPICS) <= linked, set(TOPICS) - linked
    missing = {name for name in linked if not (ROOT / "docs" / name).is_file()}
    assert missing <= PENDING, missing


def test_the_readme_map_names_every_former_section() -> None:
    """docs/dev/readme-map.md: every section heading of the former README (commit 41f9d37) and where it went."""
    former = [
        "Install (users)",
        "Set up on a fresh machine (development)",
        "What `tcobench run` does",
        "Ollama's native API",
        "Power, energy and device provenance",
        "Inside the engine: why throughput saturates",
        "Synthetic models: compare hosts at 3B/8B/70B shapes without downloads",
        "Workload shapes: presets, exact token lengths, your own traffic",
        "Engine containers: pinned images on Docker hosts",
        "Building and pushing team images",
        "Running an engine as a container",
        "NVIDIA hosts (prerequisites)",
        "AMD hosts (prerequisites)",
        "`tcobench doctor`",
        "Testing with Docker",
        "Nightly comparison across hosts",
        "Run a fleet",
        "Reading the results",
        "The store",
        "Cost per million tokens",
        "Comparing platforms, history and the report",
        "Reproducing a published claim",
        "Layout",
        "Errors and exit status",
        "Failure behaviour",
        "Benchmarks of tcobench itself",
        "Licences",
    ]
    rows = [
        line
        for line in (ROOT / "docs" / "dev" / "readme-map.md").read_text("utf-8").splitlines()
        if line.startswith("|")
    ]
    for heading in former:
        assert any(row.startswith(f"| {heading}") for row in rows), heading
