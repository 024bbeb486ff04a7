"""Where the load generator runs relative to the engine (``ClientPlacement``), and the round trip to it.

Placement is data on every run row, because it changes what TTFT and end-to-end latency mean: through loopback
they hold no network; across a network each request carries a round trip (and its jitter).

- ``loopback``: the engine's address is a loopback address (127.0.0.0/8, ::1, ``localhost``).
- ``same-host-container``: the address is not loopback but belongs to this machine (a Docker bridge or another
  container network, or the host's own interface address): traffic stays inside this host's kernel.
- ``network``: anything else (another machine), or a name that does not resolve here.

``rtt_p50_ns`` is the median round trip of small health requests (the protocol's probe path, one warm-up
request first so the connection is open) sent just before the runs, for every placement but loopback.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urlsplit

import httpx

from tcobench.errors import EngineError
from tcobench.schemas import ClientPlacement, Protocol
from tcobench.tasks.analysis.quantile import quantile
from tcobench.tasks.load.protocols import adapter_for
from tcobench.tasks.tls import tls_context

__all__ = ["RTT_PROBES", "is_local_address", "placement_of_url", "probe_rtt_ns"]

RTT_PROBES = 10  # timed health requests per engine (after one warm-up request)


def is_local_address(address: str) -> bool:
    """True when ``address`` is assigned to an interface of this machine (it can be bound here)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True


def _addresses(hostname: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({str(info[4][0]).split("%", 1)[0] for info in infos})


def placement_of_url(url: str) -> ClientPlacement | None:
    """The placement of an engine at ``url`` as seen from this machine; None for a URL without a host."""
    hostname = urlsplit(url).hostname
    if not hostname:
        return None
    addresses = _addresses(hostname)
    if not addresses:
        return ClientPlacement.network  # not resolvable here: certainly not this machine's
    if all(ipaddress.ip_address(a).is_loopback for a in addresses):
        return ClientPlacement.loopback
    if all(is_local_address(a) for a in addresses):
        return ClientPlacement.same_host_container
    return ClientPlacement.network


def probe_rtt_ns(base_url: str, protocol: Protocol, probes: int = RTT_PROBES, timeout_s: float = 5.0) -> int:
    """Median round trip (ns) of ``probes`` (>= 1) GETs of the protocol's health path on one kept-alive connection."""
    if probes < 1:
        raise ValueError(f"probes must be at least 1, got {probes}")
    url = base_url.rstrip("/") + adapter_for(protocol).probe_path
    samples: list[int] = []
    with httpx.Client(timeout=timeout_s, trust_env=False, verify=tls_context()) as client:
        try:
            client.get(url)  # opens the connection; not timed
            for _ in range(probes):
                start = time.perf_counter_ns()
                client.get(url).read()
                samples.append(time.perf_counter_ns() - start)
        except httpx.HTTPError as exc:
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise EngineError(f"round-trip probe of {url} failed: {detail}") from exc
    median = quantile(samples, 0.5)  # tcobench's one percentile rule (tasks/analysis/quantile.py)
    assert median is not None  # probes >= 1 samples were taken
    return int(median)
