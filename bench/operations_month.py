"""A simulated month of nightly cells for trying the operations figures by hand (issue 44's new-user trial).

Three hosts of bench/history_scale.py's generator (gpu-00 nvidia-h100-sxm, gpu-01 nvidia-h200-sxm, gpu-02
amd-mi300x), 30 nights from 2025-12-01, five cells a night. The generator's calendar is shifted so that every host
updates its GPU driver mid-month and gpu-00's update breaks it for two nights (failure class platform); one night in
30 a cell fails with another class. Then, for example:

    python bench/operations_month.py --store /tmp/month
    tcobench compare --store /tmp/month --a hardware=nvidia-h100-sxm --b hardware=amd-mi300x
    tcobench report --store /tmp/month --a hardware=nvidia-h100-sxm --b hardware=amd-mi300x --out month.html
"""

from __future__ import annotations

import argparse
import datetime as dt

import history_scale

__all__ = ["main"]

SHIFT = dt.timedelta(days=85)  # night 15 of the month is the generator's driver-update day of gpu-00 (100 + host)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="store URI (a new folder)")
    parser.add_argument("--requests-per-run", type=int, default=8)
    args = parser.parse_args(argv)
    environment = history_scale._environment

    def shifted(host: int, day: dt.date, vendor: str) -> tuple[dict[str, str], str | None]:
        return environment(host, day + SHIFT, vendor)

    history_scale._environment = shifted
    history_scale.direct(args.store, hosts=3, days=30, per_run=args.requests_per_run, tokens=16)


if __name__ == "__main__":
    main()
