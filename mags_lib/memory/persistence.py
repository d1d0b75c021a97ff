"""Save and load a `LiquidMemory`: a directory of JSON and NumPy, written atomically, read
defensively. No pickle anywhere.

Format "mags-liquid-memory", version 1, a directory holding:

* `graph.json`: {"format", "version", "config" (MemoryConfig fields), "embedding_dim",
  "counters" {"next_id", "step", "last_episode"}, "keys" {key: node id}, "nodes" [{"id", the
  node attributes of `store.NODE_FIELDS`}], "edges" [{"source", "target", the edge attributes
  of `store.EDGE_FIELDS`}] (node-link style), "working" {"capacity", "items"}, "last_paths",
  "tally", "history", "embeddings_sha256"}. No NaN or Infinity literals.
  `embeddings_sha256` is the SHA-256 of the embedding array's bytes; a mismatch on load (a
  flipped byte, files from two different saves) is refused. Saves written before it was added
  have no checksum and still load.
* `embeddings.npy`: a structured array with fields `id` (<i8) and `vector` (<f4, (dim,)), one
  row per node, written by `np.save(..., allow_pickle=False)`.

Atomic writes: both files go to a fresh sibling temporary directory (fsynced); then the old
directory is renamed to `.NAME.bak`, the new one renamed into place and the backup deleted. A
failure at any point leaves the previous save in place (or, after a crash between the two
renames, in `.NAME.bak`, which `load` falls back to).

Loading checks everything before building anything: JSON syntax, format and version, exact key
sets, types, ranges (finite weights in (0, 1], confidences in [0, 1], ids >= 0 and < 2**53),
references (edge ends, supersession, keys, last episode), the embedding file's dtype, shape,
finiteness and ids, and the embedder's dimension. Any problem raises `CorruptFileError` naming
it; nothing is mutated.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.memory.state import MemoryState, capture, restore
from mags_lib.memory.validate import (
    CHECKSUM_KEY,
    FIX,
    validate_document,
    validate_embeddings,
)

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

FORMAT = "mags-liquid-memory"
VERSION = 1
GRAPH_FILE = "graph.json"
EMBEDDINGS_FILE = "embeddings.npy"


def to_document(state: MemoryState) -> dict[str, Any]:
    """The JSON object of `graph.json` for a state."""
    return {"format": FORMAT, "version": VERSION, "config": state.config,
            "embedding_dim": state.dim, "counters": state.counters, "keys": state.keys,
            "nodes": state.nodes, "edges": state.edges, "working": state.working,
            "last_paths": state.last_paths, "tally": state.tally, "history": state.history}


def embeddings_array(ids: np.ndarray, vectors: np.ndarray, dim: int | None) -> np.ndarray:
    """Structured (id, vector) rows for `embeddings.npy`."""
    d = dim or 0
    out = np.zeros(len(ids), dtype=[("id", "<i8"), ("vector", "<f4", (d,))])
    out["id"] = ids
    if len(ids):
        out["vector"] = vectors
    return out


def embeddings_digest(arr: np.ndarray) -> str:
    """SHA-256 (hex) of the embedding array's bytes, as stored in `graph.json`."""
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def save(mem: LiquidMemory, path: Path) -> Path:
    """Write `mem` to directory `path` atomically (see the module docstring)."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or (
            any(path.iterdir()) and not (path / GRAPH_FILE).exists())):
        raise MagsError(f"{path} exists and is not a saved memory",
                        "save to a new directory or to one written by LiquidMemory.save")
    state = capture(mem)
    arr = embeddings_array(state.ids, state.vectors, state.dim)
    doc = {**to_document(state), CHECKSUM_KEY: embeddings_digest(arr)}
    text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        with open(tmp / GRAPH_FILE, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        with open(tmp / EMBEDDINGS_FILE, "wb") as f:
            np.save(f, arr, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        _swap_into_place(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _backup_of(path: Path) -> Path:
    return path.parent / f".{path.name}.bak"


def _swap_into_place(tmp: Path, path: Path) -> None:
    if not path.exists():
        os.replace(tmp, path)
    else:
        backup = _backup_of(path)
        if backup.exists():
            shutil.rmtree(backup)
        os.replace(path, backup)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.rename(backup, path)  # put the previous save back
            raise
        shutil.rmtree(backup, ignore_errors=True)
    with contextlib.suppress(OSError):  # make the renames durable where the OS allows
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_state(path: Path, embedder_dim: int | None = None) -> MemoryState:
    """Read and validate a saved directory into a `MemoryState` (CorruptFileError if bad)."""
    path = Path(path)
    if not (path / GRAPH_FILE).is_file() and (_backup_of(path) / GRAPH_FILE).is_file():
        path = _backup_of(path)  # a crash interrupted a save between its two renames
    graph_file, emb_file = path / GRAPH_FILE, path / EMBEDDINGS_FILE
    if not graph_file.is_file():
        raise CorruptFileError(f"{graph_file} does not exist", FIX)
    if not emb_file.is_file():
        raise CorruptFileError(f"{emb_file} does not exist", FIX)
    try:
        doc = json.loads(graph_file.read_bytes().decode("utf-8"),
                         parse_constant=_reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError, MemoryError) as exc:
        raise CorruptFileError(f"{graph_file} is not valid JSON (truncated or edited?): "
                               f"{str(exc)[:200]}", FIX) from None
    state_doc = validate_document(doc, graph_file, FORMAT, VERSION)
    try:
        arr = np.load(emb_file, allow_pickle=False)
    except (ValueError, OSError, EOFError, MemoryError) as exc:
        raise CorruptFileError(f"{emb_file} is not a readable .npy file: {str(exc)[:200]}",
                               FIX) from None
    expected = doc.get(CHECKSUM_KEY)
    if expected is not None and embeddings_digest(arr) != expected:
        raise CorruptFileError(f"{emb_file} does not match the checksum in {graph_file} (a "
                               "changed byte, or files from two different saves)", FIX)
    ids, vectors = validate_embeddings(arr, emb_file, state_doc, embedder_dim)
    return MemoryState(ids=ids, vectors=vectors, **state_doc)


def load(path: Path, embedder: Any | None = None, detector: Any | None = None,
         clock: Callable[[], float] | None = None) -> LiquidMemory:
    """A new `LiquidMemory` from a saved directory."""
    from mags_lib.memory.store import LiquidMemory

    dim = getattr(embedder, "dim", None) if embedder is not None else None
    state = read_state(path, embedder_dim=dim)
    try:
        mem = LiquidMemory(config=None, embedder=embedder, detector=detector, clock=clock)
        restore(mem, state)
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFileError(f"{path} holds an inconsistent state: {exc}", FIX) from None
    if detector is None:
        from mags_lib.memory.contradiction import RuleBasedDetector

        cfg = mem.config
        mem.detector = RuleBasedDetector(cfg.engram.contradiction_min_overlap,
                                                cfg.engram.contradiction_max_diff)
    return mem


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed (weights and scores must be finite)")
