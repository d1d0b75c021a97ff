"""Conversation QA: agents read the turns, answer from their lines, and are scored apart."""

from __future__ import annotations

import pytest

from mags_lib.conversations.persona import make_persona
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.conversation_qa import (
    ConversationEvalConfig,
    question_sample,
    run_conversation_eval,
    turn_observations,
)
from mags_lib.llm.base import Completion


class LastLineReader:
    """An answer model that repeats the most relevant memory line (the last), or abstains."""

    name = "last-line"

    def chat(self, messages, **kw):
        memory = messages[-1]["content"].split("\n\nQuestion:")[0]
        lines = memory.splitlines()[1:]
        text = "I don't know" if lines in ([], ["(nothing)"]) else lines[-1].split("] ", 1)[-1]
        return Completion(text, finish_reason="stop")


def test_turns_become_dated_observations():
    conv = make_persona(1, "train")
    obs = turn_observations(conv)
    assert len(obs) == sum(len(t) for t in conv.sessions.values())
    assert obs[0].text.startswith("[") and f"] {conv.speakers[0]}: " in obs[0].text
    assert not obs[0].legal_actions and [o.turn for o in obs] == list(range(len(obs)))


def test_gold_writes_beat_bare_and_the_summary_says_so():
    convs = [make_persona(s, "train") for s in (2, 3)]
    cfg = ConversationEvalConfig(agents=["bare", "static_rag", "gold_writes"], k=3)
    out = run_conversation_eval(convs, LastLineReader(), cfg, embedder=HashingEmbedder())
    s = out["summary"]
    assert s["bare"]["f1"] == 0.0 and s["bare"]["abstention_answerable"] == 1.0
    assert s["gold_writes"]["f1"] > s["bare"]["f1"] and s["gold_writes"]["upper_bound"]
    gold, bare = s["gold_writes"]["persona"], s["bare"]["persona"]
    assert gold["current_accuracy"] > bare["current_accuracy"] == 0.0
    assert gold["earlier_accuracy"] > 0.0  # superseded facts are shown, marked
    assert any("(no longer true)" in line for r in out["rows"] for line in r["lines"])
    assert s["static_rag"]["memory_size_mean"] > s["gold_writes"]["memory_size_mean"]
    row = next(r for r in out["rows"] if r["agent"] == "gold_writes" and r["kind"] == "current")
    assert row["lines"] and row["prediction"] and "f1" in row
    assert {r["agent"] for r in out["rows"]} == {"bare", "static_rag", "gold_writes"}


def test_question_sample_is_seeded_and_in_order():
    conv = make_persona(4, "train")
    cfg = ConversationEvalConfig(max_questions=5, seed=1)
    picked = question_sample(conv, cfg)
    assert picked == sorted(picked) and len(picked) == 5 and picked == question_sample(conv, cfg)
    assert question_sample(conv, ConversationEvalConfig()) == list(range(len(conv.qa)))


def test_config_is_checked():
    with pytest.raises(ValueError):
        ConversationEvalConfig(k=0)
    with pytest.raises(ValueError):
        ConversationEvalConfig(max_questions=0)


def test_reading_records_write_counts_and_validity():
    from mags_lib.evaluation.conversation_qa import writing_summary

    reads = [{"counts": {"calls": 4, "add": 3, "none": 1, "lines": 6, "valid_lines": 4},
              "seconds_per_turn": 0.5},
             {"counts": {"calls": 2, "update": 2, "lines": 2, "valid_lines": 2},
              "seconds_per_turn": 1.5}]
    out = writing_summary(reads)
    assert out["counts"]["calls"] == 6 and out["validity"] == 6 / 8
    assert out["seconds_per_turn"] == 1.0
    assert writing_summary([{"counts": {}, "seconds_per_turn": 0.1}])["validity"] is None
