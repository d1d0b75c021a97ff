"""Initial edges by a scorer: the similarity rule as a scorer changes nothing, a learned scorer
picks and weighs its top m, the file round-trips and a broken file is a clear error."""

from __future__ import annotations

import numpy as np
import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import CorruptFileError
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.edge_scorer import (
    FEATURES,
    AttentionEdgeScorer,
    RecordingEdgeScorer,
    SimilarityEdgeScorer,
    edge_features,
)

_WORDS = ["glarb", "zwoorp", "carrot", "turnip", "rainy", "sunny", "copper", "flute", "badger",
          "heron", "wool", "silk", "marble", "chisel", "otter", "beetle", "foggy", "windy",
          "hammer", "drum"]
TEXTS = [" ".join(_WORDS[(i * 7 + j * 3) % len(_WORDS)] for j in range(5)) + f" {i}"
         for i in range(60)]


def _edges(mem):
    return sorted((u, v, round(d["weight"], 6), d["kind"]) for u, v, d in mem.graph.edges(data=True))


def _params(dim=384, overlap_weight=8.0, bias=-4.0):
    """A hand-set scorer: no attention term, the logit rises with content-word overlap."""
    u = np.zeros((1, len(FEATURES)), dtype=np.float32)
    u[0, FEATURES.index("overlap")] = 1.0
    return {"wq": np.zeros((2, dim)), "wk": np.zeros((2, dim)), "u": u, "b": np.zeros(1),
            "v": np.array([overlap_weight]), "c": np.array(bias)}


@pytest.mark.parametrize("many", [False, True])
def test_the_similarity_rule_as_a_scorer_builds_the_same_graph(many):
    plain = LiquidMemory(MemoryConfig(), HashingEmbedder())
    scored = LiquidMemory(MemoryConfig(), HashingEmbedder(), edge_scorer=SimilarityEdgeScorer())
    for mem in (plain, scored):
        if many:
            mem.observe_many([{"text": t, "block": "semantic"} for t in TEXTS])
        else:
            for t in TEXTS:
                mem.observe(t, block="semantic")
    assert _edges(plain) == _edges(scored) and len(_edges(plain)) > 20


def test_a_learned_scorer_keeps_its_top_m_above_the_floor():
    cfg = MemoryConfig().replaced(attention_top_m=2)
    mem = LiquidMemory(cfg, HashingEmbedder(), edge_scorer=AttentionEdgeScorer(_params()))
    for t in TEXTS[:30]:
        mem.observe(t, block="semantic")
    similarity = [d for _, _, d in mem.graph.edges(data=True) if d["kind"] == "similarity"]
    assert similarity
    per_node: dict[int, int] = {}
    for u, v, d in mem.graph.edges(data=True):
        if d["kind"] == "similarity":
            newer = max(u, v)
            per_node[newer] = per_node.get(newer, 0) + 1
    assert max(per_node.values()) <= 2
    assert all(cfg.engram.min_edge_weight <= d["weight"] <= 1.0 for d in similarity)
    # a scorer that rejects everything leaves the new nodes without similarity edges
    none = LiquidMemory(MemoryConfig(), HashingEmbedder(),
                        edge_scorer=AttentionEdgeScorer(_params(overlap_weight=0.0, bias=-20)))
    for t in TEXTS[:10]:
        none.observe(t, block="semantic")
    assert not [d for _, _, d in none.graph.edges(data=True) if d["kind"] == "similarity"]


def test_recording_scorer_sees_features_and_vectors():
    rec = RecordingEdgeScorer()
    mem = LiquidMemory(MemoryConfig(), HashingEmbedder(), edge_scorer=rec)
    for t in TEXTS[:12]:
        mem.observe(t, block="semantic")
    new_id, ids, feats, vec, vecs = rec.records[-1]
    assert feats.shape == (len(ids), len(FEATURES)) and vecs.shape == (len(ids), vec.shape[0])
    assert np.allclose(edge_features(mem, new_id, [(i, f[0]) for i, f in zip(ids, feats, strict=True)])[:, 2],
                       feats[:, 2])


def test_scorer_file_round_trips_and_a_broken_file_is_a_clear_error(tmp_path):
    scorer = AttentionEdgeScorer(_params())
    path = scorer.save(tmp_path / "edge.npz")
    again = AttentionEdgeScorer.load(path)
    assert again.n_parameters == scorer.n_parameters
    assert all(np.array_equal(again.params[k], scorer.params[k]) for k in scorer.params)
    path.write_bytes(b"not a numpy file")
    with pytest.raises(CorruptFileError, match="edge.npz") as err:
        AttentionEdgeScorer.load(path)
    assert "notebook 09" in err.value.fix
    with pytest.raises(CorruptFileError, match="no edge scorer"):
        AttentionEdgeScorer.load(tmp_path / "missing.npz")
