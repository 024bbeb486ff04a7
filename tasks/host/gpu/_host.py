"""Small readers of a host's /proc, /sys and /dev, relative to a root folder (tests use a fake tree)."""

from __future__ import annotations

import grp
import os
from pathlib import Path

__all__ = ["group_name", "pci_display_vendors", "read_text", "under", "user_in_group"]


def under(root: Path, path: str) -> Path:
    """``path`` (absolute on the host) inside ``root``."""
    return root / path.lstrip("/")


def read_text(root: Path, path: str) -> str | None:
    try:
        return under(root, path).read_text("utf-8", "replace")
    except OSError:
        return None


def pci_display_vendors(root: Path) -> set[str]:
    """PCI vendor ids (e.g. 0x10de, 0x1002) of display controllers (class 0x03xxxx)."""
    vendors = set()
    for device in under(root, "/sys/bus/pci/devices").glob("*"):
        klass = read_text(root, str(device.relative_to(root) / "class"))
        vendor = read_text(root, str(device.relative_to(root) / "vendor"))
        if klass and vendor and klass.strip().startswith("0x03"):
            vendors.add(vendor.strip().lower())
    return vendors


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def user_in_group(gid: int) -> bool:
    return os.geteuid() == 0 or gid in os.getgroups() or os.getegid() == gid
