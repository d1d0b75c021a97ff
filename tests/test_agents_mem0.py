"""The Mem0-style baseline writes: ADD stores, UPDATE and DELETE retire the named fact, bad
lines and unknown ids change nothing and are counted."""

from __future__ import annotations

from mags_lib.agents import make_agent
from mags_lib.agents.mem0 import mem0_messages, parse_mem0
from mags_lib.embed import HashingEmbedder
from mags_lib.game.base import Observation
from mags_lib.llm.base import Completion


class Replies:
    """A writer that answers each call with the next scripted text, and keeps the prompts."""

    name = "replies"

    def __init__(self, *texts: str):
        self.texts, self.prompts = list(texts), []

    def chat(self, messages, **kw):
        self.prompts.append(messages)
        return Completion(self.texts.pop(0) if self.texts else "NONE")


def _agent(writer):
    agent = make_agent("mem0", writer, roles={"prompted": writer}, embedder=HashingEmbedder(), k=3)
    agent.reset(0)
    return agent


def _valid_texts(agent):
    return sorted(d["text"] for _, d in agent.memory.to_networkx(valid_only=True).nodes(data=True))


def test_add_update_delete_none():
    writer = Replies("ADD: Ana lives in Porto.\nADD: Ana owns a grey cat.", "", "", "")
    agent = _agent(writer)
    agent.observe(Observation("[1 May] Bo: My sister Ana lives in Porto and has a grey cat."))
    assert _valid_texts(agent) == ["Ana lives in Porto.", "Ana owns a grey cat."]
    porto = next(n for n, d in agent.memory.to_networkx().nodes(data=True) if "Porto" in d["text"])
    cat = next(n for n, d in agent.memory.to_networkx().nodes(data=True) if "cat" in d["text"])
    writer.texts = [f"UPDATE {porto}: Ana lives in Lisbon.", f"DELETE {cat}", "NONE"]
    agent.observe(Observation("[2 June] Bo: Ana moved to Lisbon."))
    agent.observe(Observation("[3 June] Bo: Ana's cat ran away."))
    agent.observe(Observation("[4 June] Bo: Nice weather."))
    assert _valid_texts(agent) == ["Ana lives in Lisbon."]
    assert [h.text for h in agent.memory.history(porto)][-1] == "Ana lives in Porto."
    assert agent.counts["add"] == 2 and agent.counts["update"] == 1
    assert agent.counts["delete"] == 1 and agent.counts["none"] == 1
    shown = writer.prompts[1][-1]["content"]
    assert f"[{porto}] Ana lives in Porto." in shown  # the nearest facts, with their ids
    lines = agent.memory_lines(Observation("Where does Ana live?"))
    assert lines[-1]["text"] == "Ana lives in Lisbon."


def test_bad_lines_change_nothing_and_an_unknown_id_adds_or_does_nothing():
    agent = _agent(Replies("Sure! Here you go:\nUPDATE 99: Ana lives in Rome.\nDELETE 7"))
    agent.observe(Observation("[1 May] Bo: Ana lives in Rome now."))
    assert _valid_texts(agent) == ["Ana lives in Rome."]  # nothing shown to replace: added
    assert agent.counts["unparsed_lines"] == 1 and agent.counts["unknown_id"] == 2
    assert agent.counts["add"] == 1 and not agent.counts["delete"]
    assert agent.counts["lines"] == 3 and agent.counts["valid_lines"] == 0


def test_decision_turns_are_not_written_and_the_prompt_has_examples():
    writer = Replies("ADD: x")
    agent = _agent(writer)
    agent.observe(Observation("Which does it eat?", legal_actions=("a", "b")))
    assert writer.prompts == []
    msgs = mem0_messages([(3, "Ana lives in Porto.")], "[1 May] Bo: hi")
    assert msgs[0]["role"] == "system" and "[3] Ana lives in Porto." in msgs[-1]["content"]
    assert sum(m["role"] == "assistant" for m in msgs) >= 3
    assert parse_mem0("NONE")[0] == [("NONE", None, "")]
    assert parse_mem0("ADD:\nUPDATE: no id")[1] == 2
