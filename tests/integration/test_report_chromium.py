"""`tcobench report` opened in headless Chromium (Debian's `chromium`): no console error, every chart drawn.

Needs the `chromium` binary (Debian: `apt-get install -y chromium`). Without it the tests skip, saying so;
with CI=true they fail instead, so CI cannot pass without having looked at the page.

To refresh the screenshot in docs/comparing.md from the same test data:
    TCOBENCH_WRITE_SCREENSHOT=docs/report-screenshot.png .venv/bin/pytest tests/integration/test_report_chromium.py
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcobench.tasks.prices import load_prices
from tcobench.tasks.report.report import write_report

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
]
CHARTS = 10  # svg.chart elements the report draws on the fleet data (2 at equal interactivity, frontier_figures.py)


def _write_fleet() -> Callable[..., Any]:
    """tests/unit/factories.write_fleet, loaded by path (tests/integration is not a package)."""
    name = "tcobench_unit_factories"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "unit" / "factories.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve their annotations through sys.modules
        spec.loader.exec_module(module)
    write_fleet: Callable[..., Any] = sys.modules[name].write_fleet
    return write_fleet


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "headless Chromium is not installed (Debian: apt-get install -y chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must run this test")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report")
    _write_fleet()(root / "store")
    return write_report(root / "store", load_prices(None), root / "report.html", resamples=300)


def _browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run with a fresh profile; stdout and stderr (its log) captured."""
    command = [chromium, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _page_messages(log: str) -> list[str]:
    """Console messages, uncaught exceptions and blocked loads from Chromium's log (not its own noise)."""
    return [line for line in log.splitlines() if re.search(r"CONSOLE|Uncaught|Refused to|net::ERR_", line)]


@pytest.fixture(scope="module")
def dom(chromium: str, report: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    done = _browse(chromium, tmp_path_factory.mktemp("profile"), "--dump-dom", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    yield done.stdout, done.stderr


def test_page_loads_without_console_errors(dom: tuple[str, str]) -> None:
    html, log = dom
    assert _page_messages(log) == []
    root = re.search(r"<html[^>]*>", html)
    assert root is not None
    # set by the page's script only after it ran to the end without an exception
    assert 'data-report-ready="ok"' in root.group(0), root.group(0)
    assert f'data-charts="{CHARTS}"' in root.group(0) and f'data-charts-drawn="{CHARTS}"' in root.group(0)
    # every table fits the page's column in headless Chromium's 800 px window: its cells wrap, nothing scrolls
    assert 'data-tables-wide="0"' in root.group(0), root.group(0)


def _png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB(A) PNG (what Chromium writes) into an array height x width x channels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", (0, 0, 0, 0)
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            header = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
    width, height, depth, color = header
    assert depth == 8 and color in (2, 6), header
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, width * bpp + 1)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prior = np.zeros(width * bpp, dtype=np.uint8)
    for y in range(height):
        out[y] = _unfilter(int(raw[y, 0]), raw[y, 1:], prior, bpp)
        prior = out[y]
    shaped: np.ndarray = out.reshape(height, width, bpp)
    return shaped


def _unfilter(kind: int, line: np.ndarray, prior: np.ndarray, bpp: int) -> np.ndarray:
    if kind == 0:
        return line
    if kind == 1:  # Sub: a running sum per channel
        return (np.cumsum(line.reshape(-1, bpp).astype(np.int64), axis=0) % 256).astype(np.uint8).ravel()
    if kind == 2:  # Up
        up_sum: np.ndarray = (line.astype(np.int64) + prior).astype(np.uint8)
        return up_sum
    cur, up = line.astype(np.int64).tolist(), prior.astype(np.int64).tolist()
    for i in range(len(cur)):
        left = cur[i - bpp] if i >= bpp else 0
        if kind == 3:  # Average
            cur[i] = (cur[i] + (left + up[i]) // 2) % 256
            continue
        corner = up[i - bpp] if i >= bpp else 0  # Paeth
        p = left + up[i] - corner
        pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
        cur[i] = (cur[i] + (left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner)) % 256
    return np.array(cur, dtype=np.uint8)


def _near(pixels: np.ndarray, color: str, tolerance: int = 40) -> int:
    target = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels[..., :3].astype(int) - target).sum(axis=-1) < tolerance).sum())


def test_charts_are_drawn_on_screen(chromium: str, report: Path, tmp_path: Path) -> None:
    target = os.environ.get("TCOBENCH_WRITE_SCREENSHOT")
    shot = Path(target).resolve() if target else tmp_path / "report.png"
    done = _browse(chromium, tmp_path / "profile", "--window-size=1400,4900", f"--screenshot={shot}", report.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert _page_messages(done.stderr) == []
    pixels = _png_pixels(shot.read_bytes())
    assert pixels.shape[:2] == (4900, 1400)
    charts = pixels[1200:]  # below the headline and record card: the figures
    colors = np.unique(charts[..., :3].reshape(-1, 3), axis=0)
    assert len(colors) > 200, f"only {len(colors)} colours: the charts look blank"
    # both platforms' series are drawn: the palette's blue (#1f77b4) and red (#d62728)
    assert _near(charts, "#1f77b4") > 5000 and _near(charts, "#d62728") > 5000


def test_the_filter_hides_the_other_hosts(chromium: str, report: Path, tmp_path: Path) -> None:
    """The in-page filter, chosen through the page's address (#host=...), as a link to a filtered view would."""
    done = _browse(chromium, tmp_path / "profile", "--dump-dom", report.as_uri() + "#host=gpu-nv-1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _page_messages(done.stderr) == []
    html = done.stdout
    root = re.search(r"<html[^>]*>", html)
    assert root is not None and 'data-report-ready="ok"' in root.group(0), root
    assert 'data-filter="host=gpu-nv-1"' in root.group(0)
    rows = re.findall(r"<tr ([^>]*data-host=\"[^\"]+\"[^>]*)>", html)
    assert len(rows) > 4
    for attrs in rows:  # the AMD host's rows hidden, the NVIDIA host's shown
        assert ("filtered-out" in attrs) == ('data-host="gpu-amd-1"' in attrs), attrs
    amd = re.findall(r"<g data-series=\"amd-instinct-mi300x-gpu-amd-1[^\"]*\"([^>]*)>", html)
    nvidia = re.findall(r"<g data-series=\"nvidia-h200-gpu-nv-1[^\"]*\"([^>]*)>", html)
    assert amd and nvidia
    assert all("filtered-out" in attrs for attrs in amd) and not any("filtered-out" in a for a in nvidia)
    # the headline names both vendors' cheapest platforms
    assert "the cheapest pair of different vendors: NVIDIA H200 @ gpu-nv-1 vs AMD Instinct MI300X @ gpu-amd-1" in html
