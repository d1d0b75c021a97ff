"""Pseudo-relevance feedback in recall (`RecallConfig.feedback_weight`, off by default)."""

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


@pytest.mark.parametrize("over", [{"feedback_weight": 1.5}, {"feedback_weight": -0.1},
                                  {"feedback_hits": 0}])
def test_out_of_range_feedback_settings_are_refused(over):
    with pytest.raises(ValueError, match=next(iter(over))):
        MemoryConfig.from_dict(over)
