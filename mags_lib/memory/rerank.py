"""A learned second pass over recall's ranking (`RecallConfig.reranker`, off by default).

Recall ranks its candidates by a fixed rule (hybrid dense + BM25 score, then traversal). On a
dialogue the rule misses turns a person would look at: the answer is often the turn *after*
the one that shares the question's words ("What inspired your painting?" finds the question
turn; the reply below it holds the answer). A reranker rescores the first `rerank_pool` ranked
nodes from `FEATURES`, which see each node's neighbours in time as well as the node:

    score, log rank, cosine to the query, share of the query's (stemmed) content words in the
    node, the ranked scores of the episode before, the one before that and the one after, the
    larger cosine of the two episodes before, whether the episode before ends with "?",
    whether this node ends with "?", log length of its text

An episode's neighbours are the nearest episodic nodes by id (ids are a write counter, so
this is the order they were written in); a semantic node's neighbour features are 0.

`Reranker` is a one-hidden-layer perceptron in NumPy (standardised features, ReLU, a logit),
saved as JSON (never pickle), trained by `mags_lib.train.recall_reranker` and shipped in
`memory/rerankers/`. `RecallConfig.reranker` names a shipped one ("dialogue") or a JSON path:

    cfg = MemoryConfig.from_dict({"reranker": "dialogue"})
    LiquidMemory(cfg, embedder).recall("What inspired Caroline's painting?", 10)

A reranked hit's `score` is the reranker's probability that it is evidence, in [0, 1]. With
`RecallConfig.rerank_blocks="episodic"` only the episodes are reordered, among the places they
held, and every place keeps the rule's score: a memory of facts and turns (`mags_episodic`)
gets its turns reranked and its facts left where the rule put them, and a memory with no
episodic node ranks as it would without one, up to the larger candidate set a reranker makes
recall gather (`mags` on the development personas, whose
writer filed every fact as semantic; on LoCoMo it files some as episodic, and those move). On
2026-12-06 reranking every node changed `mags`'s lines on 92 of 110 development-persona
questions and lost it 5 of 48 current facts; that is why `memory.DIALOGUE_MEMORY` reranks the
episodes only.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mags_lib.errors import CorruptFileError, MagsError

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

FEATURES = ("score", "log_rank", "cosine", "overlap", "prev_score", "prev2_score", "next_score",
            "prev_cosine", "prev_question", "is_question", "log_length")
SHIPPED_DIR = Path(__file__).resolve().parent / "rerankers"
NEIGHBOUR_SCAN = 8
"""How many ids below (above) a node are searched for the episode before (after) it."""


class Reranker:
    """logit = v . relu(W ((x - mean) / scale) + b) + c over `FEATURES`; `probabilities(X)`."""

    def __init__(self, mean: Any, scale: Any, w: Any, b: Any, v: Any, c: float,
                 meta: dict[str, Any] | None = None) -> None:
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.w = np.asarray(w, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        self.v = np.asarray(v, dtype=np.float64)
        self.c = float(c)
        self.meta = dict(meta or {})
        n, h = len(FEATURES), self.b.shape[0] if self.b.ndim == 1 else -1
        shapes = {"mean": (self.mean.shape, (n,)), "scale": (self.scale.shape, (n,)),
                  "w": (self.w.shape, (h, n)), "v": (self.v.shape, (h,))}
        bad = {k: got for k, (got, want) in shapes.items() if got != want}
        if h < 1 or bad or not np.all(np.isfinite(self.w)) or np.any(self.scale <= 0):
            raise ValueError(f"reranker weights of the wrong shape or value: {bad or 'non-finite'}"
                             f" (features {len(FEATURES)}, hidden {h})")

    def logits(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        return np.maximum(z @ self.w.T + self.b, 0.0) @ self.v + self.c

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(x)))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "w": self.w.tolist(), "b": self.b.tolist(),
                "v": self.v.tolist(), "c": self.c, "meta": self.meta}

    def save(self, path: str | Path) -> Path:
        from mags_lib.atomic import write_text

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_text(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Reranker:
        path = Path(path)
        fix = "retrain it (tools/train_recall_reranker.py) or set RecallConfig.reranker to ''"
        try:
            data = json.loads(path.read_text())
            if data.get("features") != list(FEATURES):
                raise ValueError(f"its features {data.get('features')} are not {list(FEATURES)}")
            return cls(data["mean"], data["scale"], data["w"], data["b"], data["v"], data["c"],
                       data.get("meta"))
        except FileNotFoundError:
            raise MagsError(f"reranker file {path} not found", fix) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptFileError(f"reranker file {path} is not a reranker: {exc}", fix) from exc


def reranker_path(name: str) -> Path:
    """A shipped reranker's file ('dialogue' -> memory/rerankers/dialogue.json) or a path."""
    shipped = SHIPPED_DIR / f"{name}.json"
    return shipped if "/" not in name and not name.endswith(".json") else Path(name)


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime: float) -> Reranker:
    return Reranker.load(path)


