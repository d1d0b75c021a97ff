"""Cosine nearest-neighbour search over node embeddings, exact when small and HNSW when large.

`VectorIndex` keeps every vector in one float32 matrix (rows are slots, capacity doubles as it
fills, removal moves the last row into the hole). Below `exact_below` vectors a search is one
matrix-vector product over that matrix on one thread (see `_dot_rows`): exact, and a few
milliseconds at 20k x 384. Once the index grows past `exact_below` it builds an HNSW graph from
the matrix and keeps it up to date on every add and remove; searches then ask the graph for
`oversample * k` candidates and rescore them against the float32 matrix, so scores are exact
cosines whatever the graph stores. `search(..., exact=True)` is brute force at any size.

    index = VectorIndex(dim=384)
    index.add([3, 7], vectors)                  # rows are normalised to unit length
    ids, scores = index.search(query, k=5)      # int64 ids, float32 cosines, best first

Why usearch for the HNSW: prebuilt wheels on PyPI for Linux, macOS and Windows (hnswlib's last
release, 0.8.0 of 2023, has no wheel for our Python and needs a C++ toolchain), keys can be removed and re-added at
any time, the index grows without a fixed `max_elements`, a single-threaded build is
reproducible, and the graph can keep its own copy of the vectors in float16, half the memory,
since the exact float32 copy lives here anyway. FAISS's HNSW index cannot remove vectors and
FAISS is a much heavier dependency. usearch removal leaves tombstones in the graph, so the graph
is rebuilt from the matrix once removals since the last build outnumber the live vectors.

Graph settings (`MemoryConfig.index.hnsw_*`): degree `connectivity` 20, insertion beam
`expansion_add` 24, search beam `expansion_search` 256, and a narrower beam (32) for the
memory's write-time neighbour search (`search_many(..., expansion=...)`). Inserting is the main
cost of a write above `exact_below`, so the graph is wide but built with a narrow beam and
searched with a wide one; the measurements behind these values are in docs/journal.md
("Index"), and `python -m mags_lib.bench index` measures them again.

Recall: HNSW recall@10 is >= 0.95 on clustered data (tests/test_memory_index.py), but only about 0.8 at
100k on bag-of-words `HashingEmbedder` vectors, whose cosines are flat and tie a lot, and poor on
isotropic random 384-d noise: raise `exact_below` where exact recall matters more than write
throughput (`python -m mags_lib.bench index` measures both).

Determinism: usearch draws HNSW levels from its own fixed-seed generator and single-threaded
insertion fixes the graph, so graph updates run on one thread; `seed` shuffles the order in which
the matrix is first inserted (arrival order is often topically clustered, which builds a worse
graph). Batched graph searches use every core, which does not change results. Scores are
rounded to 6 decimals before ranking so that cosines equal in exact arithmetic (frequent with
bag-of-words vectors) tie exactly whichever kernel computed them; ties break by ascending id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import contextmanager

import numpy as np

HNSW_CONNECTIVITY = 20  # graph degree (see "Graph settings" above)
HNSW_EXPANSION_ADD = 24  # beam width while inserting
HNSW_EXPANSION_SEARCH = 256  # beam width while searching
HNSW_EXPANSION_WRITE = 32  # beam width of the memory's write-time neighbour search

_DECIMALS = 6
_TIE = 2 * 10.0**-_DECIMALS  # margin that keeps every candidate which may tie after rounding
_GEMM_FLOATS = 1 << 23  # search_many chunk: at most 8M scores (32 MB) at a time


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)


def _dot_rows(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """matrix @ vector on this thread. Not BLAS: OpenBLAS runs a matrix-vector product of this
    size on all cores, and when the cores are busy (an LLM decoding next to the memory) its
    threads wait on each other: 15 ms instead of 0.5 ms for 5k x 384 on two loaded cores."""
    return np.einsum("ij,j->i", matrix, vector)


def rank_top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (id, score) pairs by (-rounded score, id): rounded float32 scores, int64 ids."""
    if k <= 0 or len(ids) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth - _TIE)
        ids, scores = ids[keep], scores[keep]
    rounded = np.round(scores.astype(np.float64), _DECIMALS)
    order = np.lexsort((ids, -rounded))[:k]
    return ids[order].astype(np.int64), rounded[order].astype(np.float32)


