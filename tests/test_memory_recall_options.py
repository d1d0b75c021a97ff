"""Recall options off by default: pseudo-relevance feedback (`RecallConfig.feedback_weight`)
and diversity in the returned hits (`RecallConfig.hit_mmr_lambda`)."""

from __future__ import annotations

import numpy as np
import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.recall import feedback_query

TEXTS = ["tax forms paper",                  # shares nothing with the query or the match
         "otter river otter river swims",    # the query's match
         "swims swims daily pond"]           # shares a word with the match, none with the query


def _ranked(**over) -> list[str]:
    # dense only and no traversal, so only the query vector orders the hits
    cfg = MemoryConfig.from_dict({"lexical_weight": 0.0, "max_visited": 1, **over})
    mem = LiquidMemory(cfg, embedder=HashingEmbedder())
    mem.observe_many([{"text": t, "block": "semantic"} for t in TEXTS])
    return [h.text for h in mem.recall("otter river", 3, learn=False)]


def test_feedback_pulls_in_what_the_best_match_is_about():
    off = _ranked()
    assert off[0] == TEXTS[1] and off.index(TEXTS[0]) < off.index(TEXTS[2])
    assert _ranked(feedback_weight=0.0, feedback_hits=1) == off  # 0 is off
    on = _ranked(feedback_weight=1.0, feedback_hits=1)
    assert on[:2] == [TEXTS[1], TEXTS[2]]


def test_feedback_query_is_the_unit_rocchio_vector():
    mem = LiquidMemory(MemoryConfig(), embedder=HashingEmbedder())
    ids = [mem.observe(t, block="semantic") for t in TEXTS]
    q = HashingEmbedder().encode(["otter river"])[0]
    moved = feedback_query(mem, q, ids[1:], 0.5)
    expected = q + 0.5 * HashingEmbedder().encode(TEXTS[1:]).mean(axis=0)
    assert np.allclose(moved, expected / np.linalg.norm(expected), atol=1e-5)
    assert np.linalg.norm(moved) == pytest.approx(1.0, abs=1e-5)
    assert feedback_query(mem, q, [], 0.5) is q


def _hits(texts, query, **over) -> list[str]:
    cfg = MemoryConfig.from_dict({"lexical_weight": 0.0, "max_visited": 1, **over})
    mem = LiquidMemory(cfg, embedder=HashingEmbedder())
    mem.observe_many([{"text": t, "block": "semantic"} for t in texts])
    return [h.text for h in mem.recall(query, 3, learn=False)]


def test_diversity_lets_a_different_hit_pass_a_near_copy_of_the_best():
    texts = ["otter river swims", "otter river swims today", "otter den", "tax forms paper"]
    plain = _hits(texts, "otter river")
    assert plain == texts[:3]
    assert _hits(texts, "otter river", hit_mmr_lambda=1.0) == plain
    assert _hits(texts, "otter river", hit_mmr_lambda=0.6) == [texts[0], texts[2], texts[1]]
    # far enough from relevance, the unrelated fact beats the near copy too
    assert _hits(texts, "otter river", hit_mmr_lambda=0.5) == [texts[0], texts[2], texts[3]]
    # k at least the number of ranked hits: nothing to choose, the plain ranking
    cfg = MemoryConfig.from_dict({"lexical_weight": 0.0, "max_visited": 1, "hit_mmr_lambda": 0.5})
    mem = LiquidMemory(cfg, embedder=HashingEmbedder())
    mem.observe_many([{"text": t, "block": "semantic"} for t in texts])
    assert [h.text for h in mem.recall("otter river", 10, learn=False)][:3] == plain


@pytest.mark.parametrize("over", [{"feedback_weight": 1.5}, {"feedback_weight": -0.1},
                                  {"feedback_hits": 0}, {"hit_mmr_lambda": 1.2}])
def test_out_of_range_feedback_settings_are_refused(over):
    with pytest.raises(ValueError, match=next(iter(over))):
        MemoryConfig.from_dict(over)
