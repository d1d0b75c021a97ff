"""`LiquidMemory`: the Liquid Knowledge Graph that a small LLM reads (recall) and writes (engram).

    from mags_lib.memory import LiquidMemory
    mem = LiquidMemory()                                 # all-MiniLM-L6-v2 on first use
    mem.observe("On rainy turns the purple glarb eats carrots.", block="semantic")
    hits = mem.recall("what does the glarb eat when it rains?", k=5)
    mem.step(reward=1.0)                                 # after each turn

This module holds the state and the bookkeeping of nodes and edges; the rules live next to it:
`engram.py` (write), `contradiction.py`, `recall.py` / `anchors.py` / `traversal.py` /
`rerank.py` (read),
`dynamics.py` + `maintenance.py` (step), `working.py`, `state.py` / `persistence.py` /
`snapshots.py` (save, load, snapshot, diff), `metrics.py`. Those helpers use only the private
members stated in `HELPER_INTERFACE` below.

Graph. `memory.graph` is an undirected `networkx.Graph` whose nodes are int ids (a monotonic
counter, never reused). Associations (similarity, temporal, hebbian, link) are symmetric, so one
undirected edge each; the only directed relation, supersession, is carried by the edge kind
`supersedes` plus the old node's `superseded_by` attribute (new -> old is read from there).

Node attributes (JSON-friendly): text, block ("episodic" | "semantic"), created / used (step),
created_at (event time: the caller's `time` or the wall clock) / used_at (wall clock), uses,
importance, confidence, sources (provenance), valid_from / valid_to (step; valid_to None while
the fact holds), superseded_by (id or None), solid, key (explicit identity or None). The
embedding lives in the vector index, not in the node.

Edge attributes: weight in (0, 1] *as of step* `t` (decay is lazy, see `dynamics.py`; use
`edge_weight(u, v)` or `to_networkx()` for current weights), kind, used (last used step), solid.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from mags_lib.errors import MagsError, UnknownNodeError
from mags_lib.memory.config import MAX_EPISODE_CONTEXT, MemoryConfig
from mags_lib.memory.contradiction import ContradictionDetector, RuleBasedDetector
from mags_lib.memory.dynamics import check_reward, decayed_weight, should_solidify
from mags_lib.memory.metrics import StepTally
from mags_lib.memory.types import ApplyReport, ContextItem, Hit, MemoryDiff
from mags_lib.memory.working import WorkingMemory

NODE_FIELDS = ("text", "block", "created", "created_at", "used", "used_at", "uses",
               "importance", "confidence", "sources", "valid_from", "valid_to",
               "superseded_by", "solid", "key")
EDGE_FIELDS = ("weight", "kind", "t", "used", "solid")
MAX_PATHS_KEPT = 1000
EXPLICIT_KINDS = ("supersedes", "link")

HELPER_INTERFACE: dict[str, str] = {
    # state the helpers read and advance (state.py saves and restores all of it)
    "_step": "the step counter (maintenance advances it)",
    "_tally": "this step's counts of writes, recalls and edge changes (metrics)",
    "_keys": "explicit key -> the node holding it (engram's identity for keyed facts)",
    "_vectors": "the vector index of node embeddings",
    "_dim": "the embedding dimension",
    "_next_id": "the next node id (never reused)",
    "_history": "the objective's per-step history",
    "_last_paths": "recall paths kept for Hebbian wiring at the next step",
    "_last_episode": "the previous episode, for the temporal edge",
    "_recent_episodes": "the texts of the latest episodes, newest last (engram.episode_context)",
    "_snapshots": "the in-memory snapshots",
    "_next_snapshot": "the next snapshot id",
    # bookkeeping of nodes and edges, so every change keeps index, keys and tally consistent
    "_add_node": "add a node with its vector",
    "_remove_nodes": "remove nodes from graph, index and keys",
    "_connect": "add or strengthen an edge",
    "_connect_new": "the attention edges of a new node",
    "_touch_edge": "mark an edge used now",
    "_reweight": "set an edge's weight as of now",
    "_mark_used": "count a use of nodes",
    "_invalidate": "end a fact's validity (supersession)",
    "_remember_paths": "keep recall paths for the next step",
    # encoding and search
    "_now": "the wall clock or the caller's time",
    "_encode": "embed texts (cached)",
    "_as_vectors": "texts or vectors to a matrix",
    "_query_vector": "embed one query",
    "_search": "nearest valid nodes of one vector",
    "_search_many": "nearest nodes of many vectors",
    "_weight_fn": "the current (decayed) weight of an edge, for traversal",
}
"""The private members of `LiquidMemory` that the helper modules of this package (engram,
recall, maintenance, state, ...) may use, and what each is; nothing outside `memory/` uses any
(tests/test_layers.py checks both)."""


class LiquidMemory:
    """Graph memory with engram (write), recall (ask), dynamics (step) and persistence.

    `config` defaults to `MemoryConfig()`; `embedder` (anything with `.dim` and `.encode`)
    defaults to `default_embedder()`, created on first use; `detector` to `RuleBasedDetector`;
    `clock` (wall time for `created_at` / `used_at`) to `time.time`. `judge` (None: off) is
    asked where the similarity test alone would decide: an `EngramUpdate` that no detector
    flagged supersedes the first of its nearest facts the judge says it replaces (e.g. an
    `LLMJudgeDetector`), instead of the nearest one; it is not saved with the memory.
    `edge_scorer` (None: the similarity rule) picks and weighs a new node's initial edges
    (`edge_scorer.py`); not saved either.
    """

    def __init__(self, config: MemoryConfig | None = None, embedder: Any | None = None, *,
                 detector: ContradictionDetector | None = None,
                 clock: Callable[[], float] | None = None,
                 judge: ContradictionDetector | None = None,
                 edge_scorer: Any | None = None):
        self.config = config if config is not None else MemoryConfig()
        self._embedder = embedder
        self.detector: ContradictionDetector = detector or RuleBasedDetector(
            self.config.engram.contradiction_min_overlap, self.config.engram.contradiction_max_diff)
        self.judge = judge
        self.edge_scorer = edge_scorer
        self.clock = clock or time.time
        self.graph = nx.Graph()
        self.index: Any | None = None  # VectorIndex, created when the dimension is known
        self.lexical = _new_lexical(self.config)
        self.working = WorkingMemory(self.config.consolidation.working_capacity)
        self._dim: int | None = None
        self._next_id = 0
        self._step = 0
        self._last_episode: int | None = None
        self._recent_episodes: deque[str] = deque(maxlen=MAX_EPISODE_CONTEXT)
        self._keys: dict[str, int] = {}
        self._last_paths: list[list[int]] = []
        self._tally = StepTally()
        self._history: deque[StepTally] = deque(maxlen=self.config.objective.metrics_window)
        self._snapshots: dict[int, Any] = {}
        self._next_snapshot = 0

    # ----- basics -------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from mags_lib.embed import default_embedder

            self._embedder = default_embedder()
        return self._embedder

    @property
    def step_count(self) -> int:
        """Steps (turns) taken so far."""
        return self._step

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.graph

    def node(self, node_id: int) -> dict[str, Any]:
        """A copy of a node's attributes plus its id; UnknownNodeError (a KeyError) if none."""
        data = dict(self.graph.nodes[self._known(node_id)])
        data["sources"] = list(data["sources"])
        return {"id": node_id, **data}

    def vectors(self, node_ids: Sequence[int]) -> np.ndarray:
        """The stored (unit-length) embeddings of these nodes, one row each."""
        return self._vectors(list(node_ids))

    def is_valid(self, node_id: int) -> bool:
        return self.graph.nodes[self._known(node_id)]["valid_to"] is None

    def edge_weight(self, u: int, v: int) -> float:
        """Current (decayed) weight of edge u-v; 0.0 if there is none."""
        data = self.graph.get_edge_data(u, v)
        return 0.0 if data is None else self._weight(data)

    def to_networkx(self, valid_only: bool = True) -> nx.Graph:
        """A copy of the graph with current weights (for plotting and analysis)."""
        keep = [n for n, d in self.graph.nodes(data=True)
                if not valid_only or d["valid_to"] is None]
        out = nx.Graph()
        out.add_nodes_from((n, {**self.graph.nodes[n], "sources": list(
            self.graph.nodes[n]["sources"])}) for n in keep)
        out.add_edges_from((u, v, {**d, "weight": self._weight(d), "t": self._step})
                           for u, v, d in self.graph.subgraph(keep).edges(data=True))
        return out

    # ----- write --------------------------------------------------------------------------
    def observe(self, text: str, *, source: str | int | None = None, time: float | None = None,
                block: str = "episodic", confidence: float | None = None,
                embedding: np.ndarray | Sequence[float] | None = None, key: str | None = None,
                importance: float | None = None) -> int:
        """Store `text` directly (no LLM): merge into a near-identical node, supersede a
        contradicted fact, or add a node with attention edges. Returns the id now holding it."""
        from mags_lib.memory.engram import write_items

        item = {"text": text, "source": source, "time": time, "block": block,
                "confidence": confidence, "key": key, "importance": importance}
        vectors = None if embedding is None else np.asarray(embedding)[None, :]
        return write_items(self, [item], vectors)[0].node_id

    def observe_many(self, items: Iterable[str | dict[str, Any]],
                     embeddings: np.ndarray | None = None) -> list[int]:
        """Batched `observe`: items are strings or dicts with text / block / source / time /
        confidence / key / importance. One `embedder.encode` call for all, or `embeddings`
        (one row per item) precomputed. Same result as observing them one by one."""
        from mags_lib.memory.engram import write_items

        return [o.node_id for o in write_items(self, list(items), embeddings)]

    def apply(self, actions: Iterable[Any], *, source: str | int | None = None,
              recall_k: int = 5) -> ApplyReport:
        """Execute recall / engram actions (`mags_lib.actions` dataclasses) in order; written
        nodes get `source` as provenance, each RecallQuery returns `recall_k` hits."""
        from mags_lib.memory.apply import apply_actions

        return apply_actions(self, list(actions), recall_k=recall_k, source=source)

    def perceive(self, text: str, *, block: str = "episodic", source: str | int | None = None,
                 time: float | None = None, importance: float = 0.5,
                 confidence: float | None = None, key: str | None = None,
                 embedding: np.ndarray | Sequence[float] | None = None) -> list[int]:
        """Put a turn into working memory; returns node ids written by the consolidation of
        items that overflowed the buffer (usually none)."""
        from mags_lib.memory.consolidation import perceive

        return perceive(self, text, block=block, source=source, time=time,
                        importance=importance, confidence=confidence, key=key,
                        embedding=embedding)

    def consolidate(self, flush: bool = False) -> list[int]:
        """Consolidate working-memory items that are due (or all with `flush=True`)."""
        from mags_lib.memory.consolidation import consolidate

        return consolidate(self, flush=flush)

    # ----- read ---------------------------------------------------------------------------
    def recall(self, query: str, k: int = 10, *, query_embedding: np.ndarray | None = None,
               block: str | None = None, include_invalid: bool = False,
               learn: bool = True) -> list[Hit]:
        """Hybrid anchors (dense + BM25, MMR coverage), best-first traversal, ranked hits.
        `learn=False` leaves the memory untouched (no Hebbian edges, no use counts)."""
        from mags_lib.memory.recall import recall

        return recall(self, query, k, query_embedding=query_embedding, block=block,
                      include_invalid=include_invalid, learn=learn)

    def recall_context(self, query: str, k: int = 10, **kwargs: Any) -> list[ContextItem]:
        """`recall`, then hits connected in the recalled subgraph merged into one item each."""
        from mags_lib.memory.recall import recall_context

        return recall_context(self, query, k, **kwargs)

    def connect(self, a: str, b: str, *, learn: bool = True) -> list[Hit]:
        """Strongest (max weight product) path between the nodes best matching `a` and `b`."""
        from mags_lib.memory.recall import connect

        return connect(self, a, b, learn=learn)

    def forget(self, node_id: int) -> None:
        """Mark node `node_id` as no longer valid (kept for history, never returned as current):
        what a `Forget` action does to its best match. UnknownNodeError for an unknown id."""
        if self.is_valid(node_id):
            self._invalidate(node_id, by=None)
            self._tally.engrams += 1

    def history(self, node_id: int) -> list[Hit]:
        """The version chain of a fact: `node_id`'s current version first, then every version
        it superseded, newest to oldest. UnknownNodeError (a KeyError) for an unknown id."""
        from mags_lib.memory.recall import history

        return history(self, self._known(node_id))

    # ----- dynamics -----------------------------------------------------------------------
    def step(self, reward: float | None = None) -> dict[str, Any]:
        """End of a turn: reward the last recall paths, consolidate working memory, advance
        the clock, and every `maintenance_every` steps decay / prune / solidify / k-core /
        importance / remove nodes. Returns this step's tally. `reward` is None (no feedback)
        or a finite number in [-1, 1]; anything else raises MagsError (never clipped)."""
        from mags_lib.memory.maintenance import step

        return step(self, check_reward(reward))

    def metrics(self) -> dict[str, Any]:
        """Counts and window means (recalls per query, engrams per turn, churn) and J."""
        from mags_lib.memory.metrics import graph_counts, summarise

        cfg = self.config.objective
        out = {"step": self._step, **graph_counts(self.graph), "working": len(self.working)}
        out.update(summarise(self._history, lam=cfg.objective_lambda, mu=cfg.objective_mu,
                             nu=cfg.objective_nu))
        return out

    # ----- persistence and snapshots --------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the memory to directory `path` atomically (graph.json, embeddings.npy and the
        manifest.json that signs them; see `persistence`)."""
        from mags_lib.memory.persistence import save

        return save(self, Path(path))

    @classmethod
    def load(cls, path: str | Path, embedder: Any | None = None, *,
             detector: ContradictionDetector | None = None,
             clock: Callable[[], float] | None = None,
             judge: ContradictionDetector | None = None,
             edge_scorer: Any | None = None, allow_unsigned: bool = False) -> LiquidMemory:
        """Read a directory written by `save`; raises CorruptFileError on anything malformed
        (a save without a manifest loads only with `allow_unsigned=True`)."""
        from mags_lib.memory.persistence import load

        mem = load(Path(path), embedder=embedder, detector=detector, clock=clock,
                   allow_unsigned=allow_unsigned)
        mem.judge = judge
        mem.edge_scorer = edge_scorer
        return mem

    def snapshot(self) -> int:
        """Keep an in-memory copy of the whole state; returns its id (see `snapshots.py`)."""
        from mags_lib.memory.snapshots import take_snapshot

        return take_snapshot(self)

    def rollback(self, snapshot_id: int) -> None:
        """Restore the exact state of snapshot `snapshot_id` (kept: it can be rolled back to
        again)."""
        from mags_lib.memory.snapshots import rollback

        rollback(self, snapshot_id)

    def diff(self, a: int, b: int | None = None) -> MemoryDiff:
        """What changed from snapshot `a` to snapshot `b` (None: the current state)."""
        from mags_lib.memory.snapshots import diff

        return diff(self, a, b)

    # ----- node and edge bookkeeping (used by the rule modules) ----------------------------
    def _known(self, node_id: int) -> int:
        """`node_id` if the memory holds it, else UnknownNodeError naming it."""
        if node_id not in self.graph:
            raise UnknownNodeError(f"no node {node_id!r} in memory",
                                   "use an id that recall, history or memory.graph shows")
        return node_id

    def _now(self) -> float:
        return float(self.clock())

    def _weight(self, data: dict[str, Any]) -> float:
        cfg = self.config.dynamics
        return decayed_weight(data["weight"], data["t"], data["used"], self._step,
                              cfg.decay_rate, cfg.decay_recency_steps, data["solid"])

    def _weight_fn(self) -> Callable[[dict[str, Any]], float]:
        """`_weight` as a closure over the current step, for hot loops (same values)."""
        dyn = self.config.dynamics
        now, rate, h = self._step, dyn.decay_rate, dyn.decay_recency_steps

        def weight(data: dict[str, Any]) -> float:
            if data["solid"] or data["t"] >= now or rate == 0.0:
                return data["weight"]
            return decayed_weight(data["weight"], data["t"], data["used"], now, rate, h)

        return weight

    def _ensure_index(self, dim: int) -> None:
        if self._dim is None:
            if dim < 1:
                raise MagsError(f"embedding dimension {dim} is not positive",
                                "pass embeddings of shape (n, dim) with dim >= 1")
            self._dim = dim
            self.index = self.config.vector_index(dim)
        elif dim != self._dim:
            raise MagsError(f"embedding dimension {dim} differs from the memory's {self._dim}",
                            "use the same embedder for every write and query of a memory")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._as_vectors(self.embedder.encode(list(texts)), len(texts))

    def _as_vectors(self, vectors: Any, n: int) -> np.ndarray:
        """Validate and L2-normalise an (n, dim) float array (zero rows stay zero)."""
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim == 1 and n == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[0] != n:
            raise MagsError(f"embeddings have shape {arr.shape}, expected ({n}, dim)",
                            "pass one embedding row per item")
        if not np.isfinite(arr).all():
            raise MagsError("embeddings contain NaN or infinity", "check the embedder output")
        self._ensure_index(arr.shape[1])
        return unit_rows(arr)

    def _query_vector(self, text: str, query_embedding: Any | None) -> np.ndarray:
        if query_embedding is None:
            return self._encode([text])[0]
        return self._as_vectors(query_embedding, 1)[0]

    def _vectors(self, ids: Sequence[int]) -> np.ndarray:
        assert self.index is not None and self._dim is not None
        if not ids:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([np.asarray(self.index.get(int(i)), dtype=np.float32) for i in ids])

    def _search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Nearest stored nodes as (id, cosine), best first; empty on an empty index."""
        if self.index is None or len(self.index) == 0 or k <= 0:
            return []
        ids, scores = self.index.search(vector, min(k, len(self.index)))
        return [(int(i), float(s)) for i, s in zip(np.ravel(ids), np.ravel(scores), strict=True)
                if i >= 0 and int(i) in self.graph]

    def _search_many(self, vectors: np.ndarray, k: int, expansion: int | None = None
                     ) -> list[list[tuple[int, float]]]:
        if self.index is None or len(self.index) == 0 or k <= 0:
            return [[] for _ in range(len(vectors))]
        k = min(k, len(self.index))
        # the index holds exactly the graph's nodes (write_items / _remove_nodes keep it in step)
        return self.index.search_pairs(vectors, k, expansion=expansion)

    def _add_node(self, text: str, block: str, *, confidence: float, importance: float,
                  sources: list[Any], created_at: float, key: str | None) -> int:
        """A new graph node; its caller (`engram.write_items`) indexes its vector and text,
        once per chunk of writes."""
        node_id = self._next_id
        self._next_id += 1
        now = self._now()
        self.graph.add_node(node_id, text=text, block=block, created=self._step,
                            created_at=created_at, used=self._step, used_at=now, uses=0,
                            importance=importance, confidence=confidence, sources=sources,
                            valid_from=self._step, valid_to=None, superseded_by=None,
                            solid=False, key=key)
        if key is not None:
            self._keys[key] = node_id
        return node_id

    def _mark_used(self, node_id: int) -> None:
        data = self.graph.nodes[node_id]
        data["used"] = self._step
        data["used_at"] = self._now()
        data["uses"] += 1
        if data["uses"] >= self.config.dynamics.solid_node_uses:
            data["solid"] = True

    def _invalidate(self, node_id: int, by: int | None) -> None:
        data = self.graph.nodes[node_id]
        data["valid_to"] = self._step
        data["superseded_by"] = by
        data["confidence"] *= self.config.engram.superseded_confidence_factor
        key = data["key"]
        if key is not None and self._keys.get(key) == node_id:
            del self._keys[key]

    def _connect(self, u: int, v: int, weight: float, kind: str, *, solid: bool = False) -> None:
        """Create edge u-v, or raise an existing one to `weight` (the explicit kinds
        `supersedes` and `link` replace an automatic kind)."""
        if u == v:
            return
        weight = min(1.0, max(float(weight), 1e-6))
        data = self.graph.get_edge_data(u, v)
        if data is None:
            self.graph.add_edge(u, v, weight=weight, kind=kind, t=self._step, used=self._step,
                                solid=solid or should_solidify(
                                    weight, self.config.dynamics.solidify_threshold))
            self._tally.edges_added += 1
            return
        current = self._weight(data)
        data.update(weight=max(current, weight), t=self._step, used=self._step)
        if kind in EXPLICIT_KINDS and data["kind"] != "supersedes":
            data["kind"] = kind
        data["solid"] = data["solid"] or solid or should_solidify(
            data["weight"], self.config.dynamics.solidify_threshold)
        self._tally.edges_changed += 1

    def _connect_new(self, u: int, targets: list[tuple[int, float]], kind: str) -> None:
        """`_connect(u, v, w, kind)` for every (v, w) in `targets`, in one call: for a node
        just created, whose only edges so far are to nodes it supersedes (those are skipped)."""
        step, threshold = self._step, self.config.dynamics.solidify_threshold
        adj = self.graph._adj
        mine = adj[u]
        added = 0
        for v, w in targets:
            if v == u or v in mine:
                continue
            w = min(1.0, max(float(w), 1e-6))
            # what networkx's add_edge does, minus its per-call checks: u was just made and
            # every v is a stored node (targets come from the index, which mirrors the graph)
            mine[v] = adj[v][u] = {"weight": w, "kind": kind, "t": step, "used": step,
                                   "solid": should_solidify(w, threshold)}
            added += 1
        if added:
            _clear_nx_cache(self.graph)
        self._tally.edges_added += added

    def _touch_edge(self, u: int, v: int) -> None:
        """Mark edge u-v used now (its decay restarts from its current weight)."""
        data = self.graph.get_edge_data(u, v)
        if data is not None:
            data.update(weight=self._weight(data), t=self._step, used=self._step)

    def _reweight(self, u: int, v: int, update: Callable[[float], float]) -> None:
        """Set edge u-v to `update(current weight)`, mark it used, maybe solidify it."""
        data = self.graph.get_edge_data(u, v)
        if data is None:
            return
        new = min(1.0, max(update(self._weight(data)), 1e-6))
        data.update(weight=new, t=self._step, used=self._step)
        if should_solidify(new, self.config.dynamics.solidify_threshold):
            data["solid"] = True
        self._tally.edges_changed += 1

    def _remove_nodes(self, ids: Iterable[int]) -> int:
        ids = [i for i in ids if i in self.graph]
        if not ids:
            return 0
        self._tally.edges_removed += len({(min(u, v), max(u, v))
                                          for u, v in self.graph.edges(ids)})
        for i in ids:
            key = self.graph.nodes[i]["key"]
            if key is not None and self._keys.get(key) == i:
                del self._keys[key]
            self.lexical.remove(i)
        self.graph.remove_nodes_from(ids)
        if self.index is not None:
            self.index.remove(np.asarray(ids, dtype=np.int64))
        if self._last_episode in set(ids):
            self._last_episode = None
        self._tally.nodes_removed += len(ids)
        return len(ids)

    def _remember_paths(self, paths: Iterable[list[int]]) -> None:
        for path in paths:
            if len(path) >= 2 and len(self._last_paths) < MAX_PATHS_KEPT:
                self._last_paths.append(list(path))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise float32 rows so that their float32 norm is exactly 1 (zero rows stay 0).

    A plain division can leave a norm of 1 +- 1 ulp, and normalising such a row again (as the
    vector index does on every add, e.g. when a saved memory is loaded or rolled back) changes
    its last bits. Rows whose norm is exactly 1.0 are fixed points of any normalisation, which
    makes save / load and rollback bit-exact; a few stubborn rows get their largest component
    nudged by single ulps until they get there."""
    out = np.asarray(vectors, dtype=np.float32)
    for _ in range(4):
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if ((norms == 1.0) | (norms == 0.0)).all():
            return out
        out = (out / np.where(norms == 0, 1.0, norms)).astype(np.float32, copy=False)
    out = out.copy()
    norms = np.linalg.norm(out, axis=1)
    for row in np.flatnonzero((norms != 1.0) & (norms != 0.0)).tolist():
        col = int(np.argmax(np.abs(out[row])))
        for _ in range(64):
            norm = np.linalg.norm(out[row:row + 1], axis=1)[0]
            if norm == 1.0:
                break
            toward = np.float32(0.0) if norm > 1.0 else np.copysign(np.float32(2.0), out[row, col])
            out[row, col] = np.nextafter(out[row, col], toward)
    return out


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector around bulk passes that build ~a million small
    tuples and dicts; otherwise repeated collections make them 5x slower."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _clear_nx_cache(graph: nx.Graph) -> None:
    """What networkx (>= 3.3) does after every change: drop the graph's cached backend copies."""
    clear = getattr(nx, "_clear_cache", None)
    if clear is not None:
        clear(graph)


def _new_lexical(config: MemoryConfig) -> Any:
    from mags_lib.memory.lexical import BM25Index

    return BM25Index(stem=config.recall.lexical_stem)
