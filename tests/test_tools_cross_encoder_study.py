"""The cross-encoder study (tools/cross_encoder_study.py) trains on every evidence turn against
pool negatives only, reads the cross-encoder's columns off the right turns, and ranks by them."""

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "cross_encoder_study",
    Path(__file__).resolve().parents[1] / "tools" / "cross_encoder_study.py")
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)

TEXTS = ["Ana: hi", "Tim: what did you paint?", "Ana: a sunrise over the lake", "Tim: nice"]


def _question(at: list[int], gold: list[int]) -> dict:
    return {"conversation": "c", "category": 4, "question": "What did Ana paint?",
            "evidence": tuple(f"D1:{g + 1}" for g in gold), "gold_at": gold,
            "sources": [[f"D1:{i + 1}"] for i in at], "at": at,
            "x": np.zeros((len(at), 11)), "texts": TEXTS}


def test_pairs_hold_every_evidence_turn_and_only_pool_negatives():
    """The evidence turn outside the pool is still a positive; no positive is a negative."""
    qs, ps, ys = study.pairs([_question([1, 3], [2])], negatives=5, seed=0)
    assert sorted(zip(ps, ys, strict=True)) == sorted([(TEXTS[2], 1.0), (TEXTS[1], 0.0),
                                                       (TEXTS[3], 0.0)])
    assert set(qs) == {"What did Ana paint?"}
    _, ps, ys = study.pairs([_question([0, 1, 2, 3], [2])], negatives=2, seed=0)
    assert ys.count(1.0) == 1 and ys.count(0.0) == 2 and TEXTS[2] not in ps[1:]


class _Model:
    """A cross-encoder whose logit is the turn's position, as the study calls it."""

    def predict(self, pairs, batch_size, activation_fn, show_progress_bar):
        assert activation_fn is None
        return np.array([float(TEXTS.index(p)) for _, p in pairs])


def test_ce_columns_read_the_turn_the_one_before_and_the_one_after():
    cols = study.ce_columns(_Model(), _question([0, 2, 3], [2]), batch=8)
    assert cols.tolist() == [[0.0, 0.0, 1.0], [2.0, 1.0, 3.0], [3.0, 2.0, 0.0]]


def test_ranking_by_the_cross_encoder_alone_finds_what_it_scores_first():
    """`groups(only_ce=True)` with `_First` ranks the pool by the cross-encoder's own column."""
    from mags_lib.train.recall_reranker import recall_at_k

    q = _question([0, 1, 3, 2], [2])
    q["ce"] = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.5, 0, 0], [9.0, 0, 0]])
    assert recall_at_k(study.groups([q], True, only_ce=True), study._First(), 1) == [1.0]
    assert recall_at_k(study.groups([q], False), None, 1) == [0.0]
    assert study.groups([q], True)[0].x.shape == (4, 14)
