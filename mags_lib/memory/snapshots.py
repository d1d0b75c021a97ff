"""In-memory snapshots of a `LiquidMemory`: take, roll back to, and diff.

A snapshot is a `MemoryState` (see `state.py`): a deep copy of every node and edge dict plus the
embedding matrix, counters, working memory and metric history. Cost: O(nodes + edges) time and
memory, roughly 1 KB per node, 0.3 KB per edge and 4 * dim bytes per node for the vectors
(about 300 MB at 100k nodes, 500k edges, dim 384), so keep few; at most `max_snapshots` are
kept, the oldest dropped first. `rollback(id)` rebuilds the graph and the indices from the
snapshot (which stays available), so the run continues exactly as it did after the snapshot
(with an exact vector index, i.e. below `exact_below` nodes).

`diff(a, b)` compares two snapshots (b=None: the current state): nodes added / removed /
changed (by attribute name), edges added / removed / reweighted (weights decayed to each
state's own step, compared with a 1e-9 tolerance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mags_lib.errors import MagsError
from mags_lib.memory.config import MemoryConfig
from mags_lib.memory.dynamics import decayed_weight
from mags_lib.memory.state import MemoryState, capture, restore
from mags_lib.memory.types import MemoryDiff

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

WEIGHT_TOLERANCE = 1e-9


def take_snapshot(mem: LiquidMemory) -> int:
    """Store a copy of the current state; return its id."""
    snapshot_id = mem._next_snapshot
    mem._next_snapshot += 1
    mem._snapshots[snapshot_id] = capture(mem)
    while len(mem._snapshots) > mem.config.index.max_snapshots:
        del mem._snapshots[min(mem._snapshots)]
    return snapshot_id


def _get(mem: LiquidMemory, snapshot_id: int) -> MemoryState:
    try:
        return mem._snapshots[snapshot_id]
    except KeyError:
        raise MagsError(f"no snapshot {snapshot_id!r} (kept: {sorted(mem._snapshots)})",
                        "take one with memory.snapshot(); only the last max_snapshots are "
                        "kept") from None


def rollback(mem: LiquidMemory, snapshot_id: int) -> None:
    """Restore the exact state of a snapshot; the snapshot itself is kept."""
    restore(mem, _get(mem, snapshot_id))


def diff(mem: LiquidMemory, a: int, b: int | None = None) -> MemoryDiff:
    """What changed from snapshot `a` to snapshot `b` (None: now)."""
    old = _get(mem, a)
    new = capture(mem) if b is None else _get(mem, b)
    return diff_states(old, new)


def diff_states(old: MemoryState, new: MemoryState) -> MemoryDiff:
    """Node and edge differences between two states (pure)."""
    old_nodes = {d["id"]: d for d in old.nodes}
    new_nodes = {d["id"]: d for d in new.nodes}
    out = MemoryDiff(nodes_added=sorted(set(new_nodes) - set(old_nodes)),
                     nodes_removed=sorted(set(old_nodes) - set(new_nodes)))
    for node_id in sorted(set(old_nodes) & set(new_nodes)):
        changed = sorted(k for k in new_nodes[node_id] if new_nodes[node_id][k]
                         != old_nodes[node_id].get(k))
        if changed:
            out.nodes_changed[node_id] = changed
    old_edges = _edge_weights(old)
    new_edges = _edge_weights(new)
    out.edges_added = sorted(set(new_edges) - set(old_edges))
    out.edges_removed = sorted(set(old_edges) - set(new_edges))
    for pair in sorted(set(old_edges) & set(new_edges)):
        if abs(old_edges[pair] - new_edges[pair]) > WEIGHT_TOLERANCE:
            out.edges_reweighted[pair] = (old_edges[pair], new_edges[pair])
    return out


def _edge_weights(state: MemoryState) -> dict[tuple[int, int], float]:
    cfg = MemoryConfig.from_dict(state.config).dynamics  # flat in snapshots saved before groups
    step = state.step
    return {(min(e["source"], e["target"]), max(e["source"], e["target"])): decayed_weight(
        e["weight"], e["t"], e["used"], step, cfg.decay_rate, cfg.decay_recency_steps,
        e["solid"]) for e in state.edges}
