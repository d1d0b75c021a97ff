"""`step(reward)` after each turn, and the periodic maintenance pass over the whole graph.

Every step (cheap, proportional to what the turn touched):

* reward: every edge on the paths recalled since the last step is reinforced (reward > 0) or
  weakened (reward < 0) by `dynamics.reward_update`;
* the step counter advances (decay needs no work: weights are decayed lazily);
* working memory: items `working_ttl` steps old are consolidated.

Every `maintenance_every` steps, or at once when the graph is over `max_nodes` (vectorised,
one pass over nodes and edges; about 1.2 s at 100k nodes / 600k edges on a loaded 2-core
machine, so ~25 ms a step on average with the default period of 50), in the spirit of the Game of Life:

* survival of edges: decayed weight < `prune_threshold` -> removed (never solid edges);
  weight >= `solidify_threshold` -> solid (no more decay, never pruned);
* overcrowding: a node with more than `max_degree` non-solid edges loses the weakest;
* centrality: core numbers (capped at `core_keep_k`) and importance (`dynamics.node_importance`)
  are recomputed and stored on the nodes;
* isolation and inactivity: a node with no edge unused for `isolated_grace` steps, or outside
  the `core_keep_k`-core and unused for `inactive_after` steps, dies;
* capacity: beyond `max_nodes`, the lowest-importance nodes go, down to
  `max_nodes * (1 - capacity_headroom)`.

Solid nodes and nodes with a solid edge are never removed.
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from mags_lib.errors import MagsError
from mags_lib.memory.consolidation import consolidate
from mags_lib.memory.dynamics import (
    capped_core_numbers,
    decayed_weights,
    node_importance,
    reward_update,
)
from mags_lib.memory.metrics import StepTally
from mags_lib.memory.store import paused_gc

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory


def step(mem: LiquidMemory, reward: float | None = None) -> dict[str, Any]:
    """One turn is over; see the module docstring. Returns the turn's tally."""
    if reward is not None:
        if isinstance(reward, bool) or not isinstance(reward, int | float) or not math.isfinite(
                reward):
            raise MagsError(f"reward must be a finite number, got {reward!r}",
                            "pass a float in [-1, 1] or None")
        reinforce_paths(mem, float(reward))
        mem._tally.reward = float(reward)
    mem._step += 1
    consolidate(mem)
    dyn = mem.config.dynamics
    if mem._step % dyn.maintenance_every == 0 or len(mem) > dyn.max_nodes:
        maintain(mem)
    tally = mem._tally
    mem._history.append(tally)
    mem._tally = StepTally()
    mem._last_paths = []
    return {"step": mem._step, **tally.to_dict(), "churn": tally.churn}


def reinforce_paths(mem: LiquidMemory, reward: float) -> None:
    """Reward every edge (once) on the paths recalled since the last step."""
    rate = mem.config.dynamics.reward_rate
    edges = sorted({(min(u, v), max(u, v)) for path in mem._last_paths
                    for u, v in zip(path, path[1:], strict=False)})
    for u, v in edges:
        mem._reweight(u, v, lambda w: reward_update(w, reward, rate))


def maintain(mem: LiquidMemory) -> dict[str, int]:
    """Prune, solidify, thin crowded nodes, recompute importance, remove dead nodes."""
    with paused_gc():
        return _maintain(mem)


def _maintain(mem: LiquidMemory) -> dict[str, int]:
    graph = mem.graph
    ids = np.fromiter(graph.nodes, dtype=np.int64, count=graph.number_of_nodes())
    if len(ids) == 0:
        return {"pruned": 0, "solidified": 0, "removed": 0}
    edges, eff, solid = _edge_arrays(mem)
    pos = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    rows = pos[np.fromiter(map(itemgetter(0), edges), np.int64, len(edges))]
    cols = pos[np.fromiter(map(itemgetter(1), edges), np.int64, len(edges))]
    drop, solidified = _edge_rules(mem, edges, eff, solid, rows, cols, len(ids))
    keep = ~drop
    removed = _node_rules(mem, ids, rows[keep], cols[keep], eff[keep], solid[keep])
    return {"pruned": int(drop.sum()), "solidified": solidified, "removed": removed}


def _edge_arrays(mem: LiquidMemory) -> tuple[list[tuple[int, int, dict]], np.ndarray,
                                              np.ndarray]:
    # graph._adj directly: networkx's edge views cost ~4 us an edge, 2-3 s at 600k edges
    edges = [(u, v, d) for u, nbrs in mem.graph._adj.items() for v, d in nbrs.items() if u < v]
    n = len(edges)
    data = [d for _, _, d in edges]

    def field(name: str, dtype: Any) -> np.ndarray:
        return np.fromiter(map(itemgetter(name), data), dtype, n)

    solid = field("solid", bool)
    cfg = mem.config
    eff = decayed_weights(field("weight", np.float64), field("t", np.float64),
                          field("used", np.float64), mem._step, cfg.dynamics.decay_rate,
                          cfg.dynamics.decay_recency_steps, solid)
    return edges, eff, solid


