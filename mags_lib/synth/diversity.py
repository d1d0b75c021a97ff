"""How varied a set of texts is: distinct-n, nearest-neighbour cosine, near-duplicates, dedupe.

Pure functions over lists of strings and arrays of unit vectors (rows of an embedder's
`encode`); the embedder is the caller's choice (`embedder_for`).

    >>> distinct_n(["a b c", "a b d"], 1)
    0.6666666666666666
    >>> import numpy as np
    >>> v = np.array([[1.0, 0.0], [0.999, 0.0447], [0.0, 1.0]], dtype=np.float32)
    >>> dedupe_indices(v, 0.95)
    [0, 2]
    >>> near_dup_rate(v, 0.95)
    0.6666666666666666
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mags_lib.embed import tokenize

_CHUNK = 1024  # rows per block of the similarity matrix (bounds memory on large sets)


def distinct_n(texts: list[str], n: int) -> float:
    """Distinct n-grams / all n-grams over `texts` (tokens by `mags_lib.embed.tokenize`);
    0.0 when there is no n-gram at all."""
    grams = [tuple(toks[i:i + n]) for toks in map(tokenize, texts)
             for i in range(len(toks) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def nearest_cosines(vectors: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """For each row of `vectors`, its highest cosine with another row (of itself, or of
    `reference` when given); -1 where there is no other row."""
    vectors = np.asarray(vectors, dtype=np.float32)
    other = vectors if reference is None else np.asarray(reference, dtype=np.float32)
    out = np.full(len(vectors), -1.0, dtype=np.float32)
    if len(vectors) == 0 or len(other) == 0:
        return out
    for start in range(0, len(vectors), _CHUNK):
        sims = vectors[start:start + _CHUNK] @ other.T
        if reference is None:
            idx = np.arange(start, min(start + _CHUNK, len(vectors)))
            sims[idx - start, idx] = -np.inf  # not its own neighbour
        out[start:start + _CHUNK] = np.max(sims, axis=1) if sims.shape[1] else -1.0
    return np.maximum(out, -1.0)


def near_dup_rate(vectors: np.ndarray, threshold: float) -> float:
    """Share of rows whose nearest other row has cosine >= `threshold` (0.0 for < 2 rows)."""
    if len(vectors) < 2:
        return 0.0
    return float(np.mean(nearest_cosines(vectors) >= threshold))


def dedupe_indices(vectors: np.ndarray, threshold: float,
                   reference: np.ndarray | None = None) -> list[int]:
    """Indices kept by a greedy keep-first pass: a row is dropped when its cosine with an
    earlier kept row (or with any row of `reference`) reaches `threshold`."""
    vectors = np.asarray(vectors, dtype=np.float32)
    banned = np.zeros(len(vectors), dtype=bool)
    if reference is not None and len(reference) and len(vectors):
        banned = nearest_cosines(vectors, reference) >= threshold
    kept = np.zeros(len(vectors), dtype=bool)
    for start in range(0, len(vectors), _CHUNK):
        stop = min(start + _CHUNK, len(vectors))
        close = (vectors[start:stop] @ vectors[:stop].T) >= threshold  # vs every earlier row
        for j in range(stop - start):
            i = start + j
            kept[i] = not banned[i] and not np.any(close[j, :i] & kept[:i])
    return np.flatnonzero(kept).tolist()


def dedupe(rows: list[Any], vectors: np.ndarray, threshold: float) -> list[Any]:
    """`rows` without near-duplicates (keep first); `vectors` holds one row per item."""
    return [rows[i] for i in dedupe_indices(vectors, threshold)]


def _report(texts: list[str], vectors: np.ndarray, threshold: float) -> dict[str, float]:
    nn = nearest_cosines(vectors)
    return {"distinct_1": distinct_n(texts, 1), "distinct_2": distinct_n(texts, 2),
            "distinct_3": distinct_n(texts, 3), "near_dup_rate": near_dup_rate(vectors, threshold),
            "mean_nn_cosine": float(np.mean(nn)) if len(texts) > 1 else 0.0}


def diversity_report(texts: list[str], vectors: np.ndarray, threshold: float,
                     sample_size: int | None = None, repeats: int = 10,
                     seed: int = 0) -> dict[str, float]:
    """distinct-1/2/3, near-duplicate rate and mean nearest-neighbour cosine of a text set.

    All of these depend on the set's size (more texts, more repeated n-grams and closer
    neighbours), so sets of different sizes are compared at `sample_size`: the mean over
    `repeats` random subsets of that size (the whole set when it is not larger).
    """
    n = len(texts)
    out: dict[str, float] = {"n": n, "sample_size": min(n, sample_size or n)}
    if not sample_size or sample_size >= n:
        return {**out, **_report(texts, vectors, threshold)}
    rng = np.random.default_rng(seed)
    runs = [_report([texts[i] for i in idx], vectors[idx], threshold)
            for idx in (np.sort(rng.choice(n, sample_size, replace=False)) for _ in range(repeats))]
    return {**out, **{k: float(np.mean([r[k] for r in runs])) for k in runs[0]}}


def embedder_for(name: str):
    """'hashing' (bag-of-words feature hashing, 1024 buckets: instant, lexical) or any
    `default_embedder` name ('embedded' = MiniLM)."""
    from mags_lib.embed import HashingEmbedder, default_embedder

    return HashingEmbedder(dim=1024) if name == "hashing" else default_embedder(name)


def row_text(row: dict) -> str:
    """The text of a row that near-duplicates are judged on: its last prompt message (the
    system instruction is one of a few phrasings) and its completion."""
    return f"{row['prompt'][-1]['content']}\n{row['completion'][-1]['content']}"
