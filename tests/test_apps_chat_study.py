"""The chat study (apps/chat_study.py): a persona conversation told to the chat session by
session, closed and reopened between sessions, its questions asked after a last restart."""

from __future__ import annotations

import pytest

from mags_lib.apps.chat_study import chat_restart_study, replay
from mags_lib.conversations.persona import make_persona
from mags_lib.embed import HashingEmbedder
from mags_lib.llm import Completion


class Echo:
    """An answer model that repeats the memory line it was given last (the most relevant)."""

    name = "echo"

    def chat(self, messages, **kw):
        lines = [x[2:] for x in messages[0]["content"].splitlines() if x.startswith("- ")]
        return Completion(lines[-1] if lines else "I don't know.", finish_reason="stop")


class Fixed:
    def __init__(self, text):
        self.text, self.name, self.calls = text, "fixed", []

    def chat(self, messages, **kw):
        self.calls.append(messages[-1]["content"])
        return Completion(self.text, finish_reason="stop")


def _llms():
    return {"answer": Echo(), "ask": Fixed("<recall>\n</recall>"),
            "write": Fixed("<engram>\n</engram>")}


def test_a_persona_is_told_across_restarts_and_asked_after_the_last(tmp_path):
    conv = make_persona(10_001, "dev")
    llms = _llms()
    run = replay(conv, tmp_path / "mem", llms=llms, few_shot={}, embedder=HashingEmbedder())
    user = conv.speakers[0]
    said = [t for t in conv.turns() if t.speaker == user]
    assert run["restarts"] == len(conv.sessions) and run["user"] == user
    assert [w["said"] for w in run["writes"]] == [t.text for t in said]
    # every session's turns survived the restarts: one episodic node per distinct dated
    # message (a message said twice on one day merges)
    assert run["memory_nodes"] == len({(t.date, t.text) for t in said})
    # the write model read each turn dated and signed, as in a conversation
    first = said[0]
    assert f"{user}: {first.text}" in llms["write"].calls[0]
    assert first.date.split(" on ")[-1].replace(",", "") in llms["write"].calls[0]
    assert len(run["answers"]) == len(conv.qa)
    assert all(a["prediction"] for a in run["answers"])
    # questions are asked with their asker, never stored
    assert llms["ask"].calls and all(f"{user}: " in c for c in llms["ask"].calls)


def test_the_study_scores_the_replies_and_refuses_training_personas(tmp_path):
    report = chat_restart_study("dev", 1, workdir=tmp_path, llms=_llms(), few_shot={},
                                embedder=HashingEmbedder(), out=tmp_path / "r.json")
    scores = report["scores"]
    assert scores["n_current"] > 0 and 0.0 <= scores["current_accuracy"] <= 1.0
    changed = report["changed_facts"]  # the current questions about a fact that changed
    assert 0 < changed["n_current"] < scores["n_current"] and set(changed) >= {"stale_rate"}
    assert (tmp_path / "r.json").is_file()
    with pytest.raises(ValueError, match="never training"):
        chat_restart_study("train", 1, llms=_llms(), embedder=HashingEmbedder())
