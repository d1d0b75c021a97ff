"""Evidence recall over a conversation: the right turn comes back, the metric and its interval."""

from __future__ import annotations

import math

import pytest

from mags_lib.conversations.types import QA, Conversation, Turn, turn_text
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.evidence_recall import (
    bootstrap_by_conversation,
    conversation_rows,
    recall_at,
    summarize,
)

FACTS = ["I adopted a grey cat called Pixel.", "My brother Tomas works as a pilot.",
         "We went hiking near the glacier in June.", "I started learning the cello.",
         "My landlord raised the rent again.", "The bakery on our street closed."]


def _conv(sample_id: str) -> Conversation:
    turns = [Turn(f"D1:{i + 1}", 1, "Ana" if i % 2 == 0 else "Bo", text, "8 May, 2023")
             for i, text in enumerate(FACTS)]
    qa = [QA("What is the name of Ana's cat?", "Pixel", ("D1:1",), 4),
          QA("What instrument did Bo start learning?", "cello", ("D1:4",), 4),
          QA("What does Tomas do for work?", "pilot", ("D1:2",), 1),
          QA("Where was the photo taken?", None, (), 5)]
    return Conversation(sample_id, ("Ana", "Bo"), {1: turns}, qa, [])


@pytest.mark.parametrize("retriever", ["memory", "bm25"])
def test_the_evidence_turn_comes_back(retriever):
    rows = conversation_rows(_conv("c1"), retriever=retriever, embedder=HashingEmbedder(),
                             ks=(1, 3))
    assert len(rows) == 3  # the question without evidence is not scored
    assert [r["recall@3"] for r in rows] == [1.0, 1.0, 1.0]
    assert rows[0]["top"][0] == "D1:1"


def test_recall_at_and_turn_text():
    assert recall_at(["D1:1"], ["D1:1", "D1:2"]) == 0.5
    assert math.isnan(recall_at(["D1:1"], []))
    t = Turn("D2:3", 2, "Bo", "Look!", "x", caption="a dog on a beach")
    assert turn_text(t) == "Bo: Look! [shares a photo: a dog on a beach]"


def test_summary_per_category_and_bootstrap_over_conversations():
    rows = [{"conversation": c, "category": cat, "recall@5": v, "recall@10": v}
            for c, cat, v in [("a", 4, 1.0), ("a", 4, 1.0), ("b", 1, 0.0), ("b", 4, 0.0)]]
    out = summarize(rows)
    assert out["all"]["recall@5"] == 0.5 and out["4 single-hop"]["n"] == 3
    lo, hi = out["all"]["recall@5_ci95"]
    assert 0.0 <= lo < 0.5 < hi <= 1.0
    assert bootstrap_by_conversation(rows[:2], "recall@5") == (None, None)


def test_unknown_retriever_is_refused():
    with pytest.raises(ValueError, match="unknown retriever"):
        conversation_rows(_conv("c"), retriever="dense")


def test_context_sweep_measures_every_value_and_names_the_best():
    from mags_lib.conversations.persona import persona_set
    from mags_lib.embed import HashingEmbedder
    from mags_lib.evaluation.evidence_recall import context_sweep, sweep_markdown

    sources = {"a": persona_set("dev", 1), "b": persona_set("dev", 2)[1:]}
    sweep = context_sweep(sources, HashingEmbedder(), values=(0, 2))
    assert sweep["values"] == [0, 2] and set(sweep["by_value"]) == {"0", "2"}
    assert set(sweep["by_value"]["0"]) == {"a", "b"}
    mean = {n: (sweep["by_value"][str(n)]["a"]["all"]["recall@10"]
                + sweep["by_value"][str(n)]["b"]["all"]["recall@10"]) / 2 for n in (0, 2)}
    assert mean[0] != mean[2]  # the context changes what is found
    top = max(mean.values())
    assert sweep["best"] == min(n for n in (0, 2) if mean[n] >= top - 0.01)
    assert sweep["mean_recall@10"] == {str(n): mean[n] for n in (0, 2)}
    everything = context_sweep(sources, HashingEmbedder(), values=(0, 2), margin=1.0)
    assert everything["best"] == 0  # within a margin of 1 every value ties: the smallest
    text = sweep_markdown(sweep)
    assert f"| {sweep['best']} (chosen) |" in text and text.count("\n") == 3
    assert "a recall@10 (95% CI)" in text and "b recall@5" in text


def _stem_conv() -> Conversation:
    """The evidence says "painted"; the question asks about "painting": BM25 matches the two
    only over stems, and the hashing embedder, a bag of words, does not match them at all."""
    texts = ["I painted a lighthouse after visiting the coast.", "The weather was grey.",
             "My neighbour plays drums at night.", "We ordered noodles for dinner."]
    turns = [Turn(f"D1:{i + 1}", 1, "Ana" if i % 2 == 0 else "Bo", t, "8 May, 2023")
             for i, t in enumerate(texts)]
    qa = [QA("What inspired Ana's painting?", "the coast", ("D1:1",), 4),
          QA("What does the neighbour play?", "drums", ("D1:3",), 4)]
    return Conversation("stem", ("Ana", "Bo"), {1: turns}, qa, [])


def test_settings_sweep_measures_every_setting_and_applies_its_rule():
    from mags_lib.evaluation.evidence_recall import settings_markdown, settings_sweep

    sources = {"stems": [_stem_conv()], "facts": [_conv("c1")]}
    settings = {"stem": {"lexical_stem": True}, "dense": {"lexical_weight": 0.0}}
    sweep = settings_sweep(sources, HashingEmbedder(), settings, base={}, min_gain=0.0)
    assert list(sweep["settings"]) == ["current", "stem", "dense"]
    r1 = {name: sweep["by_setting"][name]["stems"]["all"]["recall@5"] for name in sweep["settings"]}
    top1 = {name: conversation_rows(_stem_conv(), embedder=HashingEmbedder(), ks=(1,),
                                    config=_config(over))[0]["recall@1"]
            for name, over in [("current", {}), ("stem", {"lexical_stem": True})]}
    assert top1 == {"current": 0.0, "stem": 1.0}  # only the stems rank the painting first
    assert r1["current"] == r1["stem"] == 1.0  # with four turns, all come back at k = 5
    means = sweep["mean_recall@10"]
    assert sweep["best"] in sweep["eligible"] and means[sweep["best"]] == max(
        means[n] for n in sweep["eligible"])
    assert sweep["gain"] == means[sweep["best"]] - means["current"]
    assert sweep["adopt"] == (sweep["best"] != "current" and sweep["gain"] >= 0.0)
    strict = settings_sweep(sources, HashingEmbedder(), settings, base={}, min_gain=1.0)
    assert strict["adopt"] is False  # a gain of a whole point of recall is never reached
    text = settings_markdown(sweep)
    assert text.count("\n") == 4 and "| current" in text and "(chosen)" in text


def _config(over):
    from mags_lib.memory import MemoryConfig

    return MemoryConfig.from_dict(over)
