"""Graph walks of recall: best-first spreading from anchors, strongest path, components.

Pure functions over a networkx graph and callbacks (edge weight, node filter, block), so they
can be tested on small hand-made graphs.

`spread`: one heap seeded with every anchor at its anchor score; popping the best node, each
neighbour v is reached with score ``score(u) * w(u, v) * (cross_block if block(u) != block(v))``
while the plain product of edge weights from the anchor stays >= `min_product`; at most
`max_visited` nodes are expanded. Every factor is <= 1, so this is Dijkstra on -log(score): a
node is finalised with its best score (the threshold is checked on the finalising path).

`strongest_path`: the path maximising the product of edge weights, i.e. the shortest path with
edge cost -log(w), found by Dijkstra within a node budget.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Adjacency = Mapping[int, Mapping[int, dict[str, Any]]]
WeightFn = Callable[[dict[str, Any]], float]
NodeFn = Callable[[int], bool]


@dataclass
class Reached:
    """A node reached by `spread`: path score, plain weight product, path from its anchor."""

    score: float
    product: float
    path: list[int]


def spread(adj: Adjacency, anchors: dict[int, float], *, weight: WeightFn, can_visit: NodeFn,
           block_of: Callable[[int], str], min_product: float, max_visited: int,
           cross_block: float = 1.0) -> dict[int, Reached]:
    """Best-first multi-source traversal from `anchors` (id -> score); see the module doc.
    `adj` maps a node to {neighbour: edge data} (`graph.adj`, or `graph._adj` for speed)."""
    best: dict[int, tuple[float, float, int | None]] = {}
    heap: list[tuple[float, int, int, float, int | None]] = []
    for seq, (node, score) in enumerate(sorted(anchors.items())):
        best[node] = (score, 1.0, None)
        heap.append((-score, node, seq, 1.0, None))
    heapq.heapify(heap)
    seq = len(heap)
    done: dict[int, tuple[float, float, int | None]] = {}
    while heap and len(done) < max_visited:
        neg, node, _, product, parent = heapq.heappop(heap)
        if node in done:
            continue
        done[node] = (-neg, product, parent)
        score, block = -neg, block_of(node)
        for other, data in adj[node].items():
            if other in done or not can_visit(other):
                continue
            w = weight(data)
            new_product = product * w
            if new_product < min_product:
                continue
            new_score = score * w * (cross_block if block_of(other) != block else 1.0)
            if new_score > best.get(other, (-1.0,))[0]:
                best[other] = (new_score, new_product, node)
                seq += 1
                heapq.heappush(heap, (-new_score, other, seq, new_product, node))
    out: dict[int, Reached] = {}
    for node, (score, product, _) in done.items():
        out[node] = Reached(score, product, _path_to(done, node))
    return out


def _path_to(done: dict[int, tuple[float, float, int | None]], node: int) -> list[int]:
    path = [node]
    while done[path[-1]][2] is not None:
        path.append(done[path[-1]][2])  # type: ignore[arg-type]
    path.reverse()
    return path


def strongest_path(adj: Adjacency, source: int, target: int, *, weight: WeightFn,
                   can_visit: NodeFn, max_visited: int) -> tuple[list[int], float] | None:
    """(path, product of weights) of the max-product path source -> target, or None."""
    if source not in adj or target not in adj:
        return None
    if source == target:
        return [source], 1.0
    dist = {source: 0.0}
    parent: dict[int, int | None] = {source: None}
    heap = [(0.0, source)]
    done: set[int] = set()
    while heap and len(done) < max_visited:
        cost, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if node == target:
            path = [node]
            while parent[path[-1]] is not None:
                path.append(parent[path[-1]])  # type: ignore[arg-type]
            return path[::-1], math.exp(-cost)
        for other, data in adj[node].items():
            if other in done or not can_visit(other):
                continue
            w = weight(data)
            if w <= 0:
                continue
            new_cost = cost - math.log(w)
            if new_cost < dist.get(other, math.inf):
                dist[other] = new_cost
                parent[other] = node
                heapq.heappush(heap, (new_cost, other))
    return None


def components(adj: Adjacency, nodes: Iterable[int]) -> list[list[int]]:
    """Connected components of the subgraph induced by `nodes` (union-find over its edges),
    each sorted, listed in the order of their smallest member."""
    members = set(nodes)
    parent = {n: n for n in members}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u in members:
        for v in adj[u]:
            if v in members:
                ru, rv = find(u), find(v)
                if ru != rv:
                    parent[max(ru, rv)] = min(ru, rv)
    groups: dict[int, list[int]] = {}
    for n in members:
        groups.setdefault(find(n), []).append(n)
    return [sorted(g) for _, g in sorted(groups.items())]
