"""Resident memory of this process, the one place it is measured (training reports and the
benchmarks).

    peak_rss_mb()      # the peak so far (getrusage), MiB
    current_rss_mb()   # now (Linux /proc), MiB, or None elsewhere
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (ru_maxrss: KiB on Linux, bytes
    on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_mb() -> float | None:
    """Current resident memory of this process in MiB (Linux /proc), or None elsewhere."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * resource.getpagesize() / (1024 * 1024)
