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


def _rows(conversation: str, n: int, seed: int) -> list[dict]:
    """Questions whose one evidence turn sits anywhere in a pool of 15; the shipped features
    are noise, the first extra column marks the evidence."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        at = int(rng.integers(15))
        extra = np.zeros((15, len(study.EXTRA)))
        extra[at, 0] = 1.0
        rows.append({"conversation": conversation, "category": 4, "evidence": (f"D1:{at}",),
                     "sources": [[f"D1:{i}"] for i in range(15)],
                     "x": rng.normal(size=(15, 11)), "extra": extra})
    return rows


def test_cross_fit_judges_a_feature_the_way_the_shipped_reranker_was_judged():
    """Leave one conversation out through `recall_reranker.cross_fitted` with the study's
    fitter: a feature that marks the evidence lifts recall@5 to 1, the noise alone does not."""
    convs = {f"c{i}": _rows(f"c{i}", 30, i) for i in range(3)}
    train, dev = _rows("p", 20, 7), _rows("d", 20, 8)
    noise = study.cross_fit(convs, train, dev, [], "mlp", 3.0)
    marked = study.cross_fit(convs, train, dev, [0], "mlp", 3.0)
    assert marked["held_out@10"] == 1.0 and marked["dev_personas@5"] == 1.0
    assert noise["held_out@10"] < 0.9 and set(noise["by_conversation"]) == set(convs)
    assert study.cross_fit(convs, train, dev, [0], "gbm", 3.0)["dev_personas@5"] == 1.0