def _edge_rules(mem: LiquidMemory, edges: list, eff: np.ndarray, solid: np.ndarray,
                rows: np.ndarray, cols: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Solidify strong edges (in place, `solid` updated), remove weak and crowding ones;
    returns the mask of removed edges and the number solidified."""
    cfg = mem.config
    to_solid = np.flatnonzero(~solid & (eff >= cfg.dynamics.solidify_threshold))
    for i in to_solid.tolist():
        edges[i][2].update(weight=float(min(eff[i], 1.0)), t=mem._step, solid=True)
    solid[to_solid] = True
    drop = ~solid & (eff < cfg.dynamics.prune_threshold)
    drop |= _crowded(cfg.dynamics.max_degree, eff, ~solid & ~drop, rows, cols, n)
    gone = [(edges[i][0], edges[i][1]) for i in np.flatnonzero(drop).tolist()]
    mem.graph.remove_edges_from(gone)
    mem._tally.edges_removed += len(gone)
    mem._tally.edges_changed += len(to_solid)
    return drop, len(to_solid)


def _crowded(limit: int, eff: np.ndarray, live: np.ndarray, rows: np.ndarray,
             cols: np.ndarray, n: int) -> np.ndarray:
    """Mask of the weakest live (non-solid, kept) edges of nodes with more than `limit`."""
    out = np.zeros(len(eff), dtype=bool)
    count = np.bincount(rows[live], minlength=n) + np.bincount(cols[live], minlength=n)
    crowded = np.flatnonzero(count > limit)
    if len(crowded) == 0:
        return out
    idx = np.flatnonzero(live)
    ends = np.concatenate([rows[idx], cols[idx]])
    which = np.concatenate([idx, idx])
    mask = np.isin(ends, crowded)
    ends, which = ends[mask], which[mask]
    order = np.lexsort((which, eff[which], ends))  # by node, then weakest first
    ends, which = ends[order], which[order]
    _, starts = np.unique(ends, return_index=True)
    for start, stop in zip(starts.tolist(), [*starts[1:].tolist(), len(ends)], strict=True):
        mine = which[start:stop]
        mine = mine[~out[mine]]
        if len(mine) > limit:
            out[mine[:len(mine) - limit]] = True
    return out


def _node_rules(mem: LiquidMemory, ids: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                eff: np.ndarray, solid: np.ndarray) -> int:
    cfg, graph, now, n = mem.config, mem.graph, mem._step, len(ids)
    degree = np.bincount(rows, minlength=n) + np.bincount(cols, minlength=n)
    strength = np.bincount(rows, eff, minlength=n) + np.bincount(cols, eff, minlength=n)
    has_solid = (np.bincount(rows[solid], minlength=n) + np.bincount(cols[solid], minlength=n)) > 0
    core = capped_core_numbers(n, rows, cols, cfg.dynamics.core_keep_k)
    node = graph._node
    data = [node[i] for i in ids.tolist()]
    uses = np.fromiter(map(itemgetter("uses"), data), np.float64, n)
    used = np.fromiter(map(itemgetter("used"), data), np.float64, n)
    confidence = np.fromiter(map(itemgetter("confidence"), data), np.float64, n)
    node_solid = np.fromiter(map(itemgetter("solid"), data), bool, n)
    importance = node_importance(strength, degree, uses, core, confidence,
                                 w_strength=cfg.dynamics.importance_strength,
                                 w_degree=cfg.dynamics.importance_degree,
                                 w_use=cfg.dynamics.importance_use,
                                 w_core=cfg.dynamics.importance_core,
                                 w_base=cfg.dynamics.importance_base,
                                 core_k=cfg.dynamics.core_keep_k)
    for d, value in zip(data, importance.tolist(), strict=True):
        d["importance"] = value
    removable = ~(node_solid | has_solid)
    idle = now - used
    dyn = cfg.dynamics
    dead = removable & (((degree == 0) & (idle > dyn.isolated_grace))
                        | ((core < dyn.core_keep_k) & (idle > dyn.inactive_after)))
    left = n - int(dead.sum())
    if left > cfg.dynamics.max_nodes:
        target = int(cfg.dynamics.max_nodes * (1.0 - cfg.dynamics.capacity_headroom))
        order = np.lexsort((ids, importance))
        victims = order[removable[order] & ~dead[order]][:left - target]
        dead[victims] = True
    return mem._remove_nodes(ids[dead].tolist())
