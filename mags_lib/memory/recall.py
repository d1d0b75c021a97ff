"""Recall (ask): anchors, traversal, ranked hits; context items, connect and history.

`recall(query, k)`:

1. candidates: max(recall_overquery * k, min_candidates) by hybrid dense + BM25 score, a
   superseded candidate redirected to its current version (`anchors.py`); with
   `feedback_weight` > 0 the query vector then moves toward its best candidates and they are
   drawn again (`feedback_query`, off by default);
2. anchors: `n_anchors` of them chosen by MMR coverage (`anchors.select_anchors`);
3. traversal: best-first from all anchors at once (`traversal.spread`), node score =
   anchor score * product of (edge weight * cross-block factor) * block_weights[block];
4. hits: every candidate (at its hybrid score) and every reached node, at its best score, top k
   (ties by id; with `RecallConfig.reranker` the first `rerank_pool` rescored by a learned
   reranker, `rerank.py`, off by default; with `hit_mmr_lambda` < 1 the k are chosen by MMR
   among them, `diverse`, off by default); invalid nodes only with `include_invalid=True` and
   flagged `valid=False`.

A query without a letter or digit ("", "!!!") recalls nothing and changes nothing, unless a
`query_embedding` is given (then the embedding is the query). An unknown `block` is an error.

Side effects unless `learn=False`: anchors with score >= `hebbian_min_score` wire together
(`hebbian` edges, w <- w + rate * (1 - w)); returned nodes count a use; edges on the hits'
paths are marked used (their decay restarts) and the paths are kept for `step(reward)`;
working-memory items similar to the query count a use.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from mags_lib.actions.types import BLOCKS
from mags_lib.errors import MagsError
from mags_lib.memory.anchors import hybrid_candidates, select_anchors
from mags_lib.memory.dynamics import hebbian_update
from mags_lib.memory.rerank import load_reranker, rerank
from mags_lib.memory.traversal import components, spread, strongest_path
from mags_lib.memory.types import MAX_ITEM_CHARS, ContextItem, Hit

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory


def check_query(query: Any, k: Any, block: Any = None) -> None:
    """Refuse a recall that cannot mean anything: negative or non-integer `k`, a query that is
    not a string or is longer than MAX_ITEM_CHARS, a `block` that is neither None nor one of
    BLOCKS (k = 0 is allowed and returns nothing)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise MagsError(f"recall k must be an integer >= 0, got {k!r}",
                        "ask for the number of hits you want (k=0 returns none)")
    if not isinstance(query, str):
        raise MagsError(f"a recall query must be a string, got {type(query).__name__}",
                        "pass the query text")
    if len(query) > MAX_ITEM_CHARS:
        raise MagsError(f"recall query is {len(query):,} characters, above the limit of "
                        f"{MAX_ITEM_CHARS:,} (memory.types.MAX_ITEM_CHARS)",
                        "query with a sentence or a few keywords, not a document")
    if block is not None and block not in BLOCKS:
        raise MagsError(f"unknown block {block!r}", f"use one of {list(BLOCKS)} or None")


def has_content(text: str) -> bool:
    """Whether a query says anything: at least one letter or digit, in any script ("", "  ",
    "!!!", "?!" and "🙂" do not; "Zoë", "東京" and "٣" do)."""
    return any(ch.isalnum() for ch in text)


