"""Supersession scored against gold updates: a right retirement, a wrong one, a missed one."""

from __future__ import annotations

from mags_lib.conversations.persona import make_persona
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.supersession import (
    gold_source_pairs,
    gold_write_pairs,
    predicted_pairs,
    supersession_scores,
    write_gold,
)
from mags_lib.memory import LiquidMemory


def test_scores_count_right_wrong_and_missed():
    mem = LiquidMemory(embedder=HashingEmbedder())
    for text in ["Hugo drives a Kia.", "Hugo drives a Volvo.", "Ana lives in Porto."]:
        mem.observe(text, block="semantic")
    assert predicted_pairs(mem) == [("Hugo drives a Kia.", "Hugo drives a Volvo.")]
    gold = [("Hugo drives a Kia.", "Hugo drives a Volvo."),
            ("Ana lives in Porto.", "Ana lives in Lisbon.")]
    out = supersession_scores(mem, gold)
    assert (out["precision"], out["recall"], out["correct"]) == (1.0, 0.5, 1)
    assert out["missed"] == [gold[1]] and out["false"] == []


def test_gold_writes_of_a_persona_through_the_defaults():
    conv = make_persona(10_000, "dev")
    mem = LiquidMemory(embedder=HashingEmbedder())
    write_gold(mem, conv)
    gold = gold_write_pairs(conv)
    out = supersession_scores(mem, gold)
    assert out["gold"] == len(gold) > 0 and out["predicted"] >= out["correct"] > 0


def test_raw_turns_are_scored_by_the_turns_they_came_from():
    conv = make_persona(10_001, "dev")
    gold = gold_source_pairs(conv)
    assert len(gold) == len(gold_write_pairs(conv)) > 0
    turns = {t.dia_id for t in conv.turns()}
    assert all(a in turns and b in turns and a != b for a, b in gold)
    mem = LiquidMemory(embedder=HashingEmbedder())
    mem.observe_many([{"text": t.text, "block": "semantic", "source": t.dia_id}
                      for t in conv.turns() if t.speaker == conv.speakers[0]])
    out = supersession_scores(mem, gold, by="source")
    assert all(a in turns and b in turns for a, b in out["false"])
    assert out["gold"] == len(gold) and 0 <= out["correct"] <= out["predicted"]
