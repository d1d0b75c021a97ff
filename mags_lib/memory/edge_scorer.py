"""Initial edges of a new node, by a learned scorer instead of the similarity rule.

By default a new node connects to its top-m valid neighbours with `attention_weights` over
their cosines (the similarity rule, `engram.py`). `LiquidMemory(edge_scorer=...)` replaces
that choice: the scorer sees every valid candidate the write found (top m + overquery), with
the new node's and the candidates' embeddings and graph features, and returns a weight per
candidate; the m highest at or above `min_edge_weight` become edges.

`AttentionEdgeScorer` is the learned one, a graph-attention-style scorer in NumPy (no torch at
inference), trained by `mags_lib.train.edge_scorer` and judged by `evaluation.edge_study`:

    logit = (Wq new) . (Wk candidate) / sqrt(d) + v . relu(U features + b) + c
    weight = sigmoid(logit)

over `FEATURES` (cosine, rank among the candidates, content-word overlap, log degree, same
block). With d = 4 on 384-dimensional embeddings that is about 3,200 parameters.

    scorer = AttentionEdgeScorer.load("results/09_mechanisms/edge_scorer.npz")
    memory = LiquidMemory(config, embedder, edge_scorer=scorer)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mags_lib.errors import CorruptFileError

FEATURES = ("cosine", "rank", "overlap", "log_degree", "same_block")
PARAMS = ("wq", "wk", "u", "b", "v", "c")


class EdgeScorer(Protocol):
    def weights(self, mem: Any, new_id: int, vector: np.ndarray,
                candidates: list[tuple[int, float]]) -> list[float]:
        """One weight in [0, 1] per (node id, cosine) candidate of the new node `new_id`."""
        ...


def edge_features(mem: Any, new_id: int, candidates: list[tuple[int, float]]) -> np.ndarray:
    """(len(candidates), len(FEATURES)) graph features of the new node's candidates."""
    from mags_lib.memory.lexical import content_terms

    nodes = mem.graph.nodes
    mine = set(content_terms(nodes[new_id]["text"]))
    block = nodes[new_id]["block"]
    n = max(len(candidates), 1)
    rows = []
    for rank, (node, cosine) in enumerate(candidates):
        theirs = set(content_terms(nodes[node]["text"]))
        overlap = len(mine & theirs) / max(1, min(len(mine), len(theirs)))
        rows.append([float(cosine), rank / n, overlap, math.log1p(mem.graph.degree(node)) / 4.0,
                     float(nodes[node]["block"] == block)])
    return np.asarray(rows, dtype=np.float32).reshape(len(candidates), len(FEATURES))


class SimilarityEdgeScorer:
    """The similarity rule as a scorer (the same weights as without a scorer): for recording
    candidates with `RecordingEdgeScorer` while the memory behaves as by default."""

    def weights(self, mem: Any, new_id: int, vector: np.ndarray,
                candidates: list[tuple[int, float]]) -> list[float]:
        from mags_lib.memory.engram import attention_weights

        cfg = mem.config.engram
        return attention_weights([c for _, c in candidates], cfg.attention_temperature,
                                 cfg.min_edge_weight).astype(float).tolist()


class RecordingEdgeScorer:
    """Any scorer (default: the similarity rule), recording every candidate pool it weighs:
    `records` holds (new id, candidate ids, features, new vector, candidate vectors)."""

    def __init__(self, inner: EdgeScorer | None = None):
        self.inner = inner or SimilarityEdgeScorer()
        self.records: list[tuple[int, list[int], np.ndarray, np.ndarray, np.ndarray]] = []

    def weights(self, mem: Any, new_id: int, vector: np.ndarray,
                candidates: list[tuple[int, float]]) -> list[float]:
        ids = [node for node, _ in candidates]
        self.records.append((new_id, ids, edge_features(mem, new_id, candidates),
                             np.asarray(vector, dtype=np.float32).copy(), mem.vectors(ids)))
        return self.inner.weights(mem, new_id, vector, candidates)


class AttentionEdgeScorer:
    """The learned scorer (see the module docstring); `params` maps `PARAMS` to arrays."""

    def __init__(self, params: dict[str, np.ndarray]):
        missing = [p for p in PARAMS if p not in params]
        if missing:
            raise ValueError(f"edge scorer parameters missing: {missing}")
        self.params = {k: np.asarray(params[k], dtype=np.float32) for k in PARAMS}

    @property
    def n_parameters(self) -> int:
        return int(sum(v.size for v in self.params.values()))

    def logits(self, new_vec: np.ndarray, cand_vecs: np.ndarray,
               features: np.ndarray) -> np.ndarray:
        p = self.params
        q = p["wq"] @ np.asarray(new_vec, dtype=np.float32)
        k = np.asarray(cand_vecs, dtype=np.float32) @ p["wk"].T
        attention = k @ q / math.sqrt(len(q))
        hidden = np.maximum(features @ p["u"].T + p["b"], 0.0)
        return attention + hidden @ p["v"] + p["c"]

    def weights(self, mem: Any, new_id: int, vector: np.ndarray,
                candidates: list[tuple[int, float]]) -> list[float]:
        if not candidates:
            return []
        cand_vecs = mem.vectors([node for node, _ in candidates])
        logits = self.logits(vector, cand_vecs, edge_features(mem, new_id, candidates))
        return (1.0 / (1.0 + np.exp(-logits))).astype(float).tolist()

    def save(self, path: str | Path) -> Path:
        from mags_lib.atomic import atomic_path

        path = Path(path)
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, **self.params)
        return path

    @classmethod
    def load(cls, path: str | Path) -> AttentionEdgeScorer:
        """Read `save`'s file; CorruptFileError (naming the file and the fix) otherwise."""
        path = Path(path)
        fix = ("retrain it: notebook 09 (python -m mags_lib.pipeline --only 09) writes "
               "results/09_mechanisms/edge_scorer.npz")
        try:
            with np.load(path) as data:
                return cls({k: data[k] for k in data.files})
        except FileNotFoundError as exc:
            raise CorruptFileError(f"no edge scorer at {path}", fix) from exc
        except (OSError, ValueError, KeyError) as exc:
            raise CorruptFileError(f"edge scorer {path} is not readable: {exc}", fix) from exc