class VectorIndex:
    """Cosine search over unit-length float32 vectors keyed by int ids (ids must be >= 0).

    Exact below `exact_below` vectors, HNSW (usearch) above; the switch is automatic in both
    directions (back to exact below half the threshold). `search(..., exact=True)` forces a
    brute-force search at any size.
    """

    def __init__(self, dim: int, exact_below: int = 20_000, seed: int = 0, *,
                 connectivity: int = HNSW_CONNECTIVITY, expansion_add: int = HNSW_EXPANSION_ADD,
                 expansion_search: int = HNSW_EXPANSION_SEARCH,
                 oversample: int = 2, hnsw_dtype: str = "i8"):
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim
        self.exact_below = exact_below
        self.seed = seed
        self.connectivity = connectivity  # graph degree: more = better recall, bigger, slower add
        self.expansion_add = expansion_add  # beam width while inserting (see the module doc)
        self.expansion_search = expansion_search  # beam width while searching
        self.oversample = oversample  # graph candidates per result, rescored exactly
        # The graph keeps its own int8 copy of the vectors: on a 40k-fact corpus it inserted 1.9x
        # faster than f16 with the same candidate quality, since every hit is rescored exactly
        # in float32 anyway (oversample).
        self.hnsw_dtype = hnsw_dtype
        self._vecs = np.zeros((16, dim), np.float32)
        self._slot_ids = np.zeros(16, np.int64)
        self._slot_of: dict[int, int] = {}
        # The same map as a dense array (id -> slot, -1 = absent) while ids are small enough, so
        # that rescoring thousands of graph candidates at once needs no Python loop.
        self._dense: np.ndarray | None = np.full(16, -1, np.int64)
        self._hnsw = None
        self._removed_since_build = 0

    # --- size and lookup ---
    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, id) -> bool:
        try:
            return int(id) in self._slot_of
        except (TypeError, ValueError):
            return False

    def ids(self) -> np.ndarray:
        """All ids, ascending."""
        return np.sort(self._slot_ids[: len(self)])

    def get(self, id: int) -> np.ndarray:
        """A copy of the stored (unit-length) vector; KeyError for an unknown id."""
        return self._vecs[self._slot_of[int(id)]].copy()

    @property
    def approximate(self) -> bool:
        """True while searches go through the HNSW graph."""
        return self._hnsw is not None

    # --- writes ---
    def add(self, ids: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Insert or replace vectors (normalised to unit length); the last of duplicate ids wins."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        if vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of dim {self.dim}, got {vectors.shape[1]}")
        if len(ids) == 0:
            return
        if ids.min() < 0:
            raise ValueError("VectorIndex ids must be >= 0")
        if len(np.unique(ids)) < len(ids):
            last = {int(i): j for j, i in enumerate(ids)}
            rows = np.fromiter(last.values(), np.int64, len(last))
            ids, vectors = ids[rows], vectors[rows]
        vectors = _unit_rows(vectors)
        slots = np.fromiter((self._slot_of.get(int(i), -1) for i in ids), np.int64, len(ids))
        old = slots >= 0
        n, n_new = len(self), int((~old).sum())
        self._reserve(n + n_new)
        slots[~old] = np.arange(n, n + n_new)
        self._vecs[slots] = vectors
        self._slot_ids[slots] = ids
        self._slot_of.update(zip(ids[~old].tolist(), slots[~old].tolist(), strict=True))
        self._set_dense(ids[~old], slots[~old])
        if self._hnsw is not None:
            if old.any():
                self._hnsw.remove(ids[old].astype(np.uint64))
                self._removed_since_build += int(old.sum())
            self._hnsw.add(ids.astype(np.uint64), vectors, threads=1)
        self._maybe_switch()

    def remove(self, ids: Iterable[int]) -> None:
        """Remove ids; unknown ids are ignored."""
        gone = []
        for id in ids:
            slot = self._slot_of.pop(int(id), None)
            if slot is None:
                continue
            gone.append(int(id))
            last = len(self)  # after the pop, the last occupied slot
            if slot != last:
                moved = int(self._slot_ids[last])
                self._vecs[slot] = self._vecs[last]
                self._slot_ids[slot] = moved
                self._slot_of[moved] = slot
                if self._dense is not None:
                    self._dense[moved] = slot
            if self._dense is not None:
                self._dense[int(id)] = -1
        if gone and self._hnsw is not None:
            self._hnsw.remove(np.asarray(gone, dtype=np.uint64))
            self._removed_since_build += len(gone)
        self._maybe_switch()

    def _set_dense(self, ids: np.ndarray, slots: np.ndarray) -> None:
        """Record new ids in the dense map; drop the map for good once ids get sparse (the
        largest id above max(2**20, 8 x the vectors held)): lookups then go through the dict."""
        if self._dense is None or len(ids) == 0:
            return
        top = int(ids.max()) + 1
        if top > len(self._dense):
            if top > max(1 << 20, 8 * len(self)):
                self._dense = None
                return
            dense = np.full(max(top, 2 * len(self._dense)), -1, np.int64)
            dense[: len(self._dense)] = self._dense
            self._dense = dense
        self._dense[ids] = slots

    def _slots(self, ids: np.ndarray) -> np.ndarray:
        """Slots of stored ids (int64 array in, int64 array out)."""
        if self._dense is not None:
            return self._dense[ids]
        return np.fromiter((self._slot_of[i] for i in ids.tolist()), np.int64, len(ids))

    def _reserve(self, size: int) -> None:
        capacity = len(self._slot_ids)
        if size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        vecs = np.zeros((capacity, self.dim), np.float32)
        vecs[: len(self)] = self._vecs[: len(self)]
        slot_ids = np.zeros(capacity, np.int64)
        slot_ids[: len(self)] = self._slot_ids[: len(self)]
        self._vecs, self._slot_ids = vecs, slot_ids

    def _maybe_switch(self) -> None:
        n = len(self)
        if self._hnsw is None and n >= self.exact_below:
            self._build_hnsw()
        elif self._hnsw is not None and n < self.exact_below // 2:
            self._hnsw, self._removed_since_build = None, 0
        elif self._hnsw is not None and self._removed_since_build > n:
            self._build_hnsw()  # mostly tombstones: a fresh graph is smaller and searches better

    def _build_hnsw(self) -> None:
        from usearch.index import Index

        index = Index(ndim=self.dim, metric="cos", dtype=self.hnsw_dtype,
                      connectivity=self.connectivity, expansion_add=self.expansion_add,
                      expansion_search=self.expansion_search)
        order = np.random.default_rng(self.seed).permutation(len(self))
        index.add(self._slot_ids[order].astype(np.uint64), self._vecs[order], threads=1)
        self._hnsw, self._removed_since_build = index, 0

    # --- reads ---
    def _unit_query(self, query: np.ndarray) -> np.ndarray:
        query = np.asarray(query, dtype=np.float32).reshape(-1, self.dim)
        return _unit_rows(query)

    def _n_candidates(self, k: int) -> int:
        return min(len(self), max(self.oversample * k, k + 16))

    def _use_exact(self, k: int, exact: bool | None) -> bool:
        if exact is not None:
            return exact or self._hnsw is None
        return self._hnsw is None or self._n_candidates(k) >= len(self)

    def _rescore(self, query: np.ndarray, keys: np.ndarray, k: int):
        ids = keys.astype(np.int64)
        return rank_top_k(ids, _dot_rows(self._vecs[self._slots(ids)], query), k)

    def _rescore_many(self, queries: np.ndarray, keys: np.ndarray, counts: np.ndarray, k: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`_rescore` for a batch of graph results at once: the same ranking (rounded exact
        cosine descending, then id ascending) as `rank_top_k`, computed in chunks of rows.
        Returns (ids, scores, n): row r's results are ids[r, :n[r]] and scores[r, :n[r]]."""
        width = keys.shape[1]
        k = min(k, width)
        out_ids = np.zeros((len(queries), k), np.int64)
        out_scores = np.zeros((len(queries), k), np.float32)
        rows = max(1, _GEMM_FLOATS // max(1, width * self.dim))
        for start in range(0, len(queries), rows):
            ids = keys[start:start + rows].astype(np.int64)
            n = counts[start:start + rows].astype(np.int64)
            present = np.arange(width)[None, :] < n[:, None]
            slots = np.zeros_like(ids)  # padding (fewer results than asked) stays masked out
            slots[present] = self._slots(ids[present])
            vecs, qs = self._vecs[slots], queries[start:start + rows]
            scores = np.stack([_dot_rows(vecs[r], qs[r]) for r in range(len(ids))])  # as search
            rounded = np.where(present, np.round(scores.astype(np.float64), _DECIMALS), -np.inf)
            top = np.lexsort((ids, -rounded), axis=-1)[:, :k]  # padding (-inf) sorts last
            out_ids[start:start + rows] = np.take_along_axis(ids, top, axis=1)
            out_scores[start:start + rows] = np.take_along_axis(rounded, top, axis=1)
        return out_ids, out_scores, np.minimum(counts.astype(np.int64), k)

    def search(self, query: np.ndarray, k: int, *, exact: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(int64 ids, float32 cosines) of the at most k nearest vectors, best first."""
        n = len(self)
        q = self._unit_query(query)[0]
        if n == 0 or k <= 0:
            return rank_top_k(np.zeros(0, np.int64), np.zeros(0, np.float32), 0)
        if self._use_exact(k, exact):
            return rank_top_k(self._slot_ids[:n], _dot_rows(self._vecs[:n], q), k)
        found = self._hnsw.search(q, self._n_candidates(k), threads=1)
        return self._rescore(q, found.keys, k)

    def search_many(self, queries: np.ndarray, k: int, *, exact: bool | None = None,
                    expansion: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """`search` for every row of `queries`, batched (one GEMM or one parallel graph search).
        `expansion`: the graph search's beam width for this call (None = `expansion_search`)."""
        ids, scores, n = self._search_rows(queries, k, exact, expansion)
        return [(ids[r, :c], scores[r, :c]) for r, c in enumerate(n.tolist())]

    def search_pairs(self, queries: np.ndarray, k: int, *, expansion: int | None = None
                     ) -> list[list[tuple[int, float]]]:
        """`search_many` as plain Python: one list of (id, cosine) pairs per query, best first
        (what a memory write walks through; one conversion for the batch, not one per row)."""
        ids, scores, n = self._search_rows(queries, k, None, expansion)
        return [list(zip(i[:c], s[:c], strict=True)) for i, s, c in
                zip(ids.tolist(), scores.tolist(), n.tolist(), strict=True)]

    def _search_rows(self, queries: np.ndarray, k: int, exact: bool | None,
                     expansion: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, scores, n) as `_rescore_many` returns them, for `search_many`."""
        n = len(self)
        qs = self._unit_query(queries)
        if n == 0 or k <= 0 or len(qs) == 0:
            return (np.zeros((len(qs), 0), np.int64), np.zeros((len(qs), 0), np.float32),
                    np.zeros(len(qs), np.int64))
        if len(qs) == 1:  # one query: `search` (one thread; usearch returns a flat Matches)
            with self._beam(expansion):
                ids, scores = self.search(qs[0], k, exact=exact)
            return ids[None, :], scores[None, :], np.array([len(ids)], np.int64)
        if self._use_exact(k, exact):
            k = min(k, n)
            out_ids = np.zeros((len(qs), k), np.int64)
            out_scores = np.zeros((len(qs), k), np.float32)
            chunk = max(1, _GEMM_FLOATS // n)
            for start in range(0, len(qs), chunk):
                scores = qs[start:start + chunk] @ self._vecs[:n].T
                # row by row: one partition of the whole block plus the tie handling measured
                # twice as slow
                for r, row in enumerate(scores, start):
                    out_ids[r], out_scores[r] = rank_top_k(self._slot_ids[:n], row, k)
            return out_ids, out_scores, np.full(len(qs), k, np.int64)
        with self._beam(expansion):
            found = self._hnsw.search(qs, self._n_candidates(k), threads=0)
        return self._rescore_many(qs, found.keys, found.counts, k)

    @contextmanager
    def _beam(self, expansion: int | None):
        """The graph's search beam width set to `expansion` inside the block (None: unchanged)."""
        if expansion is None or self._hnsw is None:
            yield
            return
        beam = self._hnsw.expansion_search
        self._hnsw.expansion_search = expansion
        try:
            yield
        finally:
            self._hnsw.expansion_search = beam
