"""Atomic file writes: a reader (or a crash) sees the old file or the whole new one, never part.

    with atomic_path(path) as tmp:      # write tmp however you like (a GGUF writer, llama.cpp)
        produce(tmp)                    # renamed over `path` when the block ends; removed on error
    write_text(path, text)              # the common case, fsynced before the rename

The temporary file is a hidden sibling of `path` (same directory, so the rename is atomic).
`memory/persistence.py` swaps whole directories with a backup and has its own two-rename scheme.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path next to `path`; moved onto `path` when the block ends without an
    error, deleted (file or directory) when it raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        yield tmp
    except BaseException:
        _remove(tmp)
        raise
    if tmp.is_dir() and path.is_dir():
        shutil.rmtree(path)  # os.replace cannot move a directory over a non-empty one
    os.replace(tmp, path)


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically, fsynced before the rename."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    return path


def _remove(tmp: Path) -> None:
    if tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)
