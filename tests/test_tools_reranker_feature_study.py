"""The reranker feature study (tools/reranker_feature_study.py) reads each candidate feature off
the right neighbour, and its recall counts evidence in the scored top k."""

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "reranker_feature_study",
    Path(__file__).resolve().parents[1] / "tools" / "reranker_feature_study.py")
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)


def test_extra_row_reads_the_turn_its_neighbours_and_the_named_speaker():
    terms = [{"paint"}, {"paint", "lake"}, {"sunris"}]
    speakers = ["ana", "tim", "ana"]
    q = {"cos": np.array([0.1, 0.5, 0.9]), "terms": {"paint", "sunris"},
         "idf": {"paint": 1.0, "sunris": 3.0}, "total": 4.0, "named": {"tim"}, "tenth": 0.5}
    row = dict(zip(study.EXTRA, study.extra_row(1, q, terms, speakers), strict=True))
    assert row["next_cos"] == 0.9 and row["win_cos"] == 0.9
    assert row["next_ov"] == 0.75 and row["prev_ov"] == 0.25 and row["idf_ov"] == 0.25
    assert row["spk_named"] == 1.0 and row["other_named"] == 0.0 and row["top10_cos"] == 1.0
    first = dict(zip(study.EXTRA, study.extra_row(0, q, terms, speakers), strict=True))
    assert first["prev_ov"] == 0.0 and first["other_named"] == 1.0 and first["top10_cos"] == 0.0
    last = dict(zip(study.EXTRA, study.extra_row(2, q, terms, speakers), strict=True))
    assert last["next_cos"] == 0.0 and last["next_ov"] == 0.0  # no turn after the last


def test_recall_counts_evidence_in_the_scored_top_k():
    g = {"evidence": {"D1:3"}, "sources": [{"D1:1"}, {"D1:2"}, {"D1:3"}],
         "x": np.array([[3.0], [2.0], [1.0]]), "extra": np.zeros((3, len(study.EXTRA)))}
    assert study.recall([g], None, k=2) == [0.0]  # pool order: D1:3 is third
    assert study.recall([g], lambda rows: -rows[:, 0], k=2) == [1.0]  # scored: first
    assert study.recall([g], None, k=10**9) == [1.0]  # the pool's ceiling
