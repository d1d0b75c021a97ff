"""Incremental Okapi BM25 over short texts: the lexical half of hybrid recall.

Dense embeddings blur rare names ("Vorlen" and "Vorlan" look alike to a sentence model); BM25
ranks the one document that contains the rare query word first. `BM25Index` supports adds and
removals at any time and stays fast at 100k documents:

* every document gets a compact internal slot; lengths live in a numpy array indexed by slot;
* every term has growable postings (slots, term frequencies) that numpy reads in place;
* removal is lazy: the slot is marked dead and skipped when scoring; once dead slots outnumber
  live ones, all postings are compacted and slots renumbered;
* a query gathers the postings of its terms and sums their contributions with `np.bincount`.

    bm25 = BM25Index()
    bm25.add(1, "Vorlen the smith lives in Kashtiro")
    ids, scores = bm25.search("where does vorlen live", k=5)

Scoring, with N live documents, df(t) live documents containing t, avgdl their mean length:
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))        (Lucene's form: always > 0)
    score(d) = sum over distinct query terms t in d of
               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))
Tokens come from `mags_lib.embed.tokenize`, minus `STOPWORDS`; lengths count the kept tokens.
With `stem=True` (`RecallConfig.lexical_stem`) both documents and queries are reduced to their
Snowball (Porter 2) English stems, so "painted" finds "painting" and "inspired" "inspiration";
the package `snowballstemmer` (PyPI, pure Python) does the stemming.
"""

from __future__ import annotations

from array import array
from collections import Counter
from functools import lru_cache

import numpy as np

from mags_lib.embed import tokenize

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())  # a small English list (NLTK-like)


def content_terms(text: str, stem: bool = False) -> list[str]:
    """Tokens of `text` that BM25 indexes: `tokenize` minus stopwords, in order; with `stem`,
    each reduced to its English stem (`stem_word`).

    >>> content_terms("She painted the paintings", stem=True)
    ['paint', 'paint']
    """
    terms = [t for t in tokenize(text) if t not in STOPWORDS]
    return [stem_word(t) for t in terms] if stem else terms


@lru_cache(maxsize=200_000)
def stem_word(word: str) -> str:
    """The Snowball English stem of one lower-case word (memoised: a vocabulary repeats)."""
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import snowballstemmer
    except ImportError as exc:  # a dependency of the project: only a broken install lacks it
        from mags_lib.errors import MagsError

        raise MagsError("stemming BM25 terms (RecallConfig.lexical_stem) needs the package "
                        "snowballstemmer, which is not installed",
                        "run `make setup` (or `pip install snowballstemmer`), or set "
                        "lexical_stem to False") from exc
    return snowballstemmer.stemmer("english")


class _Postings:
    """Growable (slot, tf) arrays of one term; may hold dead slots until the next compaction.

    Stored as `array.array`, whose C-level append keeps `add` in the microseconds; `view()` hands
    numpy a zero-copy view for scoring (to be dropped before the next append)."""

    __slots__ = ("slots", "tf")

    def __init__(self) -> None:
        self.slots = array("i")
        self.tf = array("f")

    def append(self, slot: int, tf: int) -> None:
        self.slots.append(slot)
        self.tf.append(tf)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        return np.frombuffer(self.slots, np.int32), np.frombuffer(self.tf, np.float32)

    def replace(self, slots: np.ndarray, tf: np.ndarray) -> None:
        self.slots = array("i", slots.astype(np.int32).tobytes())
        self.tf = array("f", tf.astype(np.float32).tobytes())


