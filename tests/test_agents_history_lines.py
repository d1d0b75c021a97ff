"""Recalled facts with their earlier versions (agents/history_lines.py), as the closed loop
shows them to the answer model when a task dates its turns."""

from __future__ import annotations

import pytest

from mags_lib.actions import EngramAdd, EngramUpdate
from mags_lib.agents.history_lines import with_history
from mags_lib.agents.loop import LoopConfig, merged_hits
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.memory import LiquidMemory

DAYS = {"turn:1": "8 May 2023", "turn:5": "2 June 2023"}


def _memory() -> LiquidMemory:
    m = LiquidMemory(embedder=HashingEmbedder())
    m.apply([EngramAdd("semantic", "Ana lives in Porto.")], source="turn:1")
    m.step()
    report = m.apply([EngramUpdate("semantic", "Ana lives in Lisbon.")], source="turn:5")
    assert report.superseded  # the update replaced Porto
    m.step()
    return m


def test_each_fact_follows_its_earlier_version_dated_and_marked():
    m = _memory()
    hits = merged_hits(m, ["where Ana lives"], 3, 3)
    assert [h.text for h in hits] == ["Ana lives in Lisbon."]  # recall gives valid facts only
    lines = with_history(m, hits, 1, DAYS.get)
    assert [(x["text"], x["valid"]) for x in lines] == [
        ("[8 May 2023] (no longer true) Ana lives in Porto.", False),
        ("[2 June 2023] Ana lives in Lisbon.", True)]
    assert lines[0]["score"] is None and lines[0]["sources"] == ["turn:1"]


def test_earlier_only_puts_a_changed_fact_s_earlier_versions_in_its_place():
    m = _memory()
    m.apply([EngramAdd("semantic", "Ana works as a nurse.")], source="turn:5")
    m.step()
    hits = merged_hits(m, ["where Ana lives", "Ana works"], 3, 3)
    assert {h.text for h in hits} == {"Ana lives in Lisbon.", "Ana works as a nurse."}
    lines = with_history(m, hits, 1, DAYS.get, earlier_only=True)
    texts = [x["text"] for x in lines]
    assert "[8 May 2023] (no longer true) Ana lives in Porto." in texts
    assert not any("Lisbon" in t for t in texts)  # the current version left out
    assert "[2 June 2023] Ana works as a nurse." in texts  # a fact that never changed stays
    both = [x["text"] for x in with_history(m, hits, 1, DAYS.get)]
    assert len(both) == len(texts) + 1 and "[2 June 2023] Ana lives in Lisbon." in both
    with pytest.raises(MagsError, match="past_lines"):
        LoopConfig(past_lines="latest")


def test_no_versions_and_no_calendar_give_the_plain_recalled_facts():
    m = _memory()
    hits = merged_hits(m, ["where Ana lives"], 3, 3)
    lines = with_history(m, hits, 0)
    assert [x["text"] for x in lines] == ["Ana lives in Lisbon."]  # as the game reads them
    assert lines[0]["score"] == round(float(hits[0].score), 4)


def test_the_loop_dates_lines_from_its_observations_and_checks_its_config():
    from mags_lib.agents.loop import MagsLoopAgent
    from mags_lib.game.base import Observation
    from mags_lib.llm import Completion

    class Scripted:
        def __init__(self, texts):
            self.texts = list(texts)

        def chat(self, messages, **kw):
            return Completion(self.texts.pop(0), finish_reason="stop")

    write = Scripted(["<engram>\nadd semantic 0.9: Ana lives in Porto.\n",
                      "<engram>\nupdate semantic 0.9: Ana lives in Lisbon.\n"])
    ask = Scripted(["<recall>\nquery: where Ana lives\n</recall>"])
    agent = MagsLoopAgent(None, ask_llm=ask, write_llm=write,
                          loop=LoopConfig(versions=1, past_lines="both"),
                          embedder=HashingEmbedder())
    agent.reset(0)
    agent.observe(Observation("[8 May 2023] Ana: I live in Porto.", turn=1, kind="utterance",
                              when="8 May 2023"))
    agent.observe(Observation("[2 June 2023] Ana: I moved to Lisbon.", turn=5, kind="utterance",
                              when="2 June 2023"))
    lines = agent.memory_lines(Observation("Where did Ana live before?", turn=6,
                                           kind="question"))
    assert [x["text"] for x in lines][-2:] == [
        "[8 May 2023] (no longer true) Ana lives in Porto.", "[2 June 2023] Ana lives in Lisbon."]
    with pytest.raises(MagsError, match="versions"):
        LoopConfig(versions=-1)
    with pytest.raises(MagsError, match="versions"):
        LoopConfig(past_versions=-1)


