"""The edge scorer study: examples labelled by need, a fit that learns them, a paired
comparison."""

from __future__ import annotations

import numpy as np
import pytest

from mags_lib.agents import MemoEmbedder
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation.edge_study import (
    classify_report,
    collect_edge_examples,
    compare_edge_scorers,
)
from mags_lib.memory.edge_scorer import FEATURES, AttentionEdgeScorer
from mags_lib.train.edge_scorer import EdgeScorerFitConfig, fit_edge_scorer


@pytest.fixture(scope="module")
def examples():
    emb = MemoEmbedder(HashingEmbedder())
    return collect_edge_examples("multi_hop", [100, 101], embedder=emb, smoke=True)


def test_examples_are_labelled_by_later_need(examples):
    ex, stats = examples
    n = stats["examples"]
    assert ex["new"].shape[0] == ex["cand"].shape[0] == ex["features"].shape[0] == n
    assert ex["features"].shape[1] == len(FEATURES)
    assert 0 < stats["positives"] < n and stats["two_fact_decisions"] > 0
    # needed pairs share words (alias statement and rule name the same creature)
    overlap = ex["features"][:, FEATURES.index("overlap")]
    assert overlap[ex["label"] == 1].mean() > overlap[ex["label"] == 0].mean()


def test_fit_learns_the_examples_and_refuses_one_label(examples):
    ex, _ = examples
    params, report = fit_edge_scorer(ex, EdgeScorerFitConfig(epochs=150))
    assert report["final_loss"] < report["first_loss"] and report["train_recall"] > 0.8
    ranking = classify_report(AttentionEdgeScorer(params), ex)
    assert ranking["auc_learned"] > 0.8
    with pytest.raises(MagsError, match="both labels"):
        fit_edge_scorer({**ex, "label": np.zeros_like(ex["label"])})


def test_compare_pairs_the_same_episodes(examples):
    ex, _ = examples
    params, _ = fit_edge_scorer(ex, EdgeScorerFitConfig(epochs=50))
    rows = compare_edge_scorers(AttentionEdgeScorer(params), ["multi_hop"], [0],
                                embedder=MemoEmbedder(HashingEmbedder()), smoke=True)
    (row,) = rows
    assert row["regime"] == "multi_hop" and row["n_seeds"] == 1 and row["n_decisions"] > 10
    assert -1.0 <= row["effect"] <= 1.0 and row["learned_edges"] > 0