class BM25Index:
    """Incremental Okapi BM25 (k1=1.5, b=0.75) over short texts keyed by int ids; `stem`:
    terms are English stems (`content_terms`)."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, stem: bool = False):
        self.k1, self.b, self.stem = k1, b, bool(stem)
        self._term_of: dict[str, int] = {}
        self._postings: list[_Postings] = []
        self._df: list[int] = []  # live documents per term id
        self._slot_of: dict[int, int] = {}
        self._slot_ids = np.zeros(64, np.int64)
        self._doc_len = np.zeros(64, np.float64)
        self._live = np.zeros(64, bool)
        self._doc_terms: list[tuple[int, ...]] = []  # term ids per slot, to undo df on removal
        self._n_slots = 0
        self._total_len = 0.0

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, id) -> bool:
        return int(id) in self._slot_of

    def add(self, id: int, text: str) -> None:
        """Index `text` under `id`, replacing any earlier text of that id."""
        id = int(id)
        if id in self._slot_of:
            self.remove(id)
        self.add_many([id], [text])

    def add_many(self, ids: list[int], texts: list[str]) -> None:
        """`add` for many documents at once (a memory indexes each chunk of writes this way)."""
        ids, texts = [int(i) for i in ids], list(texts)
        if len(texts) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(texts)} texts")
        if len(set(ids)) < len(ids) or any(i in self._slot_of for i in ids):
            for id, text in zip(ids, texts, strict=True):  # replacements: one at a time
                self.add(id, text)
            return
        start = self._n_slots
        end = start + len(ids)
        self._reserve(end)
        term_of, postings, df = self._term_of, self._postings, self._df
        lengths = []
        for slot, text in enumerate(texts, start):
            counts = Counter(content_terms(text, self.stem))
            term_ids = []
            for term, tf in counts.items():
                tid = term_of.get(term)
                if tid is None:
                    tid = term_of[term] = len(postings)
                    postings.append(_Postings())
                    df.append(0)
                postings[tid].append(slot, tf)
                df[tid] += 1
                term_ids.append(tid)
            self._doc_terms.append(tuple(term_ids))
            lengths.append(sum(counts.values()))
        self._slot_ids[start:end] = ids
        self._doc_len[start:end] = lengths
        self._live[start:end] = True
        self._slot_of.update(zip(ids, range(start, end), strict=True))
        self._n_slots = end
        self._total_len += float(sum(lengths))

    def remove(self, id: int) -> None:
        """Forget `id` (no-op when unknown); its postings are skipped until compaction."""
        slot = self._slot_of.pop(int(id), None)
        if slot is None:
            return
        self._live[slot] = False
        self._total_len -= self._doc_len[slot]
        for tid in self._doc_terms[slot]:
            self._df[tid] -= 1
        if self._n_slots - len(self) > max(len(self), 1024):
            self._compact()

    def _reserve(self, size: int) -> None:
        capacity = len(self._live)
        if size <= capacity:
            return
        grow = max(size, 2 * capacity) - capacity
        self._slot_ids = np.concatenate([self._slot_ids, np.zeros(grow, np.int64)])
        self._doc_len = np.concatenate([self._doc_len, np.zeros(grow, np.float64)])
        self._live = np.concatenate([self._live, np.zeros(grow, bool)])

    def _compact(self) -> None:
        """Drop dead slots from every postings list and renumber the live slots densely."""
        live = self._live[: self._n_slots]
        new_slot = np.cumsum(live) - 1
        for postings in self._postings:
            slots, tf = postings.view()
            keep = live[slots]
            new_slots, new_tf = new_slot[slots[keep]], tf[keep]
            del slots, tf  # release the buffers before the arrays are replaced
            postings.replace(new_slots, new_tf)
        kept = np.flatnonzero(live)
        n = len(kept)
        self._slot_ids[:n] = self._slot_ids[kept]
        self._doc_len[:n] = self._doc_len[kept]
        self._live[:] = False
        self._live[:n] = True
        self._doc_terms = [self._doc_terms[s] for s in kept.tolist()]
        self._slot_of = {int(i): s for s, i in enumerate(self._slot_ids[:n].tolist())}
        self._n_slots = n

    def idf(self, term: str) -> float:
        """Lucene BM25 idf of a (lower-case) term over the live documents; 0 if absent."""
        tid = self._term_of.get(term)
        df = self._df[tid] if tid is not None else 0
        if df == 0:
            return 0.0
        return float(np.log1p((len(self) - df + 0.5) / (df + 0.5)))

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(int64 ids, float32 scores > 0) of the at most k best documents, ties by ascending id."""
        empty = np.zeros(0, np.int64), np.zeros(0, np.float32)
        n = len(self)
        if n == 0 or k <= 0:
            return empty
        avgdl = max(self._total_len / n, 1e-9)
        slot_parts, score_parts = [], []
        for term in dict.fromkeys(content_terms(query, self.stem)):
            tid = self._term_of.get(term)
            if tid is None or self._df[tid] == 0:
                continue
            slots, tf = self._postings[tid].view()
            if self._n_slots > len(self):  # some postings are dead
                live = self._live[slots]
                slots, tf = slots[live], tf[live]
            tf = tf.astype(np.float64)
            norm = self.k1 * (1.0 - self.b + self.b * self._doc_len[slots] / avgdl)
            slot_parts.append(slots)
            score_parts.append(self.idf(term) * tf * (self.k1 + 1.0) / (tf + norm))
        if not slot_parts:
            return empty
        scores = np.bincount(np.concatenate(slot_parts), weights=np.concatenate(score_parts),
                             minlength=self._n_slots)
        hit = np.flatnonzero(scores > 0)
        scores = scores[hit]
        if len(hit) > k:
            kth = np.partition(scores, len(hit) - k)[len(hit) - k]
            top = scores >= kth
            hit, scores = hit[top], scores[top]
        ids = self._slot_ids[hit]
        order = np.lexsort((ids, -scores))[:k]
        return ids[order], scores[order].astype(np.float32)
