"""Client placement from the engine's address, and the round-trip probe against a real (zero-cost) server.

Network and same-host-container placements against real interfaces are in tests/integration/test_placement.py
(a network namespace of its own)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcobench.errors import EngineError
from tcobench.schemas import ClientPlacement, Protocol
from tcobench.tasks.load.placement import is_local_address, placement_of_url, probe_rtt_ns
from tests.services import free_ports

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
from zero_endpoint import EndpointConfig, start_in_thread  # noqa: E402  (bench/ is not a package)


@pytest.fixture(scope="module")
def zero() -> Iterator[str]:
    url, stop = start_in_thread(EndpointConfig())
    try:
        yield url
    finally:
        stop()


@pytest.mark.parametrize(
    ("url", "placement"),
    [
        ("http://127.0.0.1:8080", ClientPlacement.loopback),
        ("http://127.0.0.2:8080/v1", ClientPlacement.loopback),
        ("http://localhost:11434", ClientPlacement.loopback),
        ("http://[::1]:8000", ClientPlacement.loopback),
        ("http://no-such-host.invalid:8000", ClientPlacement.network),  # RFC 6761: never resolves
        ("http://192.0.2.10:8000", ClientPlacement.network),  # TEST-NET-1: not an address of this machine
        ("", None),
    ],
)
def test_placement_of_url(url: str, placement: ClientPlacement | None) -> None:
    assert placement_of_url(url) is placement


def test_local_addresses_are_the_bindable_ones() -> None:
    assert is_local_address("127.0.0.1") and not is_local_address("192.0.2.10")


def test_probe_rtt_is_the_median_of_real_round_trips(zero: str) -> None:
    rtt = probe_rtt_ns(zero, Protocol.openai, probes=5)
    assert 0 < rtt < 5_000_000_000


def test_probe_of_a_dead_engine_is_an_engine_error() -> None:
    (port,) = free_ports(1)
    with pytest.raises(EngineError, match=f"round-trip probe of http://127.0.0.1:{port}/api/version failed"):
        probe_rtt_ns(f"http://127.0.0.1:{port}", Protocol.ollama, timeout_s=2)
