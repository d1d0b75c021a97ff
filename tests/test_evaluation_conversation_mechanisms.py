"""Mechanism ablations on conversations: an agent reads with one mechanism off, paired by question."""

from __future__ import annotations

import pytest

from mags_lib.conversations.persona import make_persona
from mags_lib.conversations.types import QA
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation.conversation_mechanisms import (
    ConversationMechanismsConfig,
    ablation_table,
    mechanisms_markdown,
    paired_effects,
    separated_effects,
)
from mags_lib.evaluation.conversation_qa import (
    ConversationEvalConfig,
    reader,
    run_conversation_eval,
)
from mags_lib.llm.base import Completion


class Unparsable:
    """An ask model whose blocks never parse: the loop falls back to recalling the question."""

    name = "unparsable"

    def chat(self, messages, **kw):
        return Completion("no block here", finish_reason="stop")


class LastLineReader:
    name = "last-line"

    def chat(self, messages, **kw):
        lines = messages[-1]["content"].split("\n\nQuestion:")[0].splitlines()[1:]
        text = "I don't know" if lines in ([], ["(nothing)"]) else lines[-1].split("] ", 1)[-1]
        return Completion(text, finish_reason="stop")


ROLES = {"ask": Unparsable()}


def test_an_ablated_name_reads_with_that_mechanism_off():
    conv = make_persona(2, "train")
    cfg = ConversationEvalConfig(agents=[], k=3)
    full = reader("mags_verbatim", conv, LastLineReader(), cfg, HashingEmbedder(), ROLES)
    flat = reader("mags_verbatim/no_traversal", conv, LastLineReader(), cfg, HashingEmbedder(),
                  ROLES)
    kept = reader("mags_verbatim/no_contradiction", conv, LastLineReader(), cfg,
                  HashingEmbedder(), ROLES)
    assert full.memory.config.flat()["max_visited"] > 1
    assert flat.memory.config.flat()["max_visited"] == 1
    assert kept.memory.config.flat()["merge_threshold"] == 0.99
    with pytest.raises(MagsError, match="cannot switch off"):
        reader("static_rag/no_hebbian", conv, LastLineReader(), cfg, HashingEmbedder(), ROLES)


def test_contradiction_off_keeps_stale_facts_and_the_effect_is_paired_by_question():
    convs = [make_persona(s, "train") for s in (2, 3)]
    names = ["mags_verbatim", "mags_verbatim/no_contradiction"]
    cfg = ConversationEvalConfig(agents=names, k=3)
    qa = run_conversation_eval(convs, LastLineReader(), cfg, embedder=HashingEmbedder(),
                               roles=ROLES)
    qas = {(c.sample_id, i): q for c in convs for i, q in enumerate(c.qa)}
    table = ablation_table(qa, ["mags_verbatim"], ["contradiction", "hebbian"], qas)
    assert [t["mechanism"] for t in table] == ["contradiction"]  # hebbian was not run
    t = table[0]
    sup_on, sup_off = t["full"]["supersession"], t["ablated"]["supersession"]
    assert sup_on["predicted"] > sup_off["predicted"] == 0
    current = t["effects"]["current"]
    n_current = sum(1 for c in convs for q in c.qa if q.kind == "current")
    assert current["n"] == n_current and current["resampled"] == "conversations"
    assert current["effect"] == pytest.approx(current["full"] - current["ablated"])
    lo, hi = current["ci95"]
    assert lo <= current["effect"] <= hi
    assert t["effects"]["stale"]["ablated"] >= t["effects"]["stale"]["full"]
    text = mechanisms_markdown({"reader": "a fake", "persona": {
        "split": "train", "conversations": [c.sample_id for c in convs], "ablations": table}})
    assert "| mags_verbatim | contradiction |" in text and "→" in text


def test_effects_are_full_minus_ablated_with_an_interval_over_questions_for_one_conversation():
    qa = QA("Where do I live now?", "Lisbon", (), 4, kind="current", stale=("Porto",))
    qas = {("c", i): qa for i in range(4)}
    rows = [{"agent": a, "conversation": "c", "question": i, "prediction": p, "f1": f}
            for i in range(4)
            for a, p, f in (("m", "Lisbon", 1.0), ("m/no_x", "Porto" if i < 2 else "Lisbon",
                                                    0.0 if i < 2 else 1.0))]
    e = paired_effects(rows, qas, "m", "m/no_x")
    assert e["current"]["full"] == 1.0 and e["current"]["ablated"] == 0.5
    assert e["current"]["effect"] == 0.5 and e["stale"]["effect"] == -0.5
    assert e["f1"]["resampled"] == "questions" and e["f1"]["n"] == 4
    assert "earlier" not in e and "recall@5" not in e
    result = {"persona": {"ablations": [{"agent": "m", "mechanism": "x", "effects": e}]}}
    assert all("persona m without x" in s for s in separated_effects(result))


def test_config_names_only_known_mechanisms_and_smoke_shrinks():
    with pytest.raises(MagsError, match="unknown mechanism"):
        ConversationMechanismsConfig(mechanisms=["telepathy"])
    small = ConversationMechanismsConfig(smoke=True).resolved()
    assert small.personas == 1 and small.agents == ["mags"] and small.locomo_agents == []
    assert small.mechanisms == ConversationMechanismsConfig().mechanisms
