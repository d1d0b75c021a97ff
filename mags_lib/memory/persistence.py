"""Save and load a `LiquidMemory`: a signed directory of JSON and NumPy, written atomically, read
defensively. No pickle anywhere.

    mem.save("data/mem")                           # graph.json, embeddings.npy, manifest.json
    LiquidMemory.load("data/mem", embedder=emb)    # every file checked against the manifest
    LiquidMemory.load("old", allow_unsigned=True)  # a save without a manifest (version 1)

Format "mags-liquid-memory", version 2, a directory holding exactly:

* `graph.json`: {"format", "version", "config" (MemoryConfig fields), "embedding_dim",
  "counters" {"next_id", "step", "last_episode"}, "keys" {key: node id}, "nodes" [{"id", the
  node attributes of `store.NODE_FIELDS`}], "edges" [{"source", "target", the edge attributes
  of `store.EDGE_FIELDS`}] (node-link style), "working" {"capacity", "items"}, "last_paths",
  "tally", "history", "embeddings_sha256"}. No NaN or Infinity literals.
  `embeddings_sha256` is the SHA-256 of the embedding array's bytes; a mismatch on load (a
  flipped byte, files from two different saves) is refused.
* `embeddings.npy`: a structured array with fields `id` (<i8) and `vector` (<f4, (dim,)), one
  row per node, written by `np.save(..., allow_pickle=False)`.
* `manifest.json`: {"format", "version", "files" {name: {"sha256", "size"}}} for every other
  file of the save (graph.json and embeddings.npy), written last. On load a file that differs
  from its entry (one edited character, a halved weight, a flipped byte), a missing file or a
  file the manifest does not list is refused with `CorruptFileError`.

Version 1 (before the manifest: the same two files, `embeddings_sha256` optional) and any save
whose manifest is gone are *unsigned*: they load only with `allow_unsigned=True`, and saving
them again signs them.

Atomic writes: the files go to a fresh sibling temporary directory `.NAME.tmp-PID-RANDOM`
(each file fsynced, the manifest last, then the directory); then the old directory is renamed
to `.NAME.bak`, the new one renamed into place and the backup deleted. A crash at any point
leaves the last complete save either at `NAME` or, between the two renames, at `.NAME.bak`:
`locate_save` finds it (what `load` reads) and `recover` renames it back into place (what
`save` does first, so no save ever deletes the only complete copy; the chat does it when it
opens). Temporary directories of NAME left by a crash are removed by the next save of NAME:
those whose process id is not a live process (a live one may be another process saving now).

Loading checks everything before building anything: the manifest, JSON syntax, format and
version, exact key sets, types, ranges (finite weights in (0, 1], confidences in [0, 1], ids
>= 0 and < 2**53), references (edge ends, supersession, keys, last episode), the embedding
file's dtype, shape, finiteness and ids, and the embedder's dimension. Any problem raises
`CorruptFileError` naming it; nothing is mutated.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.memory.state import MemoryState, capture, restore
from mags_lib.memory.validate import (
    CHECKSUM_KEY,
    FIX,
    validate_document,
    validate_embeddings,
    validate_manifest,
)

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

FORMAT = "mags-liquid-memory"
VERSION = 2
UNSIGNED_VERSIONS = (1, 2)  # what loads with allow_unsigned=True
GRAPH_FILE = "graph.json"
EMBEDDINGS_FILE = "embeddings.npy"
MANIFEST_FILE = "manifest.json"
SIGNED_FILES = (GRAPH_FILE, EMBEDDINGS_FILE)
UNSIGNED_FIX = ("if you trust the files, load them with LiquidMemory.load(path, "
                "allow_unsigned=True) (the chat: --allow-unsigned) and save again to sign them; "
                "else load an earlier copy")
CHANGED_FIX = ("restore the directory from a copy; if you changed the file on purpose, delete "
               "manifest.json, load with allow_unsigned=True and save again to sign it")
EXTRA_FIX = (f"move it out of the directory (a save holds only {', '.join(SIGNED_FILES)} and "
             f"{MANIFEST_FILE})")


class SaveLocation(NamedTuple):
    """Where the last complete save of a path is: the path itself, or its backup after a
    crash between the two renames of `save` (`from_backup`)."""

    directory: Path
    from_backup: bool


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


def encode_files(state: MemoryState) -> dict[str, bytes]:
    """The bytes of each file of a save of `state`, the manifest last (`SIGNED_FILES` order)."""
    arr = embeddings_array(state.ids, state.vectors, state.dim)
    doc = {**to_document(state), CHECKSUM_KEY: embeddings_digest(arr)}
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    files = {GRAPH_FILE: json.dumps(doc, allow_nan=False, separators=(",", ":")).encode("utf-8"),
             EMBEDDINGS_FILE: buf.getvalue()}
    manifest = {"format": FORMAT, "version": VERSION, "files": {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in files.items()}}
    return {**files, MANIFEST_FILE: json.dumps(manifest, indent=1).encode("utf-8")}


def save(mem: LiquidMemory, path: Path) -> Path:
    """Write `mem` to directory `path` atomically (see the module docstring)."""
    path = Path(path)
    _check_target(path)
    files = encode_files(capture(mem))
    path.parent.mkdir(parents=True, exist_ok=True)
    recover(path)  # a backup that is the only complete save goes back in place first
    remove_stale_temporaries(path)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        for name, data in files.items():
            _write_synced(tmp / name, data)
        _fsync_dir(tmp)
        _swap_into_place(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _check_target(path: Path) -> None:
    if path.exists() and not (path.is_dir() and (_holds_save(path) or _is_empty_dir(path))):
        raise MagsError(f"{path} exists and is not a saved memory",
                        "save to a new directory or to one written by LiquidMemory.save")


def _write_synced(file: Path, data: bytes) -> None:
    with open(file, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # make renames and new entries durable where the OS allows
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def backup_of(path: Path) -> Path:
    """The backup `save` keeps of `path` between its two renames: `.NAME.bak` beside it."""
    return path.parent / f".{path.name}.bak"


def _swap_into_place(tmp: Path, path: Path) -> None:
    if not path.exists():
        os.replace(tmp, path)
    else:
        backup = backup_of(path)
        if backup.exists():  # older than `path` (recover ran first), left by a crash
            shutil.rmtree(backup)
        os.replace(path, backup)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.rename(backup, path)  # put the previous save back
            raise
        shutil.rmtree(backup, ignore_errors=True)
    _fsync_dir(path.parent)


# ----- recovery after a crash ---------------------------------------------------------------
def _holds_save(directory: Path) -> bool:
    return directory.is_dir() and ((directory / MANIFEST_FILE).is_file()
                                   or (directory / GRAPH_FILE).is_file())


def _is_empty_dir(directory: Path) -> bool:
    return directory.is_dir() and not any(directory.iterdir())


def locate_save(path: str | Path) -> SaveLocation:
    """Where the last complete save of `path` is: `path`, or its backup `.NAME.bak` when a
    crash between the two renames of `save` left `path` missing (or an empty directory).
    Reads nothing but directory entries; `path` itself when nothing was saved."""
    path = Path(path)
    backup = backup_of(path)
    if not _holds_save(path) and (not path.exists() or _is_empty_dir(path)) \
            and _holds_save(backup):
        return SaveLocation(backup, True)
    return SaveLocation(path, False)


def recover(path: str | Path) -> Path | None:
    """Rename the backup that `locate_save` reads back into place at `path`; the backup's path
    when it did, None when there was nothing to recover."""
    path = Path(path)
    where = locate_save(path)
    if not where.from_backup:
        return None
    if path.is_dir():
        path.rmdir()  # empty (locate_save checked)
    os.replace(where.directory, path)
    _fsync_dir(path.parent)
    return where.directory


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary directories `.NAME.tmp-PID-RANDOM` of `path` left by a crash: those
    whose PID is not a live process (never this process's, which may be saving in another
    thread). Returns what was removed."""
    pattern = re.compile(re.escape(f".{path.name}.tmp-") + r"(\d+)-[0-9a-f]{8}")
    removed = []
    for entry in path.parent.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() \
                and not _process_alive(int(match.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # no permission to signal it: it exists
        return True
    return True


# ----- reading ------------------------------------------------------------------------------
def verify_manifest(directory: Path, allow_unsigned: bool = False) -> bool:
    """Check every file of the save in `directory` against its `manifest.json`; True when
    signed, False for an unsigned save that `allow_unsigned` lets through (CorruptFileError
    for anything else)."""
    manifest = directory / MANIFEST_FILE
    if not manifest.is_file():
        if allow_unsigned or not (directory / GRAPH_FILE).is_file():
            return False  # read_state reports a missing graph.json
        raise CorruptFileError(
            f"{manifest} does not exist: {directory} is an unsigned save (written before saves "
            "were signed, or its manifest was deleted), so its files cannot be checked",
            UNSIGNED_FIX)
    files = validate_manifest(_read_json(manifest), manifest, FORMAT, (VERSION,), SIGNED_FILES)
    for entry in sorted(directory.iterdir()):
        if entry.name != MANIFEST_FILE and entry.name not in files:
            raise CorruptFileError(f"{entry} is not part of the save (not listed in {manifest})",
                                   EXTRA_FIX)
    for name, expected in files.items():
        file = directory / name
        if not file.is_file():
            raise CorruptFileError(f"{file} does not exist (listed in {manifest})", FIX)
        if file.stat().st_size != expected["size"] or _file_sha256(file) != expected["sha256"]:
            raise CorruptFileError(
                f"{file} does not match its SHA-256 in {manifest}: it changed after it was saved "
                "(an edit, a disk error, or files from two different saves)", CHANGED_FIX)
    return True


def _file_sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_bytes().decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError, MemoryError) as exc:
        raise CorruptFileError(f"{file} is not valid JSON (truncated or edited?): "
                               f"{str(exc)[:200]}", FIX) from None


def read_state(path: Path, embedder_dim: int | None = None, *,
               allow_unsigned: bool = False) -> MemoryState:
    """Read and validate a saved directory into a `MemoryState` (CorruptFileError if bad).

    Reads the last complete save (`locate_save`); an unsigned one only with `allow_unsigned`."""
    path = locate_save(path).directory
    signed = verify_manifest(path, allow_unsigned)
    graph_file, emb_file = path / GRAPH_FILE, path / EMBEDDINGS_FILE
    if not graph_file.is_file():
        raise CorruptFileError(f"{graph_file} does not exist", FIX)
    if not emb_file.is_file():
        raise CorruptFileError(f"{emb_file} does not exist", FIX)
    doc = _read_json(graph_file)
    versions = (VERSION,) if signed else UNSIGNED_VERSIONS
    state_doc = validate_document(doc, graph_file, FORMAT, versions)
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
         clock: Callable[[], float] | None = None, *,
         allow_unsigned: bool = False) -> LiquidMemory:
    """A new `LiquidMemory` from a saved directory (an unsigned save only with
    `allow_unsigned=True`)."""
    from mags_lib.memory.store import LiquidMemory

    dim = getattr(embedder, "dim", None) if embedder is not None else None
    state = read_state(path, embedder_dim=dim, allow_unsigned=allow_unsigned)
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
