"""Tests of the memory's search indexes: VectorIndex (exact and HNSW) and BM25Index."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mags_lib.memory.index import VectorIndex
from mags_lib.memory.lexical import STOPWORDS, BM25Index, content_terms


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def clustered(rng: np.random.Generator, n: int, dim: int, n_clusters: int = 50) -> np.ndarray:
    """Unit vectors around random centres: random data shaped like sentence embeddings (HNSW
    recall on isotropic 384-d noise is poor for every HNSW library; see test below)."""
    centres = unit(rng, n_clusters, dim)
    x = centres[rng.integers(n_clusters, size=n)] + 0.35 * unit(rng, n, dim)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def brute_force(ids: np.ndarray, vecs: np.ndarray, q: np.ndarray, k: int):
    scores = np.round((vecs @ (q / np.linalg.norm(q))).astype(np.float64), 6)
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]


# --- VectorIndex, exact ---
def test_exact_search_matches_brute_force():
    rng = np.random.default_rng(0)
    ids = rng.permutation(10_000)[:300].astype(np.int64)
    vecs = unit(rng, 300, 32)
    index = VectorIndex(32)
    index.add(ids, vecs)
    assert len(index) == 300 and not index.approximate
    for q in unit(rng, 20, 32):
        got_ids, got_scores = index.search(q * 3.0, 10)  # queries need not be unit length
        want_ids, want_scores = brute_force(ids, vecs, q, 10)
        assert got_ids.dtype == np.int64 and got_scores.dtype == np.float32
        np.testing.assert_array_equal(got_ids, want_ids)
        np.testing.assert_allclose(got_scores, want_scores, atol=1e-6)
    assert np.array_equal(index.ids(), np.sort(ids))


def test_search_many_equals_search():
    rng = np.random.default_rng(1)
    index = VectorIndex(16)
    index.add(np.arange(200), unit(rng, 200, 16))
    queries = unit(rng, 7, 16)
    for (a_ids, a_s), q in zip(index.search_many(queries, 5), queries, strict=True):
        b_ids, b_s = index.search(q, 5)
        np.testing.assert_array_equal(a_ids, b_ids)
        np.testing.assert_allclose(a_s, b_s, atol=2e-6)  # GEMM vs GEMV: last-bit differences


def test_small_index_and_empty_cases():
    index = VectorIndex(4)
    ids, scores = index.search(np.ones(4), 3)
    assert len(ids) == 0 and len(scores) == 0
    index.add([5], np.array([1.0, 0, 0, 0]))
    ids, scores = index.search(np.array([1.0, 0, 0, 0]), 10)
    assert ids.tolist() == [5] and scores[0] == pytest.approx(1.0)
    assert index.search(np.ones(4), 0)[0].size == 0
    with pytest.raises(ValueError):
        index.add([1], np.ones((1, 3)))
    with pytest.raises(ValueError):
        index.add([-1], np.ones((1, 4)))


def test_ties_break_by_id():
    index = VectorIndex(3)
    index.add([9, 2, 7, 4], np.tile([0.0, 1.0, 0.0], (4, 1)))
    ids, scores = index.search(np.array([0.0, 1.0, 0.0]), 3)
    assert ids.tolist() == [2, 4, 7]
    assert np.all(scores == scores[0])


def test_remove_and_readd():
    rng = np.random.default_rng(2)
    vecs = unit(rng, 50, 8)
    index = VectorIndex(8)
    index.add(np.arange(50), vecs)
    index.remove([3, 10, 999])  # unknown ids are ignored
    assert len(index) == 48 and 3 not in index and 10 not in index and 4 in index
    with pytest.raises(KeyError):
        index.get(3)
    ids, _ = index.search(vecs[3], 48)
    assert 3 not in ids and 10 not in ids and len(ids) == 48
    np.testing.assert_allclose(index.get(49), vecs[49], atol=1e-6)  # moved row still right
    index.add([4], vecs[0])  # re-adding replaces the vector
    assert len(index) == 48
    ids, scores = index.search(vecs[0], 2)
    assert ids.tolist() == [0, 4] and scores[1] == pytest.approx(1.0, abs=1e-6)
    index.add([11, 11], np.stack([vecs[1], vecs[2]]))  # the last duplicate wins
    np.testing.assert_allclose(index.get(11), vecs[2], atol=1e-6)


# --- VectorIndex, HNSW ---
def _recall_at_10(index: VectorIndex, queries: np.ndarray) -> float:
    approx = index.search_many(queries, 10)
    exact = index.search_many(queries, 10, exact=True)
    return float(np.mean([len(np.intersect1d(a[0], e[0])) / 10
                          for a, e in zip(approx, exact, strict=True)]))


def test_switches_to_hnsw_with_high_recall():
    rng = np.random.default_rng(3)
    data = clustered(rng, 3000, 64)
    index = VectorIndex(64, exact_below=500)
    for start in range(0, 3000, 256):  # incremental, like the memory's writes
        index.add(np.arange(start, min(start + 256, 3000)), data[start:start + 256])
    assert index.approximate and len(index) == 3000
    queries = clustered(np.random.default_rng(4), 100, 64)
    assert _recall_at_10(index, queries) >= 0.95
    ids, scores = index.search(queries[0], 10)
    assert len(ids) == 10 and np.all(np.diff(scores) <= 0)
    # scores are exact cosines even though candidates came from the graph
    np.testing.assert_allclose(scores, data[ids] @ (queries[0] / np.linalg.norm(queries[0])),
                               atol=1e-5)


def test_hnsw_remove_readd_and_switch_back():
    rng = np.random.default_rng(5)
    data = clustered(rng, 1200, 32)
    index = VectorIndex(32, exact_below=500)
    index.add(np.arange(1200), data)
    assert index.approximate
    index.remove(range(0, 1200, 3))
    assert len(index) == 800
    for q in data[:30]:
        ids, _ = index.search(q, 10)
        assert not np.any(ids % 3 == 0)
    index.add([1], data[2])  # replace in the graph too
    ids, scores = index.search(data[2], 2)
    assert set(ids.tolist()) == {1, 2} and scores.min() == pytest.approx(1.0, abs=1e-5)
    assert _recall_at_10(index, data[1::3][:60]) >= 0.95
    index.remove(range(1200))
    index.add(np.arange(100), data[:100])
    assert not index.approximate and len(index) == 100


def test_determinism_same_operations_same_results():
    def run() -> list:
        rng = np.random.default_rng(6)
        data = clustered(rng, 1500, 32)
        index = VectorIndex(32, exact_below=400, seed=1)
        for start in range(0, 1500, 100):
            index.add(np.arange(start, start + 100), data[start:start + 100])
            index.remove(range(start, start + 100, 7))
        return index.search_many(data[:50], 10) + [index.search(data[60], 5)]

    first, second = run(), run()
    for (a_ids, a_s), (b_ids, b_s) in zip(first, second, strict=True):
        np.testing.assert_array_equal(a_ids, b_ids)
        np.testing.assert_array_equal(a_s, b_s)


@pytest.mark.parametrize("offset", [0, 10**9])  # small ids: dense id map; huge ids: the dict
def test_hnsw_batched_search_equals_one_by_one(offset):
    rng = np.random.default_rng(8)
    data = clustered(rng, 900, 32)
    index = VectorIndex(32, exact_below=300)
    index.add(np.arange(900) + offset, data)
    index.remove(np.arange(0, 900, 5) + offset)  # holes: moved slots must still map right
    index.add([offset + 3], data[7])  # and a replaced vector
    assert index.approximate
    queries = clustered(np.random.default_rng(9), 40, 32)
    for k in (1, 10, 40):
        batched = index.search_many(queries, k)
        for q, (ids, scores) in zip(queries, batched, strict=True):
            one_ids, one_scores = index.search(q, k)
            np.testing.assert_array_equal(ids, one_ids)
            np.testing.assert_array_equal(scores, one_scores)
            assert not np.any((ids - offset) % 5 == 0)


@pytest.mark.parametrize("offset", [0, 10**9])
def test_rescoring_ignores_the_padding_of_short_graph_results(offset):
    # usearch pads a row with garbage keys when it finds fewer than asked (counts < width)
    rng = np.random.default_rng(10)
    index = VectorIndex(16)
    data = unit(rng, 50, 16)
    index.add(np.arange(50) + offset, data)
    queries = unit(rng, 2, 16)
    keys = np.array([[offset + 3, offset + 7, 2**63 + 5], [offset + 1, 123456, 999]], np.uint64)
    ids, scores, n = index._rescore_many(queries, keys, np.array([2, 1]), k=5)
    assert n.tolist() == [2, 1]
    assert sorted(ids[0, :2].tolist()) == [offset + 3, offset + 7]
    assert ids[1, :1].tolist() == [offset + 1]
    np.testing.assert_allclose(scores[1, :1], [data[1] @ queries[1]], atol=1e-5)


# --- BM25Index ---
def test_bm25_rare_term_ranks_first():
    bm25 = BM25Index()
    for i in range(20):
        bm25.add(i, f"the merchant sells bread number {i}")
    bm25.add(100, "the merchant sells a silver zorvath amulet")
    ids, scores = bm25.search("merchant zorvath", 5)
    assert ids[0] == 100
    assert np.all(scores > 0) and np.all(np.diff(scores) <= 0)
    assert bm25.search("the of and", 5)[0].size == 0  # stopwords only
    assert bm25.search("unknownword", 5)[0].size == 0


def test_bm25_idf_behaviour():
    bm25 = BM25Index()
    bm25.add(1, "apple banana")
    bm25.add(2, "apple cherry")
    bm25.add(3, "apple")
    assert bm25.idf("cherry") > bm25.idf("apple") > 0
    assert bm25.idf("durian") == 0.0
    assert bm25.idf("apple") == pytest.approx(math.log1p((3 - 3 + 0.5) / 3.5))
    bm25.remove(2)
    assert bm25.idf("cherry") == 0.0
    assert bm25.idf("apple") == pytest.approx(math.log1p(0.5 / 2.5))
    ids, _ = bm25.search("cherry", 3)
    assert ids.size == 0


def test_bm25_remove_readd_and_ties():
    bm25 = BM25Index()
    bm25.add(7, "red dragon")
    bm25.add(3, "red dragon")
    bm25.add(5, "blue dragon")
    ids, scores = bm25.search("red", 5)
    assert ids.tolist() == [3, 7] and scores[0] == scores[1]
    bm25.add(3, "green frog")  # re-adding replaces
    assert bm25.search("red", 5)[0].tolist() == [7]
    assert bm25.search("frog", 5)[0].tolist() == [3]
    bm25.remove(7)
    bm25.remove(12345)  # unknown: ignored
    assert len(bm25) == 2 and bm25.search("red", 5)[0].size == 0


def test_bm25_add_many_replaces_known_ids_and_checks_lengths():
    one, many = BM25Index(), BM25Index()
    for bm25 in (one, many):
        bm25.add(3, "red dragon")
    one.add(3, "green frog")
    one.add(4, "red fox")
    many.add_many([3, 4], ["green frog", "red fox"])  # 3 is known: replaced, as `add` does
    for query in ("red", "frog", "dragon"):
        a, b = one.search(query, 5), many.search(query, 5)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="2 ids but 1 texts"):
        many.add_many([8, 9], ["only one"])
    assert len(many) == 2


def test_bm25_compaction_keeps_scores():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = {i: " ".join(rng.choice(words, size=rng.integers(1, 8))) for i in range(3000)}
    churned, fresh = BM25Index(), BM25Index()
    for i, text in docs.items():
        churned.add(i, text)
    for i in range(2600):  # enough dead slots to trigger compaction
        churned.remove(i)
    for i in range(2600, 3000):
        fresh.add(i, docs[i])
    for query in ("w1 w2", "w3", "w5 w6 w7 w8"):
        a, b = churned.search(query, 50), fresh.search(query, 50)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6)


def reference_bm25(docs: dict[int, str], query: str, k1: float = 1.5, b: float = 0.75):
    """Textbook BM25 (Lucene idf, distinct query terms) in plain Python."""
    tokens = {i: content_terms(text) for i, text in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in tokens.values()) / n if n else 0.0
    out = {}
    for i, toks in tokens.items():
        tf = Counter(toks)
        score = 0.0
        for term in set(content_terms(query)):
            if tf[term] == 0:
                continue
            df = sum(1 for t in tokens.values() if term in t)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = k1 * (1 - b + b * len(toks) / max(avgdl, 1e-9))
            score += idf * tf[term] * (k1 + 1) / (tf[term] + norm)
        if score > 0:
            out[i] = score
    return out


_WORDS = st.sampled_from(["ash", "oak", "elm", "fir", "yew", "the", "a", "of", "oak-ash", "Elm"])
_TEXT = st.lists(_WORDS, min_size=0, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(corpus=st.dictionaries(st.integers(0, 50), _TEXT, min_size=1, max_size=25),
       removed=st.sets(st.integers(0, 50), max_size=10), query=_TEXT, batched=st.booleans())
def test_bm25_matches_reference(corpus, removed, query, batched):
    bm25 = BM25Index()
    if batched:
        bm25.add_many(list(corpus), list(corpus.values()))
    else:
        for i, text in corpus.items():
            bm25.add(i, text)
    for i in removed:
        bm25.remove(i)
    live = {i: t for i, t in corpus.items() if i not in removed}
    want = reference_bm25(live, query)
    ids, scores = bm25.search(query, 100)
    assert len(bm25) == len(live)
    assert set(ids.tolist()) == set(want)
    for i, s in zip(ids.tolist(), scores.tolist(), strict=True):
        assert s == pytest.approx(want[i], rel=1e-5)
    ranked = sorted(want, key=lambda i: (-round(want[i], 9), i))
    assert [want[i] for i in ids.tolist()] == pytest.approx([want[i] for i in ranked], rel=1e-5)


def test_stopwords_are_lowercase_words():
    assert "the" in STOPWORDS and all(w == w.lower() and w.isalpha() for w in STOPWORDS)
