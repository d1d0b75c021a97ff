"""Two keys per turn, flat (no graph), on the development splits: recall@10 of each turn ranked
by its own vector, or by the best of its own and its vectors with the 1-2 turns before it, plus
0.3 x normalised BM25 (docs/journal.md, 2026-12-01 late morning). Prints one line per source.

    python tools/two_key_recall.py
"""

from __future__ import annotations

import numpy as np

from mags_lib.conversations.types import turn_text
from mags_lib.evaluation.conversation_study import study_embedder
from mags_lib.evaluation.evidence_recall import recall_at
from mags_lib.memory.lexical import BM25Index
from mags_lib.tasks.registry import get_task

BM25_WEIGHT = 0.3


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def bm25_scores(index: BM25Index, question: str, n: int) -> np.ndarray:
    out = np.zeros(n)
    found, scores = index.search(question, k=n)
    if len(found):
        s = np.asarray(scores, float)
        out[np.asarray(found, int)] = s / (s.max() or 1.0)
    return out


def conversation_recall(conv, emb, acc: dict[str, list[float]]) -> None:
    texts = [turn_text(t) for t in conv.turns()]
    ids = [t.dia_id for t in conv.turns()]
    own = unit(np.asarray(emb.encode(texts), np.float32))
    ctx = {n: unit(np.asarray(emb.encode(
        [" ".join(texts[max(0, i - n):i + 1]) for i in range(len(texts))]), np.float32))
        for n in (1, 2)}
    index = BM25Index()
    for i, text in enumerate(texts):
        index.add(i, text)
    for qa in conv.qa:
        if not qa.evidence:
            continue
        qv = unit(np.asarray(emb.encode([qa.asked()]), np.float32))[0]
        b = BM25_WEIGHT * bm25_scores(index, qa.asked(), len(texts))
        sims = {"own": own @ qv, "1": ctx[1] @ qv, "2": ctx[2] @ qv}
        variants = {"own": sims["own"], "own+bm": sims["own"] + b,
                    "sum1+bm": unit(own + ctx[1]) @ qv + b,
                    "max1+bm": np.maximum(sims["own"], sims["1"]) + b,
                    "max2+bm": np.maximum(sims["own"], sims["2"]) + b,
                    "max12+bm": np.maximum.reduce([sims["own"], sims["1"], sims["2"]]) + b}
        for name, score in variants.items():
            top = np.argsort(-score)[:10]
            acc.setdefault(name, []).append(recall_at([ids[i] for i in top], qa.evidence))


def main() -> None:
    emb = study_embedder("minilm")
    sources = {"locomo train": get_task("locomo").episodes("train", None),
               "persona dev": get_task("persona").episodes("dev", 6)}
    for source, convs in sources.items():
        acc: dict[str, list[float]] = {}
        for conv in convs:
            conversation_recall(conv, emb, acc)
        print(source, {k: round(float(np.mean(v)), 3) for k, v in acc.items()}, flush=True)


if __name__ == "__main__":
    main()