def load_reranker(name: str) -> Reranker:
    """The reranker `RecallConfig.reranker` names, read once per file version."""
    path = reranker_path(name)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = -1.0  # Reranker.load says what is wrong
    return _load_cached(str(path), mtime)


def _ends_with_question(text: str) -> float:
    return float(text.rstrip().endswith("?"))


def _neighbour(nodes: dict, node: int, direction: int) -> int | None:
    """The nearest episodic node written before (direction -1) or after (+1) `node`."""
    for step in range(1, NEIGHBOUR_SCAN + 1):
        other = node + direction * step
        data = nodes.get(other)
        if data is not None and data["block"] == "episodic":
            return other
    return None


def rerank_features(mem: LiquidMemory, query: str, query_vec: np.ndarray,
                    pool: list[tuple[float, int]]) -> np.ndarray:
    """(len(pool), len(FEATURES)) features of `pool`, (score, node id) best first."""
    from mags_lib.memory.lexical import content_terms

    if not pool:
        return np.zeros((0, len(FEATURES)))
    nodes = mem.graph._node
    score = {node: s for s, node in pool}
    query_terms = set(content_terms(query, stem=True))
    ids = [node for _, node in pool]
    before = {n: _neighbour(nodes, n, -1) for n in ids}
    before2 = {n: _neighbour(nodes, p, -1) if p is not None else None for n, p in before.items()}
    after = {n: _neighbour(nodes, n, +1) for n in ids}
    need = sorted(set(ids) | {p for p in (*before.values(), *before2.values())
                                      if p is not None})
    cosine = dict(zip(need, (mem._vectors(need) @ query_vec).tolist(), strict=True))
    rows = []
    for rank, (s, node) in enumerate(pool):
        text = nodes[node]["text"]
        episodic = nodes[node]["block"] == "episodic"
        p, p2, nx = (before[node], before2[node], after[node]) if episodic else (None,) * 3
        overlap = (len(query_terms & set(content_terms(text, stem=True)))
                   / max(1, len(query_terms)))
        rows.append([s, math.log1p(rank), cosine[node], overlap,
                     score.get(p, 0.0), score.get(p2, 0.0), score.get(nx, 0.0),
                     max((cosine[x] for x in (p, p2) if x is not None), default=0.0),
                     _ends_with_question(nodes[p]["text"]) if p is not None else 0.0,
                     _ends_with_question(text), math.log1p(len(text))])
    return np.asarray(rows, dtype=np.float64)


def rerank(mem: LiquidMemory, query: str, query_vec: np.ndarray,
           ranked: list[tuple[float, int, list[int]]], reranker: Reranker, pool: int,
           blocks: str = "all") -> list[tuple[float, int, list[int]]]:
    """The first `pool` of `ranked` (score, node, path; best first) reordered by `reranker`,
    best first; the rest are dropped. `blocks="all"`: every node rescored by its probability
    (ties by id). A block's name: only that block's nodes are rescored (their features read as
    if the pool held them alone, as the reranker was fitted) and put back, best first, into the
    places they held, each place keeping its score; the other nodes keep theirs. So a memory
    with none of that block ranks as it would without a reranker, but for the larger candidate
    set recall gathers when one is set (`recall_overquery` x the pool instead of x k)."""
    head = ranked[:pool]
    if not head:
        return []
    if blocks == "all":
        probs = reranker.probabilities(rerank_features(
            mem, query, query_vec, [(s, node) for s, node, _ in head]))
        return sorted(((float(p), node, path)
                       for p, (_, node, path) in zip(probs, head, strict=True)),
                      key=lambda t: (-t[0], t[1]))
    nodes = mem.graph._node
    places = [i for i, (_, node, _) in enumerate(head) if nodes[node]["block"] == blocks]
    if not places:
        return head
    mine = [head[i] for i in places]
    probs = reranker.probabilities(rerank_features(
        mem, query, query_vec, [(s, node) for s, node, _ in mine]))
    order = sorted(range(len(mine)), key=lambda j: (-float(probs[j]), mine[j][1]))
    out = list(head)
    for place, j in zip(places, order, strict=True):
        out[place] = (head[place][0], mine[j][1], mine[j][2])
    return out


def pool_features(mem: LiquidMemory, query: str, pool: int
                  ) -> tuple[list[Any], np.ndarray]:
    """The first `pool` hits of `query` as ranked without a reranker, and their `FEATURES`:
    what a reranker is trained on (`mags_lib.train.recall_reranker`). Learns nothing."""
    if mem.config.recall.reranker:
        raise MagsError("pool_features reads the ranking before any reranker, but this memory "
                        f"has RecallConfig.reranker={mem.config.recall.reranker!r}",
                        "build the training memory with reranker=''")
    hits = mem.recall(query, pool, learn=False)
    q = mem._query_vector(query, None)
    return hits, rerank_features(mem, query, q, [(h.score, h.node_id) for h in hits])
