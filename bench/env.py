"""The machine and package versions a benchmark ran with, for its report."""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
from typing import Any


def environment(packages: tuple[str, ...]) -> dict[str, Any]:
    """Date, Python, platform, CPUs, the 1-minute load average now, and ``packages``' versions.

    Call it first: the load average then describes the machine, not this run.
    """
    import importlib.metadata as md

    versions: dict[str, str | None] = {}
    for pkg in packages:
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {
        "date": dt.date.today().isoformat(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_1min": round(os.getloadavg()[0], 2),
        "packages": versions,
    }


class SampleStats:
    """``median_ms`` / ``min_ms`` of a benchmark cell's ``samples`` (operation -> seconds)."""

    samples: dict[str, list[float]]

    def median_ms(self, op: str) -> float | None:
        s = self.samples.get(op)
        return statistics.median(s) * 1e3 if s else None

    def min_ms(self, op: str) -> float | None:
        s = self.samples.get(op)
        return min(s) * 1e3 if s else None
