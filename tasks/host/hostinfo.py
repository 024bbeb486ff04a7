"""collect_host_facts: what the measured host is (OS, kernel, CPU, memory)."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

__all__ = ["collect_host_facts", "cpu_model_in"]


def _os_release() -> str:
    try:
        text = Path("/etc/os-release").read_text("utf-8")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


def cpu_model_in(cpuinfo: str) -> str | None:
    """The CPU model named in the text of /proc/cpuinfo (its first 'model name'), or None."""
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def _cpu_model() -> str:
    try:
        found = cpu_model_in(Path("/proc/cpuinfo").read_text("utf-8"))
    except OSError:
        found = None
    return found or platform.processor() or "unknown"


def _mem_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def collect_host_facts() -> dict[str, Any]:
    """Facts for the RunRecord's host_* columns."""
    uname = platform.uname()
    release = _os_release()
    return {
        "host_os": f"{uname.system} ({release})" if release else uname.system,
        "host_kernel": uname.release,
        "host_arch": uname.machine,
        "host_cpu": _cpu_model(),
        "host_cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0,
        "host_mem_bytes": _mem_bytes(),
        "python_version": platform.python_version(),
    }