def test_the_loop_shows_earlier_versions_only_for_an_open_question_about_the_past():
    from mags_lib.agents.loop import MagsLoopAgent
    from mags_lib.game.base import Observation
    from mags_lib.llm import Completion

    class Scripted:
        def __init__(self, texts):
            self.texts = list(texts)

        def chat(self, messages, **kw):
            return Completion(self.texts.pop(0) if len(self.texts) > 1 else self.texts[0],
                              finish_reason="stop")

    def agent(**loop):
        write = Scripted(["<engram>\nadd semantic 0.9: Ana lives in Porto.\n",
                          "<engram>\nupdate semantic 0.9: Ana lives in Lisbon.\n"])
        ask = Scripted(["<recall>\nquery: where Ana lives\n</recall>"])
        a = MagsLoopAgent(None, ask_llm=ask, write_llm=write, loop=LoopConfig(**loop),
                          embedder=HashingEmbedder())
        a.reset(0)
        a.observe(Observation("Ana: I live in Porto.", turn=1, kind="utterance"))
        a.observe(Observation("Ana: I moved to Lisbon.", turn=2, kind="utterance"))
        return a

    def shown(a, text, legal=()):
        return [x["text"] for x in a.memory_lines(Observation(text, turn=3, kind="question",
                                                              legal_actions=list(legal)))]
    default = agent()  # past_lines "earlier": the earlier version in place of the current one
    assert shown(default, "Where did Ana live before?")[-1] == \
        "(no longer true) Ana lives in Porto."
    assert not any("Lisbon" in t for t in shown(default, "Where did Ana live before?"))
    assert shown(agent(past_lines="both"), "Where did Ana live before?")[-2:] == [
        "(no longer true) Ana lives in Porto.", "Ana lives in Lisbon."]
    assert shown(default, "Where does Ana live now?")[-1] == "Ana lives in Lisbon."
    assert not any("no longer" in t for t in shown(default, "Where does Ana live now?"))
    assert not any("no longer" in t for t in shown(
        default, "Before the quax you place Porto or Lisbon. Which?", ["Porto", "Lisbon"]))
    assert not any("no longer" in t for t in shown(agent(past_versions=0),
                                                   "Where did Ana live before?"))


def test_the_loops_timings_give_a_cached_calls_own_seconds():
    """A turn answered from the LLM cache times the generation (its stored seconds), not the
    lookup, so a rerun from the cache does not report a 0.00003 s write or ask model."""
    from mags_lib.agents.loop import MagsLoopAgent
    from mags_lib.game.base import Observation
    from mags_lib.llm import Completion

    class Cached:
        def __init__(self, text, cached):
            self.text, self.cached = text, cached

        def chat(self, messages, **kw):
            return Completion(self.text, seconds=0.4, finish_reason="stop", cached=self.cached)

    for cached in (True, False):
        agent = MagsLoopAgent(None, ask_llm=Cached("<recall>\nquery: Ana\n</recall>", cached),
                              write_llm=Cached("<engram>\nadd semantic 0.9: Ana is 3.\n", cached),
                              embedder=HashingEmbedder())
        agent.reset(0)
        agent.observe(Observation("Ana: I am 3.", turn=1, kind="utterance"))
        write = agent.last_timing["write"]
        agent.memory_lines(Observation("How old is Ana?", turn=2, kind="question"))
        ask = agent.last_timing["ask"]
        if cached:
            assert write == ask == 0.4
        else:  # the wall clock around the call
            assert write < 0.1 and ask < 0.1
