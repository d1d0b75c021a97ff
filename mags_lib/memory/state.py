"""`MemoryState`: the whole state of a `LiquidMemory` as plain data, captured and restored.

One representation serves three features: `save` writes it as JSON + NumPy (`persistence.py`),
`load` reads it back, and `snapshot` / `rollback` keep it in memory (`snapshots.py`). Everything
that influences future behaviour is in it: config, nodes, edges, embeddings, counters (next
id, step, last episode), the key table, working memory, the paths of the current turn's recalls
and the metric history. The vector and BM25 indices are rebuilt from the embeddings and the
texts (ids in ascending order), which gives identical search results whenever the vector index
is exact (below `exact_below` nodes); above it the HNSW graph is rebuilt, its cosine scores are
still exact but its candidate set may differ from the original graph's in rare misses.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np

from mags_lib.memory.config import MemoryConfig
from mags_lib.memory.engram import recent_episodes
from mags_lib.memory.metrics import StepTally
from mags_lib.memory.store import paused_gc
from mags_lib.memory.working import WorkingMemory

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory


@dataclass
class MemoryState:
    """Plain-data state; `nodes` are attribute dicts with an "id", `edges` dicts with
    "source" and "target" (node-link style); `ids[i]` is the node of `vectors[i]`."""

    config: dict[str, Any]
    dim: int | None
    counters: dict[str, Any]
    keys: dict[str, int]
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    working: dict[str, Any]
    last_paths: list[list[int]]
    tally: dict[str, Any]
    history: list[dict[str, Any]]
    ids: np.ndarray
    vectors: np.ndarray

    @property
    def step(self) -> int:
        return int(self.counters["step"])


def capture(mem: LiquidMemory) -> MemoryState:
    """A deep copy of `mem`'s state (cost: O(nodes + edges) dicts and the embedding matrix)."""
    with paused_gc():
        return _capture(mem)


def _capture(mem: LiquidMemory) -> MemoryState:
    nodes = [{"id": n, **d, "sources": list(d["sources"])} for n, d in mem.graph._node.items()]
    edges = [{"source": u, "target": v, **d} for u, nbrs in mem.graph._adj.items()
             for v, d in nbrs.items() if u < v]
    ids = np.asarray(sorted(mem.graph.nodes), dtype=np.int64)
    if mem.index is not None:
        vectors = mem._vectors(ids.tolist())
    else:
        vectors = np.zeros((0, 0), dtype=np.float32)
    return MemoryState(
        config=mem.config.to_dict(), dim=mem._dim,
        counters={"next_id": mem._next_id, "step": mem._step,
                  "last_episode": mem._last_episode},
        keys=dict(mem._keys), nodes=nodes, edges=edges, working=mem.working.to_dict(),
        last_paths=[list(p) for p in mem._last_paths], tally=mem._tally.to_dict(),
        history=[t.to_dict() for t in mem._history], ids=ids, vectors=vectors)


def restore(mem: LiquidMemory, state: MemoryState) -> None:
    """Replace `mem`'s state by a copy of `state`. Everything is built first and assigned at
    the end, so a failure leaves `mem` as it was."""
    with paused_gc():
        _restore(mem, state)


def _restore(mem: LiquidMemory, state: MemoryState) -> None:
    config = MemoryConfig.from_dict(state.config)
    graph = nx.Graph()
    graph.add_nodes_from((d["id"], {k: v for k, v in d.items() if k != "id"} | {
        "sources": list(d["sources"])}) for d in state.nodes)
    graph.add_edges_from((d["source"], d["target"], {
        k: v for k, v in d.items() if k not in ("source", "target")}) for d in state.edges)
    index = None
    if state.dim is not None:
        index = config.vector_index(state.dim)
        if len(state.ids):
            order = np.argsort(state.ids, kind="stable")
            index.add(state.ids[order], state.vectors[order])
    from mags_lib.memory.lexical import BM25Index

    lexical = BM25Index(stem=config.recall.lexical_stem)
    node_ids = sorted(graph.nodes)
    lexical.add_many(node_ids, [graph.nodes[node_id]["text"] for node_id in node_ids])
    working = WorkingMemory.from_dict(state.working)
    history = deque((StepTally.from_dict(t) for t in state.history),
                    maxlen=config.objective.metrics_window)
    tally = StepTally.from_dict(state.tally)
    # all built: commit
    mem.config, mem.graph, mem.index, mem.lexical = config, graph, index, lexical
    mem.working, mem._dim = working, state.dim
    mem._next_id = int(state.counters["next_id"])
    mem._step = int(state.counters["step"])
    mem._last_episode = state.counters["last_episode"]
    mem._recent_episodes.clear()
    mem._recent_episodes.extend(recent_episodes(mem))
    mem._keys = dict(state.keys)
    mem._last_paths = [list(p) for p in state.last_paths]
    mem._tally, mem._history = tally, history