def recall(mem: LiquidMemory, query: str, k: int = 10, *, query_embedding: Any = None,
           block: str | None = None, include_invalid: bool = False,
           learn: bool = True) -> list[Hit]:
    """See the module docstring. A query without a letter or digit (and no `query_embedding`,
    which is then the query) recalls nothing and learns nothing."""
    check_query(query, k, block)
    if query_embedding is None and not has_content(query):
        return []
    if learn:
        mem._tally.recalls += 1
    if k == 0 or (len(mem) == 0 and len(mem.working) == 0):
        return []
    cfg = mem.config
    q = mem._query_vector(query, query_embedding)
    if learn:
        mem.working.touch(q, cfg.recall.working_use_cosine)
    if len(mem) == 0:
        return []
    reranker = load_reranker(cfg.recall.reranker) if cfg.recall.reranker else None
    pool = max(cfg.recall.rerank_pool, k)
    n = max(cfg.recall.recall_overquery * (pool if reranker else k), cfg.recall.min_candidates)
    cands = hybrid_candidates(mem, query, q, n, include_invalid=include_invalid)
    if cands and cfg.recall.feedback_weight > 0:
        q = feedback_query(mem, q, [c.node_id for c in cands[:cfg.recall.feedback_hits]],
                           cfg.recall.feedback_weight)
        cands = hybrid_candidates(mem, query, q, n, include_invalid=include_invalid)
    if not cands:
        return []
    ids = [c.node_id for c in cands]
    rel = np.array([c.score for c in cands])
    vecs = mem._vectors(ids)
    chosen = select_anchors(rel, vecs @ vecs.T, cfg.recall.n_anchors, cfg.recall.mmr_lambda)
    anchors = {ids[i]: float(rel[i]) for i in chosen}
    nodes = mem.graph._node  # plain dicts: networkx's views cost a call per access
    reached = spread(
        mem.graph._adj, anchors, weight=mem._weight_fn(),
        can_visit=(lambda _: True) if include_invalid else (
            lambda n: nodes[n]["valid_to"] is None),
        block_of=lambda n: nodes[n]["block"], min_product=cfg.recall.min_path_product,
        max_visited=cfg.recall.max_visited, cross_block=cfg.recall.cross_block_factor)
    best: dict[int, tuple[float, list[int]]] = {c.node_id: (c.score, [c.node_id]) for c in cands}
    for node, r in reached.items():
        score = r.score if node in anchors else r.score * cfg.recall.block_weights.get(
            nodes[node]["block"], 1.0)
        if score > best.get(node, (-math.inf,))[0]:
            best[node] = (score, r.path)
    ranked = sorted(((s, node, path) for node, (s, path) in best.items()
                     if (block is None or nodes[node]["block"] == block)
                     and (include_invalid or nodes[node]["valid_to"] is None)),
                    key=lambda t: (-t[0], t[1]))
    if reranker is not None:
        ranked = rerank(mem, query, q, ranked, reranker, pool, cfg.recall.rerank_blocks)
    ranked = diverse(mem, ranked, k, cfg.recall.hit_mmr_lambda)
    hits = [make_hit(mem, node, score, path) for score, node, path in ranked]
    if learn:
        wire_anchors(mem, {a: s for a, s in anchors.items() if s >= cfg.recall.hebbian_min_score
                           and nodes[a]["valid_to"] is None})
        mark_recalled(mem, hits)
    return hits


def diverse(mem: LiquidMemory, ranked: list[tuple[float, int, list[int]]], k: int,
            lam: float) -> list[tuple[float, int, list[int]]]:
    """The k of `ranked` (score, node, path; best first) to return: the first k when `lam` is
    1, else chosen by MMR among them (`anchors.select_anchors`: lam * score - (1 - lam) * the
    largest cosine to a hit already chosen), in the order chosen."""
    if lam >= 1.0 or len(ranked) <= k:
        return ranked[:k]
    vecs = mem._vectors([node for _, node, _ in ranked])
    chosen = select_anchors(np.array([s for s, _, _ in ranked]), vecs @ vecs.T, k, lam)
    return [ranked[i] for i in chosen]


def feedback_query(mem: LiquidMemory, q: np.ndarray, ids: list[int],
                   weight: float) -> np.ndarray:
    """Rocchio's pseudo-relevance feedback: the unit vector of q + weight * mean of the vectors
    of `ids` (the first round's best candidates); q itself when `ids` is empty.

    A question often shares its words with one turn of a conversation and its answer with the
    turns around it; the first round's best hits pull the query toward what they are about."""
    if not ids:
        return q
    moved = q + weight * mem._vectors(ids).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(q.dtype) if norm > 0 else q


def make_hit(mem: LiquidMemory, node: int, score: float, path: list[int]) -> Hit:
    data = mem.graph.nodes[node]
    return Hit(node_id=node, text=data["text"], score=float(score), block=data["block"],
               sources=list(data["sources"]), path=list(path),
               valid=data["valid_to"] is None, superseded_by=data["superseded_by"],
               confidence=float(data["confidence"]))


