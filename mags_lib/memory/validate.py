"""Strict validation of a saved memory (`graph.json` document, `embeddings.npy` array and
`manifest.json`).

Saved files are untrusted input: every field is checked for presence, exact type, range and
cross-references before anything is built, and the first problem raises `CorruptFileError`
with the file, the JSON location and what was expected. Limits (ids < 2**53, texts <= 1 MB,
at most 10,000 sources a node) keep hostile values from turning into huge allocations.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np

from mags_lib.actions.types import BLOCKS
from mags_lib.errors import CorruptFileError
from mags_lib.memory.config import MemoryConfig
from mags_lib.memory.metrics import StepTally
from mags_lib.memory.store import EDGE_FIELDS, MAX_PATHS_KEPT, NODE_FIELDS

FIX = ("the directory was not written by LiquidMemory.save, or was truncated or edited: "
       "load an earlier copy, or rebuild the memory and save it again")
MAX_ID = 2**53
MAX_TEXT = 1_000_000
MAX_SOURCES = 10_000
MAX_DIM = 65_536
TOP_KEYS = {"format", "version", "config", "embedding_dim", "counters", "keys", "nodes", "edges",
            "working", "last_paths", "tally", "history"}
CHECKSUM_KEY = "embeddings_sha256"  # optional: saves older than the checksum lack it
MANIFEST_KEYS = {"format", "version", "files"}
WORKING_KEYS = {"text", "embedding", "step", "block", "source", "time", "importance",
                "confidence", "key", "uses"}


class _Checker:
    def __init__(self, file: Path):
        self.file = file

    def fail(self, where: str, problem: str) -> None:
        raise CorruptFileError(f"{self.file}: {where}: {problem}", FIX)

    def obj(self, value: Any, where: str, keys: set[str] | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {type(value).__name__}")
        if keys is not None and set(value) != keys:
            missing, extra = sorted(keys - set(value)), sorted(set(value) - keys)
            self.fail(where, f"missing keys {missing}, unexpected keys {extra}")
        return value

    def lst(self, value: Any, where: str, max_len: int | None = None) -> list[Any]:
        if not isinstance(value, list):
            self.fail(where, f"expected a list, got {type(value).__name__}")
        if max_len is not None and len(value) > max_len:
            self.fail(where, f"{len(value)} entries, at most {max_len} allowed")
        return value

    def int_(self, value: Any, where: str, lo: int = 0, hi: int = MAX_ID,
             none: bool = False) -> int | None:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {value!r:.60}")
        if not lo <= value <= hi:
            self.fail(where, f"{value!r:.60} is outside [{lo}, {hi}]")
        return value

    def num(self, value: Any, where: str, lo: float = -math.inf, hi: float = math.inf,
            none: bool = False, open_lo: bool = False) -> float | None:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(where, f"expected a number, got {value!r:.60}")
        value = float(value)
        if not math.isfinite(value) or not (lo < value if open_lo else lo <= value) or value > hi:
            self.fail(where, f"{value!r} is not finite or outside the range "
                             f"{'(' if open_lo else '['}{lo}, {hi}]")
        return value

    def str_(self, value: Any, where: str, none: bool = False, max_len: int = MAX_TEXT
             ) -> str | None:
        if value is None and none:
            return None
        if not isinstance(value, str) or len(value) > max_len:
            self.fail(where, f"expected a string of at most {max_len} characters")
        return value

    def bool_(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, f"expected true or false, got {value!r:.60}")
        return value

    def source(self, value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.fail(where, f"a source must be a string or an integer, got {value!r:.60}")
        if isinstance(value, str):
            self.str_(value, where)
        else:
            self.int_(value, where, lo=-MAX_ID)


def _check_header(c: _Checker, doc: Any, fmt: str, versions: Collection[int]) -> None:
    if not isinstance(doc, dict):
        c.fail("top level", "expected a JSON object")
    if doc.get("format") != fmt:
        c.fail("format", f"expected {fmt!r}, got {doc.get('format')!r:.60}")
    if isinstance(doc.get("version"), bool) or doc.get("version") not in versions:
        raise CorruptFileError(
            f"{c.file}: version {doc.get('version')!r:.60} is not supported here (this code "
            f"reads version {' or '.join(map(str, sorted(versions)))})",
            "load it with the mags_lib version that wrote it, or re-create the memory with "
            "this version")


def validate_manifest(doc: Any, file: Path, fmt: str, versions: Collection[int],
                      names: Collection[str]) -> dict[str, dict[str, Any]]:
    """Check a parsed `manifest.json`: it lists exactly `names`, each with a "sha256" (64
    lowercase hex digits) and a "size" (bytes); return its "files" object."""
    c = _Checker(file)
    _check_header(c, doc, fmt, versions)
    c.obj(doc, "top level", MANIFEST_KEYS)
    files = c.obj(doc["files"], "files", set(names))
    for name, entry in files.items():
        c.obj(entry, f"files[{name!r}]", {"sha256", "size"})
        c.int_(entry["size"], f"files[{name!r}].size")
        if not _is_hex_digest(entry["sha256"]):
            c.fail(f"files[{name!r}].sha256", "expected 64 lowercase hex digits")
    return files


def _is_hex_digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(
        ch in "0123456789abcdef" for ch in value)


def validate_document(doc: Any, file: Path, fmt: str,
                      versions: Collection[int]) -> dict[str, Any]:
    """Check a parsed `graph.json` (its "version" one of `versions`); return the MemoryState
    fields except ids / vectors."""
    c = _Checker(file)
    _check_header(c, doc, fmt, versions)
    c.obj(doc, "top level", TOP_KEYS | ({CHECKSUM_KEY} & set(doc)))
    if CHECKSUM_KEY in doc and not _is_hex_digest(doc[CHECKSUM_KEY]):
        c.fail(CHECKSUM_KEY, "expected 64 lowercase hex digits")
    try:
        config = MemoryConfig.from_dict(doc["config"])
    except (ValueError, TypeError) as exc:
        c.fail("config", str(exc))
    dim = c.int_(doc["embedding_dim"], "embedding_dim", lo=1, hi=MAX_DIM, none=True)
    counters = c.obj(doc["counters"], "counters", {"next_id", "step", "last_episode"})
    step = c.int_(counters["step"], "counters.step")
    next_id = c.int_(counters["next_id"], "counters.next_id")
    nodes = c.lst(doc["nodes"], "nodes")
    ids = _check_nodes(c, nodes, step, next_id)
    if dim is None and nodes:
        c.fail("embedding_dim", "null although there are nodes")
    if counters["last_episode"] is not None and counters["last_episode"] not in ids:
        c.fail("counters.last_episode", "not a node id")
    _check_edges(c, c.lst(doc["edges"], "edges"), ids, step)
    keys = c.obj(doc["keys"], "keys")
    valid = {node["id"] for node in nodes if node["valid_to"] is None}
    for key, node in keys.items():
        if c.int_(node, f"keys[{key!r:.40}]") not in valid:
            c.fail(f"keys[{key!r:.40}]", "not the id of a valid node")
    working = _check_working(c, doc["working"], dim, step)
    paths = c.lst(doc["last_paths"], "last_paths", MAX_PATHS_KEPT)
    for i, path in enumerate(paths):
        for j, node in enumerate(c.lst(path, f"last_paths[{i}]", 100_000)):
            c.int_(node, f"last_paths[{i}][{j}]")
    tally = _check_tally(c, doc["tally"], "tally")
    history = [_check_tally(c, t, f"history[{i}]") for i, t in enumerate(
        c.lst(doc["history"], "history", config.objective.metrics_window))]
    return {"config": config.to_dict(), "dim": dim, "counters": dict(counters), "keys": keys,
            "nodes": nodes, "edges": doc["edges"], "working": working, "last_paths": paths,
            "tally": tally, "history": history}


def _check_nodes(c: _Checker, nodes: list[Any], step: int, next_id: int) -> set[int]:
    ids: set[int] = set()
    for i, node in enumerate(nodes):
        where = f"nodes[{i}]"
        c.obj(node, where, {"id", *NODE_FIELDS})
        node_id = c.int_(node["id"], f"{where}.id", hi=MAX_ID - 1)
        if node_id in ids:
            c.fail(f"{where}.id", f"duplicate id {node_id}")
        if node_id >= next_id:
            c.fail(f"{where}.id", f"{node_id} >= counters.next_id {next_id}")
        ids.add(node_id)
        c.str_(node["text"], f"{where}.text")
        if node["block"] not in BLOCKS:
            c.fail(f"{where}.block", f"expected one of {list(BLOCKS)}")
        for name in ("created", "used", "valid_from"):
            c.int_(node[name], f"{where}.{name}", hi=step)
        c.int_(node["valid_to"], f"{where}.valid_to", hi=step, none=True)
        c.int_(node["uses"], f"{where}.uses")
        for name in ("created_at", "used_at"):
            c.num(node[name], f"{where}.{name}", lo=-1e18, hi=1e18)
        c.num(node["importance"], f"{where}.importance", lo=0.0, hi=1e6)
        c.num(node["confidence"], f"{where}.confidence", lo=0.0, hi=1.0)
        for j, s in enumerate(c.lst(node["sources"], f"{where}.sources", MAX_SOURCES)):
            c.source(s, f"{where}.sources[{j}]")
        c.int_(node["superseded_by"], f"{where}.superseded_by", none=True)
        c.bool_(node["solid"], f"{where}.solid")
        c.str_(node["key"], f"{where}.key", none=True)
    for i, node in enumerate(nodes):
        by = node["superseded_by"]  # may name a newer version removed since (keep_history off)
        if by is not None and (by >= next_id or by == node["id"]):
            c.fail(f"nodes[{i}].superseded_by", f"{by} is not another node's id")
        if by is not None and node["valid_to"] is None:
            c.fail(f"nodes[{i}]", "superseded but still valid (valid_to is null)")
    return ids


def _check_edges(c: _Checker, edges: list[Any], ids: set[int], step: int) -> None:
    seen: set[tuple[int, int]] = set()
    for i, edge in enumerate(edges):
        where = f"edges[{i}]"
        c.obj(edge, where, {"source", "target", *EDGE_FIELDS})
        u = c.int_(edge["source"], f"{where}.source")
        v = c.int_(edge["target"], f"{where}.target")
        if u not in ids or v not in ids:
            c.fail(where, f"edge {u}-{v} refers to a node that does not exist")
        if u == v:
            c.fail(where, f"self-loop on node {u}")
        pair = (min(u, v), max(u, v))
        if pair in seen:
            c.fail(where, f"duplicate edge {u}-{v}")
        seen.add(pair)
        c.num(edge["weight"], f"{where}.weight", lo=0.0, hi=1.0, open_lo=True)
        c.str_(edge["kind"], f"{where}.kind", max_len=64)
        t = c.int_(edge["t"], f"{where}.t", hi=step)
        c.int_(edge["used"], f"{where}.used", hi=t)
        c.bool_(edge["solid"], f"{where}.solid")


def _check_working(c: _Checker, working: Any, dim: int | None, step: int) -> dict[str, Any]:
    c.obj(working, "working", {"capacity", "items"})
    capacity = c.int_(working["capacity"], "working.capacity", lo=1, hi=10**6)
    items = c.lst(working["items"], "working.items", capacity)
    for i, item in enumerate(items):
        where = f"working.items[{i}]"
        c.obj(item, where, WORKING_KEYS)
        c.str_(item["text"], f"{where}.text")
        emb = c.lst(item["embedding"], f"{where}.embedding", MAX_DIM)
        if dim is None or len(emb) != dim:
            c.fail(f"{where}.embedding", f"{len(emb)} values, expected embedding_dim {dim}")
        for j, x in enumerate(emb):
            c.num(x, f"{where}.embedding[{j}]")
        c.int_(item["step"], f"{where}.step", hi=step)
        if item["block"] not in BLOCKS:
            c.fail(f"{where}.block", f"expected one of {list(BLOCKS)}")
        if item["source"] is not None:
            c.source(item["source"], f"{where}.source")
        c.num(item["time"], f"{where}.time", lo=-1e18, hi=1e18, none=True)
        c.num(item["importance"], f"{where}.importance", lo=0.0, hi=1.0)
        c.num(item["confidence"], f"{where}.confidence", lo=0.0, hi=1.0, none=True)
        c.str_(item["key"], f"{where}.key", none=True)
        c.int_(item["uses"], f"{where}.uses")
    return working


def _check_tally(c: _Checker, tally: Any, where: str) -> dict[str, Any]:
    names = set(StepTally.__dataclass_fields__)
    c.obj(tally, where, names)
    for name in names - {"reward"}:
        c.int_(tally[name], f"{where}.{name}")
    c.num(tally["reward"], f"{where}.reward", none=True)
    return tally


def validate_embeddings(arr: Any, file: Path, state: dict[str, Any],
                        embedder_dim: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Check `embeddings.npy` against the validated document; return (ids, vectors)."""
    c = _Checker(file)
    dim = state["dim"]
    if not isinstance(arr, np.ndarray) or arr.dtype.names != ("id", "vector") or arr.ndim != 1:
        c.fail("array", "expected a 1-d structured array with fields (id, vector)")
    if arr.dtype["id"] != np.dtype("<i8") or arr.dtype["vector"].base != np.dtype("<f4"):
        c.fail("dtype", f"expected id <i8 and vector <f4, got {arr.dtype}")
    shape = arr.dtype["vector"].shape
    if shape != ((dim,) if dim is not None else (0,)):
        c.fail("vector shape", f"vectors of shape {shape} but embedding_dim is {dim}")
    if embedder_dim is not None and dim is not None and embedder_dim != dim:
        raise CorruptFileError(
            f"{file}: embeddings have dimension {dim} but the embedder gives {embedder_dim}",
            "load with the embedder the memory was built with (or embedder=None)")
    ids = np.asarray(arr["id"], dtype=np.int64)
    node_ids = {node["id"] for node in state["nodes"]}
    if len(ids) != len(node_ids) or len(np.unique(ids)) != len(ids) or set(
            ids.tolist()) != node_ids:
        c.fail("id", f"{len(ids)} embedding ids do not match the {len(node_ids)} node ids")
    vectors = np.asarray(arr["vector"], dtype=np.float32).reshape(len(ids), dim or 0)
    if not np.isfinite(vectors).all():
        c.fail("vector", "contains NaN or infinity")
    return ids, np.ascontiguousarray(vectors)
