"""One progress bar for every long loop (tqdm): synthesis, generation over rows, evaluation
games, benchmarks.

    for seed in progress(seeds, "episodes"):
        ...

Bars go to stderr (so a benchmark's JSON on stdout stays clean), refresh at most every two
seconds (papermill logs stay short), and are off when `MAGS_PROGRESS=0`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def enabled() -> bool:
    return os.environ.get("MAGS_PROGRESS", "1") != "0"


def progress(items: Iterable[T], desc: str, total: int | None = None) -> Iterator[T]:
    """`items`, with a tqdm bar named `desc` on stderr (none when disabled)."""
    if not enabled():
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, desc=desc, total=total, mininterval=2.0, leave=False,
                    dynamic_ncols=True)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def counter(desc: str, total: int | None = None):
    """A bar advanced by hand (`.update(1)`, `.close()`) for loops that are not iterables
    (a game's turns inside `run_game`); a do-nothing stand-in when disabled."""
    if not enabled():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(desc=desc, total=total, mininterval=2.0, leave=False, dynamic_ncols=True)