def wire_anchors(mem: LiquidMemory, anchors: dict[int, float]) -> None:
    """Fire together, wire together: strengthen or create hebbian edges between anchors."""
    cfg = mem.config
    for a, b in combinations(sorted(anchors), 2):
        if mem.graph.has_edge(a, b):
            mem._reweight(a, b, lambda w: hebbian_update(w, cfg.recall.hebbian_rate))
        else:
            mem._connect(a, b, cfg.recall.hebbian_init, "hebbian")


def mark_recalled(mem: LiquidMemory, hits: list[Hit]) -> None:
    """Hits count a use; their paths' edges are marked used and kept for `step(reward)`."""
    for hit in hits:
        mem._mark_used(hit.node_id)
        for u, v in zip(hit.path, hit.path[1:], strict=False):
            mem._touch_edge(u, v)
    mem._remember_paths(hit.path for hit in hits)


def recall_context(mem: LiquidMemory, query: str, k: int = 10, **kwargs: Any) -> list[ContextItem]:
    """Recall, then merge hits connected in the recalled subgraph (connected components of
    the subgraph induced by the hits) into one context item each, best item first."""
    hits = recall(mem, query, k, **kwargs)
    by_id = {h.node_id: h for h in hits}
    nodes = mem.graph.nodes
    items = []
    for group in components(mem.graph.adj, by_id):
        ordered = sorted(group, key=lambda n: (nodes[n]["created"], n))
        items.append(ContextItem(
            node_ids=ordered, text=" ".join(nodes[n]["text"] for n in ordered),
            score=max(by_id[n].score for n in group),
            blocks=sorted({nodes[n]["block"] for n in group})))
    return sorted(items, key=lambda it: (-it.score, it.node_ids[0]))


def best_match(mem: LiquidMemory, text: str, *, include_invalid: bool = False,
               query_embedding: Any = None) -> tuple[int, float] | None:
    """The node that best matches a string (hybrid score >= match_threshold), or None (also
    for a string without a letter or digit, unless `query_embedding` is given)."""
    if len(mem) == 0 or (query_embedding is None and not has_content(text)):
        return None
    q = mem._query_vector(text, query_embedding)
    cands = hybrid_candidates(mem, text, q, mem.config.recall.min_candidates,
                              include_invalid=include_invalid)
    if not cands or cands[0].score < mem.config.engram.match_threshold:
        return None
    return cands[0].node_id, cands[0].score


def connect(mem: LiquidMemory, a: str, b: str, *, learn: bool = True) -> list[Hit]:
    """Hits along the strongest path (max product of weights over valid nodes) between the
    best matches of `a` and `b`; each hit's score is the product up to it. [] if none."""
    ma, mb = best_match(mem, a), best_match(mem, b)
    if ma is None or mb is None:
        return []
    nodes = mem.graph.nodes
    found = strongest_path(mem.graph._adj, ma[0], mb[0], weight=mem._weight_fn(),
                           can_visit=lambda n: nodes[n]["valid_to"] is None,
                           max_visited=mem.config.recall.connect_max_visited)
    if learn:
        mem._tally.recalls += 1
    if found is None:
        return []
    path, _ = found
    hits, product = [], 1.0
    for i, node in enumerate(path):
        if i:
            product *= mem.edge_weight(path[i - 1], node)
        hits.append(make_hit(mem, node, product, path[:i + 1]))
    if learn:
        for node in path:
            mem._mark_used(node)
        for u, v in zip(path, path[1:], strict=False):
            mem._touch_edge(u, v)
        mem._remember_paths([path])
    return hits


def history(mem: LiquidMemory, node_id: int) -> list[Hit]:
    """Version chain through `node_id` (a node of `mem`: `LiquidMemory.history` checks): the
    current version first, then older versions."""
    nodes = mem.graph.nodes
    head, seen = node_id, {node_id}
    while nodes[head]["superseded_by"] is not None and nodes[head]["superseded_by"] in nodes:
        head = nodes[head]["superseded_by"]
        if head in seen:
            break
        seen.add(head)
    chain, frontier, seen = [head], [head], {head}
    while frontier:
        current = frontier.pop(0)
        older = sorted((o for o in mem.graph.adj[current]
                        if nodes[o]["superseded_by"] == current and o not in seen),
                       key=lambda o: -nodes[o]["valid_to"])
        for o in older:
            seen.add(o)
            chain.append(o)
            frontier.append(o)
    return [make_hit(mem, n, nodes[n]["confidence"], chain[:i + 1])
            for i, n in enumerate(chain)]
