"""Training recall's reranker (`train/recall_reranker.py`) on conversations whose answers sit in
the reply below a question: fitted on some, it finds the replies in others."""

from __future__ import annotations

import numpy as np
import pytest

from mags_lib.conversations.types import QA, Conversation, Turn
from mags_lib.embed import HashingEmbedder
from mags_lib.memory.rerank import FEATURES, Reranker
from mags_lib.train.recall_reranker import (
    EvidenceGroup,
    cross_fitted,
    evidence_groups,
    fit_reranker,
    recall_at_k,
)

TOPICS = ["painting", "garden", "guitar", "marathon", "kitten", "bakery", "violin", "kayak",
          "poetry", "pottery", "chess", "tennis"]
REPLIES = ["it was the sunset", "my grandmother, really", "a friend from school",
           "mostly the rain", "an old film", "the neighbours next door"]
FILLER = ["Nice weather today.", "I had soup for lunch.", "The bus was late again.",
          "My phone battery died.", "We watched the news."]


def _conversation(seed: int) -> Conversation:
    rng = np.random.default_rng(seed)
    turns, qa = [], []
    for i, topic in enumerate(rng.permutation(TOPICS)[:6]):
        for text in rng.choice(FILLER, 2, replace=False):
            turns.append(("Ana", str(text)))
        turns.append(("Ana", f"What got you into {topic} lessons?"))
        turns.append(("Bo", f"Honestly, {REPLIES[(i + seed) % len(REPLIES)]}."))
        evidence = f"D1:{len(turns)}"
        qa.append(QA(f"What got Bo into {topic} lessons?", "x", (evidence,), 4))
    session = [Turn(f"D1:{i + 1}", 1, who, text, "1:00 pm on 8 May, 2023")
               for i, (who, text) in enumerate(turns)]
    return Conversation(f"c{seed}", ("Ana", "Bo"), {1: session}, qa, [])


@pytest.fixture(scope="module")
def groups():
    emb = HashingEmbedder()
    return {f"c{s}": evidence_groups([_conversation(s)], emb, pool=10) for s in range(5)}


def test_rows_mark_the_hits_that_hold_evidence(groups):
    g = groups["c0"][0]
    assert g.x.shape == (len(g.sources), len(FEATURES)) and g.y.sum() == 1
    assert g.sources[int(np.argmax(g.y))] == list(g.evidence)


def test_fitted_on_some_conversations_it_finds_the_replies_in_others(groups):
    train = [g for n in ("c0", "c1", "c2") for g in groups[n]]
    held = [g for n in ("c3", "c4") for g in groups[n]]
    model = fit_reranker(train, hidden=4, seed=0)
    assert isinstance(model, Reranker) and model.meta["rows"] == sum(len(g.y) for g in train)
    before, after = np.mean(recall_at_k(held, None, 1)), np.mean(recall_at_k(held, model, 1))
    assert before < 0.5 and after > before + 0.3
    assert recall_at_k(held, model, 10) == pytest.approx(recall_at_k(held, None, 10))


def test_cross_fitted_judges_each_conversation_by_a_model_that_never_saw_it(groups):
    held = {n: groups[n] for n in ("c0", "c1", "c2")}
    folds = {}
    study, final = cross_fitted(held, groups["c3"], {"other": groups["c4"]}, always_weight=2.0,
                                ks=(1,), hidden=4, on_fold=folds.__setitem__)
    assert final.meta["rows"] == sum(len(g.y) for n in ("c0", "c1", "c2", "c3") for g in groups[n])
    # each held-out conversation's reranker was fitted on the other two and the always-rows only
    assert set(folds) == {"c0", "c1", "c2"}
    for name, model in folds.items():
        assert model.meta["rows"] == sum(len(g.y) for n in ("c0", "c1", "c2", "c3")
                                         if n != name for g in groups[n])
    assert set(study["by_source"]) == {"c0", "c1", "c2", "other"}
    pooled = study["held_out_pooled"]
    assert pooled["questions"] == sum(len(v) for v in held.values())
    assert pooled["reranked_recall@1"] > pooled["current_recall@1"]


def test_one_class_rows_are_refused(groups):
    empty = [EvidenceGroup(g.conversation, g.category, ("D9:9",), g.sources, g.x)
             for g in groups["c0"]]  # evidence no hit holds
    with pytest.raises(ValueError, match="one class"):
        fit_reranker(empty)


def test_dated_rows_read_the_turns_as_the_agents_store_them():
    """`dated=True` writes each turn with its session's day first, as `Dialogue.stream` gives it
    to the agents: the length feature grows by the prefix and the evidence is still found."""
    emb, conv = HashingEmbedder(), _conversation(0)
    plain = evidence_groups([conv], emb, pool=10)
    dated = evidence_groups([conv], emb, pool=10, dated=True)
    length = FEATURES.index("log_length")
    prefix = len("[8 May 2023] ")
    compared = 0
    for p, d in zip(plain, dated, strict=True):
        assert d.evidence == p.evidence and d.y.sum() == p.y.sum() == 1
        got = {tuple(s): x for s, x in zip(d.sources, d.x[:, length], strict=True)}
        for s, x in zip(p.sources, p.x[:, length], strict=True):
            if tuple(s) in got:
                assert np.expm1(got[tuple(s)]) == pytest.approx(np.expm1(x) + prefix)
                compared += 1
    assert compared >= len(plain)  # the same turns were found both ways
