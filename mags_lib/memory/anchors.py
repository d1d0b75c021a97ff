"""Recall anchors: hybrid (dense + BM25) candidates, then a covering choice among them.

Candidates. The query is over-fetched from both the vector index and the BM25 index;
each candidate scores ``(1 - lexical_weight) * max(cosine, 0) + lexical_weight * bm25 / max bm25``.
A superseded candidate is redirected to the current version of its fact (which inherits the
score), so asking about an old rule finds the new one.

Anchors. The design asks for "the convex hull that maximises captured area": anchors spread
over the region of the graph that matters for the query rather than n near-copies of the best
hit. A convex hull in 384 dimensions is neither cheap nor meaningful, so this is implemented as
maximal marginal relevance, a greedy coverage rule: the next anchor maximises
``lam * relevance - (1 - lam) * max cosine to the anchors already chosen``. With lam = 1 it is
plain top-n; with lam = 0 it is farthest-point (k-centre greedy) sampling, the classic
2-approximation of covering a point set with n balls of smallest radius.

>>> import numpy as np
>>> rel = np.array([1.0, 0.99, 0.5])
>>> sim = np.array([[1.0, 0.99, 0.0], [0.99, 1.0, 0.0], [0.0, 0.0, 1.0]])
>>> select_anchors(rel, sim, 2, lam=0.5)
[0, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

MAX_CHAIN = 10_000


@dataclass
class Candidate:
    node_id: int
    score: float
    cosine: float


def current_version(mem: LiquidMemory, node_id: int) -> int | None:
    """Follow `superseded_by` to the valid head of a fact's chain (None if forgotten)."""
    nodes = mem.graph.nodes
    seen = 0
    while node_id in nodes and nodes[node_id]["valid_to"] is not None:
        nxt = nodes[node_id]["superseded_by"]
        seen += 1
        if nxt is None or seen > MAX_CHAIN:
            return None
        node_id = nxt
    return node_id if node_id in nodes else None


def hybrid_candidates(mem: LiquidMemory, text: str, query_vec: np.ndarray, n: int, *,
                      include_invalid: bool = False) -> list[Candidate]:
    """Up to ~n candidates by hybrid score, best first (ties by id)."""
    cfg = mem.config
    dense = dict(mem._search(query_vec, n))
    lexical: dict[int, float] = {}
    if text.strip() and len(mem.lexical) > 0:
        ids, scores = mem.lexical.search(text, n)
        pairs = [(int(i), float(s)) for i, s in zip(np.ravel(ids), np.ravel(scores), strict=True)
                 if int(i) in mem.graph and s > 0]
        top = max((s for _, s in pairs), default=0.0)
        if top > 0:
            lexical = {i: s / top for i, s in pairs}
    missing = [i for i in lexical if i not in dense]
    if missing:
        for i, c in zip(missing, (mem._vectors(missing) @ query_vec).tolist(), strict=True):
            dense[i] = float(c)
    alpha = cfg.recall.lexical_weight
    scored = {i: ((1 - alpha) * max(c, 0.0) + alpha * lexical.get(i, 0.0), c)
              for i, c in dense.items()}
    out: dict[int, Candidate] = {}
    for i, (score, cosine) in scored.items():
        if mem.graph.nodes[i]["valid_to"] is None or include_invalid:
            _keep_best(out, Candidate(i, score, cosine))
        if mem.graph.nodes[i]["valid_to"] is not None:
            head = current_version(mem, i)
            if head is not None:
                _keep_best(out, Candidate(head, score, cosine))
    return sorted(out.values(), key=lambda c: (-c.score, c.node_id))


def _keep_best(out: dict[int, Candidate], cand: Candidate) -> None:
    old = out.get(cand.node_id)
    if old is None or cand.score > old.score:
        out[cand.node_id] = cand


def select_anchors(relevance: np.ndarray, similarity: np.ndarray, n: int,
                   lam: float) -> list[int]:
    """Greedy MMR / farthest-point coverage: indices of up to n anchors, in choice order.

    `relevance` (c,) and `similarity` (c, c) cosines between the candidates. The first anchor is
    the most relevant; ties go to the lower index, so the choice is deterministic."""
    rel = np.asarray(relevance, dtype=np.float64)
    c = rel.shape[0]
    if c == 0 or n <= 0:
        return []
    chosen = [int(np.argmax(rel))]
    closest = np.asarray(similarity, dtype=np.float64)[chosen[0]].copy()
    taken = np.zeros(c, dtype=bool)
    taken[chosen[0]] = True
    while len(chosen) < min(n, c):
        gain = lam * rel - (1.0 - lam) * closest
        gain[taken] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        taken[best] = True
        closest = np.maximum(closest, similarity[best])
    return chosen
