"""Recall's learned reranker (`RecallConfig.reranker`, memory/rerank.py): off by default, reorders
the ranked pool by its features, saved as JSON, refuses a bad file with the fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.rerank import FEATURES, Reranker, load_reranker, pool_features

TURNS = ["Ana: What inspired your painting of the lake?",
         "Bo: The sunset I saw in June, all orange.",
         "Ana: I filed my tax forms today.",
         "Bo: Good, taxes are boring."]


def _after_a_question(path) -> str:
    """A reranker that trusts one feature: the episode before ends with '?'."""
    w = np.zeros((1, len(FEATURES)))
    w[0, FEATURES.index("prev_question")] = 1.0
    Reranker(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), w, [0.0], [5.0], -2.0).save(path)
    return str(path)


def _memory(**over) -> LiquidMemory:
    mem = LiquidMemory(MemoryConfig.from_dict({"max_visited": 1, **over}),
                       embedder=HashingEmbedder())
    mem.observe_many([{"text": t, "source": f"D1:{i + 1}", "block": "episodic"}
                      for i, t in enumerate(TURNS)])
    return mem


def test_off_by_default_and_a_reranker_lifts_the_reply_below_a_question(tmp_path):
    assert MemoryConfig().recall.reranker == ""
    query = "what inspired the painting of the lake"
    plain = _memory().recall(query, 2, learn=False)
    assert plain[0].text == TURNS[0]
    assert [h.text for h in _memory(rerank_pool=3).recall(query, 2, learn=False)] == [
        h.text for h in plain]  # the pool alone changes nothing
    hits = _memory(reranker=_after_a_question(tmp_path / "r.json")).recall(query, 2, learn=False)
    assert hits[0].text == TURNS[1] and hits[0].sources == ["D1:2"]
    assert all(0.0 <= h.score <= 1.0 for h in hits) and hits[0].score > hits[1].score


def test_episodic_scope_reorders_the_turns_among_their_places_and_leaves_the_facts(tmp_path):
    query = "what inspired the painting of the lake"
    rr = _after_a_question(tmp_path / "r.json")

    def with_facts(**over):
        mem = _memory(**over)
        for text in ("Ana painted the lake in oil.", "Bo likes orange sunsets in June."):
            mem.observe(text, block="semantic")
        return mem

    plain = with_facts().recall(query, 6, learn=False)
    scoped = with_facts(reranker=rr, rerank_blocks="episodic").recall(query, 6, learn=False)
    assert [h.score for h in scoped] == [h.score for h in plain]  # every place keeps its score
    assert [h.block for h in scoped] == [h.block for h in plain]
    assert [h.text for h in scoped if h.block == "semantic"] == [
        h.text for h in plain if h.block == "semantic"]
    turns = [h.text for h in scoped if h.block == "episodic"]
    assert [h.text for h in plain if h.block == "episodic"][0] == TURNS[0]
    assert turns[0] == TURNS[1] and sorted(turns) == sorted(
        h.text for h in plain if h.block == "episodic")
    everything = with_facts(reranker=rr).recall(query, 6, learn=False)
    assert [h.text for h in everything] != [h.text for h in scoped]  # "all" moves the facts
    facts_only = LiquidMemory(MemoryConfig.from_dict(
        {"max_visited": 1, "reranker": rr, "rerank_blocks": "episodic"}), embedder=HashingEmbedder())
    bare = LiquidMemory(MemoryConfig.from_dict({"max_visited": 1}), embedder=HashingEmbedder())
    for mem in (facts_only, bare):
        for text in ("Ana painted the lake in oil.", "Bo likes orange sunsets in June.",
                     "Is the lake cold?", "The lake is cold in June."):
            mem.observe(text, block="semantic")
    assert ([(h.text, h.score) for h in facts_only.recall(query, 4, learn=False)]
            == [(h.text, h.score) for h in bare.recall(query, 4, learn=False)])
    with pytest.raises(Exception, match="rerank_blocks"):
        MemoryConfig.from_dict({"rerank_blocks": "turns"})


def test_features_see_neighbours_in_time_and_not_for_facts():
    mem = _memory()
    fact = mem.observe("Bo saw an orange sunset in June.", block="semantic")
    hits, x = pool_features(mem, "what inspired the painting of the lake", 10)
    assert x.shape == (len(hits), len(FEATURES)) and np.all(np.isfinite(x))
    row = {h.text: x[i] for i, h in enumerate(hits)}
    col = {name: i for i, name in enumerate(FEATURES)}
    assert row[TURNS[1]][col["prev_question"]] == 1.0
    assert row[TURNS[0]][col["is_question"]] == 1.0
    assert row[TURNS[1]][col["prev_score"]] == pytest.approx(
        next(h.score for h in hits if h.text == TURNS[0]))
    fact_row = row[mem.graph.nodes[fact]["text"]]
    assert fact_row[col["prev_score"]] == fact_row[col["next_score"]] == 0.0


def test_pool_features_refuse_a_memory_that_already_reranks(tmp_path):
    mem = _memory(reranker=_after_a_question(tmp_path / "r.json"))
    with pytest.raises(MagsError, match="reranker=''"):
        pool_features(mem, "painting", 10)


def test_saved_reranker_gives_the_same_probabilities(tmp_path):
    rng = np.random.default_rng(0)
    r = Reranker(rng.normal(size=len(FEATURES)), rng.uniform(0.5, 2, size=len(FEATURES)),
                 rng.normal(size=(3, len(FEATURES))), rng.normal(size=3), rng.normal(size=3),
                 0.1, {"note": "test"})
    back = Reranker.load(r.save(tmp_path / "r.json"))
    x = rng.normal(size=(7, len(FEATURES)))
    assert np.allclose(back.probabilities(x), r.probabilities(x)) and back.meta == {"note": "test"}


@pytest.mark.parametrize("text", ["{not json", json.dumps({"features": ["score"]}),
                                  json.dumps({"features": list(FEATURES), "mean": [0.0]})])
def test_a_broken_reranker_file_is_refused_with_its_path(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(CorruptFileError, match="bad.json") as err:
        Reranker.load(path)
    assert "retrain" in err.value.fix
    with pytest.raises(MagsError, match="not found"):
        Reranker.load(tmp_path / "missing.json")


def test_config_checks_and_the_shipped_reranker():
    with pytest.raises(Exception, match="reranker"):
        MemoryConfig.from_dict({"reranker": 3})
    with pytest.raises(Exception, match="rerank_pool"):
        MemoryConfig.from_dict({"rerank_pool": 0})
    shipped = load_reranker("dialogue")
    assert shipped.meta["features"] == list(FEATURES) and np.isfinite(shipped.c)
    assert shipped.meta["trained_on"]["locomo"] == ["conv-26", "conv-30", "conv-41", "conv-42",
                                                    "conv-43"]  # LoCoMo's training split only


def test_a_saved_memory_keeps_its_reranker(tmp_path):
    mem = _memory(reranker="dialogue", rerank_pool=20)
    mem.save(tmp_path / "m")
    back = LiquidMemory.load(tmp_path / "m", embedder=HashingEmbedder())
    assert back.config.recall.reranker == "dialogue" and back.config.recall.rerank_pool == 20
    query = "what inspired the painting"
    assert [h.text for h in back.recall(query, 3, learn=False)] == [
        h.text for h in mem.recall(query, 3, learn=False)]
