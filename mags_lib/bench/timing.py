"""Small measuring helpers shared by the benchmarks: latency percentiles, peak RSS, machine."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from importlib import metadata

import numpy as np


def latency_summary(ms: list[float] | np.ndarray) -> dict[str, float]:
    """p50 / p95 / mean / max of a list of millisecond timings."""
    arr = np.asarray(ms, dtype=np.float64)
    if arr.size == 0:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "mean_ms": 0.0, "max_ms": 0.0}
    return {"p50_ms": float(np.percentile(arr, 50)), "p95_ms": float(np.percentile(arr, 95)),
            "mean_ms": float(arr.mean()), "max_ms": float(arr.max())}


def time_each(fn: Callable, args: list) -> tuple[list[float], list]:
    """Call `fn(a)` for every a; per-call wall times in ms, and the results."""
    ms, out = [], []
    for a in args:
        t = time.perf_counter()
        out.append(fn(a))
        ms.append((time.perf_counter() - t) * 1e3)
    return ms, out


def machine_info() -> dict:
    """CPU count, platform, Python and NumPy versions, load average (timings are wall-clock)."""
    info = {"cpu_count": os.cpu_count(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": sys.version.split()[0], "numpy": np.__version__}
    try:
        info["usearch"] = metadata.version("usearch")
    except metadata.PackageNotFoundError:
        info["usearch"] = None
    if hasattr(os, "getloadavg"):
        info["load_average_1m_5m_15m"] = [round(x, 2) for x in os.getloadavg()]
    return info
