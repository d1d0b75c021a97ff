"""The memory with the real embedder (all-MiniLM-L6-v2): the spec's rule-change example end to
end. Slow: loads the sentence-transformers model."""

from __future__ import annotations

import pytest

from mags_lib.memory import LiquidMemory

pytestmark = pytest.mark.slow


def test_rule_change_with_minilm(tmp_path):
    mem = LiquidMemory()  # default_embedder(), created on first use
    carrots = mem.observe("On rainy turns the purple glarb eats carrots.", block="semantic",
                          source="game1")
    zorp = mem.observe("The blue zorp sings at dawn.", block="semantic", source="game1")
    again = mem.observe("On rainy turns, the purple glarb eats carrots!", block="semantic",
                        source="game2")
    assert again == carrots and mem.node(carrots)["sources"] == ["game1", "game2"]
    stones = mem.observe("On rainy turns the purple glarb eats stones.", block="semantic",
                         source="game3")
    assert not mem.is_valid(carrots) and mem.is_valid(zorp) and mem.is_valid(stones)
    for turn in range(5):
        mem.observe(f"Turn {turn}: it rained and the glarb looked for food.", source=turn)
        mem.step()
    hits = mem.recall("What does the glarb eat when it rains?", k=5)
    assert hits[0].node_id == stones
    assert carrots not in {h.node_id for h in hits}
    assert [h.node_id for h in mem.history(stones)] == [stones, carrots]
    mem.save(tmp_path / "mem")
    loaded = LiquidMemory.load(tmp_path / "mem")
    assert [h.node_id for h in loaded.recall("glarb food in the rain", 3, learn=False)] == \
        [h.node_id for h in mem.recall("glarb food in the rain", 3, learn=False)]
