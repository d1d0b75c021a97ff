"""The evidence ladder: one closed-loop agent's evidence recall, one change at a time."""

from __future__ import annotations

import pytest

from mags_lib.agents import make_agent
from mags_lib.conversations.persona import make_persona
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation.conversation_qa import ConversationEvalConfig, run_conversation_eval
from mags_lib.evaluation.evidence_ladder import (
    RUNGS,
    ladder_markdown,
    ladder_rows,
    ladder_summary,
)
from mags_lib.llm.base import Completion
from mags_lib.tasks.base import Observation


class Asker:
    """An ask model that asks for the question's last three words."""

    name = "asker"

    def chat(self, messages, **kw):
        words = messages[-1]["content"].rstrip("?. ").split()[-3:]
        return Completion(f"<recall>\nquery: {' '.join(words)}\n</recall>", finish_reason="stop")


class Writer:
    """A write model that stores each turn's words after its speaker as one fact."""

    name = "writer"

    def __init__(self):
        self.calls = 0

    def chat(self, messages, **kw):
        self.calls += 1
        turn = messages[-1]["content"].split("Observation: ", 1)[-1].split("\n", 1)[0]
        said = turn.split(": ", 1)[-1].strip()
        body = f"add semantic 0.9: {said}\n" if len(said.split()) > 3 else ""
        return Completion(f"<engram>\n{body}</engram>", finish_reason="stop")


class Abstainer:
    name = "abstainer"

    def chat(self, messages, **kw):
        return Completion("I don't know", finish_reason="stop")


def _cfg(**kw):
    return ConversationEvalConfig(agents=["mags_episodic"], k=5, loop={"query_k": 5}, **kw)


def test_writer_none_keeps_the_turns_and_writes_nothing():
    writer = Writer()
    agent = make_agent("mags_episodic", Abstainer(), embedder=HashingEmbedder(),
                       roles={"ask": Asker(), "write": writer}, loop={"writer": "none"})
    agent.reset(0)
    for i, text in enumerate(["[1 May 2023] Yara: I moved to Lisbon last spring.",
                              "[1 May 2023] Yara: My sister Ana is a baker in Porto."]):
        agent.observe(Observation(text, turn=i, kind="utterance"))
    blocks = [d["block"] for _, d in agent.memory.graph.nodes(data=True)]
    assert blocks == ["episodic", "episodic"] and writer.calls == 0
    assert agent.counts["write_calls"] == 0
    with pytest.raises(MagsError, match="keep_turns"):
        make_agent("mags", Abstainer(), embedder=HashingEmbedder(),
                   roles={"ask": Asker(), "write": Writer()}, loop={"writer": "none"})


def test_the_ladder_reads_both_memories_and_its_last_rung_is_what_the_evaluation_shows():
    conv = make_persona(2, "train")
    roles = {"ask": Asker(), "write": Writer()}
    rows = ladder_rows(conv, "mags_episodic", Abstainer(), _cfg(), HashingEmbedder(), roles)
    assert rows and all(conv.qa[r["question"]].evidence for r in rows)
    assert all(r["queries"] for r in rows)
    scored = [r for r in rows if all(r[rung] is not None for rung in RUNGS)]
    assert scored
    # the turns-only memory holds no facts; the agent's own shows some
    assert all(r["turns_question_facts"] == r["turns_queries_facts"] == 0 for r in rows)
    assert any(r["facts_question_facts"] > 0 for r in rows)
    assert all(r["facts_queries_facts"] <= 5 for r in rows)
    # the last rung is the evaluation's own evidence recall, question by question
    out = run_conversation_eval([conv], Abstainer(), _cfg(), embedder=HashingEmbedder(),
                                roles={"ask": Asker(), "write": Writer()})
    evaluated = {r["question"]: r.get("recall@5") for r in out["rows"]
                 if r["agent"] == "mags_episodic" and "recall@5" in r}
    assert evaluated and {r["question"]: r["loop"] for r in rows
                          if r["question"] in evaluated} == evaluated


def test_the_ladder_refuses_an_agent_that_keeps_no_turns():
    conv = make_persona(2, "train")
    cfg = ConversationEvalConfig(agents=["mags"], k=5, loop={"query_k": 5})
    with pytest.raises(MagsError, match="keeps its turns"):
        ladder_rows(conv, "mags", Abstainer(), cfg, HashingEmbedder(),
                    {"ask": Asker(), "write": Writer()})


def test_the_summary_pairs_the_rungs_question_by_question():
    base = {"conversation": "c", "category": 1}
    rows = [{**base, "question": 0, "turns_question": 1.0, "turns_queries": 1.0,
             "facts_question": 0.0, "facts_queries": 0.5, "loop": 0.5},
            {**base, "question": 1, "turns_question": 0.5, "turns_queries": 0.0,
             "facts_question": 0.5, "facts_queries": 0.5, "loop": 1.0},
            {**base, "question": 2, "turns_question": None, "turns_queries": 1.0,
             "facts_question": 1.0, "facts_queries": 1.0, "loop": 1.0}]
    s = ladder_summary(rows)
    assert s["questions"] == 2  # a question not scored on every rung is left out
    assert s["rungs"]["turns_question"] == 0.75 and s["rungs"]["loop"] == 0.75
    facts = next(x for x in s["steps"] if x["to"] == "facts_question")
    assert facts["difference"] == -0.5 and (facts["up"], facts["down"]) == (0, 1)
    lo, hi = facts["ci95"]
    assert lo <= facts["difference"] <= hi
    table = ladder_markdown(s, 10)
    assert "| turns_question | – | 0.750 | 0.750 |" in table and "-0.500" in table


def test_the_tool_names_a_missing_held_out_reranker(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tools" / "evidence_ladder.py"
    spec = importlib.util.spec_from_file_location("evidence_ladder_tool", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    with pytest.raises(SystemExit, match="without-.*json is missing"):
        tool.main([str(tmp_path / "out.json"), "--task", "persona", "--n", "1",
                   "--folds", str(tmp_path)])
    with pytest.raises(SystemExit, match="unexpected keyword"):
        tool.main([str(tmp_path / "out.json"), "--task", "persona", "--n", "1",
                   "--loop", '{"retire": "off"}'])
    with pytest.raises(SystemExit, match="unknown merge"):
        tool.main([str(tmp_path / "out.json"), "--task", "persona", "--n", "1",
                   "--loop", '{"merge": "max"}'])
    with pytest.raises(SystemExit, match="not JSON"):
        tool.main([str(tmp_path / "out.json"), "--task", "persona", "--n", "1",
                   "--memory", "{oops"])
