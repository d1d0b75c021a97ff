"""`python -m mags_lib.bench index`: `VectorIndex` and `BM25Index` alone on the synthetic corpus.

Vectors are `HashingEmbedder` embeddings of the corpus facts, added in chunks of 256 as the
memory's writes do; queries are embeddings of the corpus questions. Vector recall@10 counts a
result as right when its exact cosine reaches the exact 10th best (bag-of-words cosines tie
often, so id overlap would understate it).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from mags_lib.bench.corpus import make_corpus
from mags_lib.bench.timing import latency_summary, machine_info, time_each


@dataclass
class IndexBenchConfig:
    sizes: list[int] = field(default_factory=lambda: [1_000, 10_000, 100_000],
                             metadata={"help": "numbers of documents, one run each"})
    queries: int = field(default=200, metadata={"help": "timed queries per size"})
    seed: int = field(default=0, metadata={"help": "corpus and query seed"})
    dim: int = field(default=384, metadata={"help": "embedding dimension (HashingEmbedder)"})
    k: int = field(default=10, metadata={"help": "results per query"})
    exact_below: int = field(default=20_000, metadata={"help": "VectorIndex switch to HNSW"})
    add_chunk: int = field(default=256, metadata={"help": "vectors per VectorIndex.add call"})


def tie_aware_recall(approx: list, exact: list, k: int) -> float:
    """Share of approximate results whose cosine reaches the exact k-th best cosine."""
    rates = []
    for (_, a_scores), (_, e_scores) in zip(approx, exact, strict=True):
        if len(e_scores) == 0:
            continue
        kth = e_scores[min(k, len(e_scores)) - 1]
        rates.append(np.sum(a_scores >= kth - 1e-6) / min(k, len(e_scores)))
    return float(np.mean(rates)) if rates else 1.0


def bench_vector_index(vectors: np.ndarray, queries: np.ndarray, cfg: IndexBenchConfig) -> dict:
    from mags_lib.memory.index import VectorIndex

    index = VectorIndex(vectors.shape[1], exact_below=cfg.exact_below, seed=cfg.seed)
    n, add_s, switch_s, n_timed = len(vectors), 0.0, 0.0, 0
    for start in range(0, n, cfg.add_chunk):
        ids = np.arange(start, min(start + cfg.add_chunk, n))
        was_exact = not index.approximate
        t = time.perf_counter()
        index.add(ids, vectors[ids])
        dt = time.perf_counter() - t
        if was_exact and index.approximate:
            switch_s = dt  # this add built the HNSW graph from the matrix
        else:
            add_s, n_timed = add_s + dt, n_timed + len(ids)
    k = cfg.k
    auto_ms, auto = time_each(lambda q: index.search(q, k), list(queries))
    exact_ms, exact = time_each(lambda q: index.search(q, k, exact=True), list(queries))
    t = time.perf_counter()
    index.search_many(queries, k)
    many_ms = (time.perf_counter() - t) * 1e3 / len(queries)
    t = time.perf_counter()
    index.search_many(queries, k, exact=True)
    many_exact_ms = (time.perf_counter() - t) * 1e3 / len(queries)
    return {"approximate": index.approximate,
            "add_us_per_vector": add_s / max(n_timed, 1) * 1e6,
            "hnsw_build_s": switch_s,
            "build_s": add_s + switch_s,
            "search": latency_summary(auto_ms),
            "search_exact": latency_summary(exact_ms),
            "search_many_ms_per_query": many_ms,
            "search_many_exact_ms_per_query": many_exact_ms,
            "recall_at_10": tie_aware_recall(auto, exact, k)}


def ten_word_queries(facts: list[str], count: int, rng: np.random.Generator) -> list[str]:
    """Queries of 10 content words taken from random facts (frequent and rare terms mixed)."""
    from mags_lib.memory.lexical import content_terms

    out = []
    for _ in range(count):
        words: list[str] = []
        while len(words) < 10:
            words += content_terms(facts[rng.integers(len(facts))])
        out.append(" ".join(words[:10]))
    return out


def bench_bm25(facts: list[str], questions: list[str], long_queries: list[str],
               cfg: IndexBenchConfig) -> dict:
    from mags_lib.memory.lexical import BM25Index

    bm25 = BM25Index()
    t = time.perf_counter()
    for i, text in enumerate(facts):
        bm25.add(i, text)
    add_us = (time.perf_counter() - t) / len(facts) * 1e6
    q_ms, _ = time_each(lambda q: bm25.search(q, cfg.k), questions)
    long_ms, _ = time_each(lambda q: bm25.search(q, cfg.k), long_queries)
    removed = range(0, len(facts), 10)
    t = time.perf_counter()
    for i in removed:
        bm25.remove(i)
    remove_us = (time.perf_counter() - t) / len(removed) * 1e6
    return {"add_us_per_doc": add_us, "remove_us_per_doc": remove_us,
            "search_question": latency_summary(q_ms),
            "search_10_words": latency_summary(long_ms)}


def bench_index(cfg: IndexBenchConfig) -> dict:
    from mags_lib.embed import HashingEmbedder

    embedder = HashingEmbedder(cfg.dim)
    results = []
    from mags_lib.progress import progress

    for n in progress(cfg.sizes, "index sizes"):
        corpus = make_corpus(n, cfg.seed)
        rng = np.random.default_rng(cfg.seed + 1)
        picked = rng.integers(n, size=cfg.queries)
        questions = [corpus.questions[i] for i in picked]
        vectors = embedder.encode(corpus.facts)
        queries = embedder.encode(questions)
        results.append({"size": n,
                        "vector": bench_vector_index(vectors, queries, cfg),
                        "bm25": bench_bm25(corpus.facts, questions,
                                           ten_word_queries(corpus.facts, cfg.queries, rng), cfg)})
    return {"benchmark": "index", "config": asdict(cfg), "machine": machine_info(),
            "results": results}
