"""Conversation QA: agents read the turns, answer from their lines, and are scored apart."""

from __future__ import annotations

import pytest

from mags_lib.conversations.persona import make_persona
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.conversation_qa import (
    ConversationEvalConfig,
    question_sample,
    run_conversation_eval,
)
from mags_lib.llm.base import Completion


class LastLineReader:
    """An answer model that repeats the last memory line (the newest: lines are a timeline), or
    abstains."""

    name = "last-line"

    def chat(self, messages, **kw):
        memory = messages[-1]["content"].split("\n\nQuestion:")[0]
        lines = memory.splitlines()[1:]
        text = "I don't know" if lines in ([], ["(nothing)"]) else lines[-1].split("] ", 1)[-1]
        return Completion(text, finish_reason="stop")


def test_turns_become_dated_observations():
    conv = make_persona(1, "train")
    obs = conv.stream()
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
    # read as the loop reads: a question about now is shown current facts only, so even a
    # reader that repeats the newest line never names a retired value
    assert not any("(no longer true)" in line for r in out["rows"] for line in r["lines"])
    assert gold["current_accuracy"] > 0 and gold["stale_rate"] == 0.0
    assert s["static_rag"]["memory_size_mean"] > s["gold_writes"]["memory_size_mean"]
    row = next(r for r in out["rows"] if r["agent"] == "gold_writes" and r["kind"] == "current")
    assert row["lines"] and row["prediction"] and "f1" in row
    assert {r["agent"] for r in out["rows"]} == {"bare", "static_rag", "gold_writes"}


def test_the_persona_rates_carry_intervals_over_conversations():
    from mags_lib.evaluation.conversation_qa import persona_intervals

    convs = [make_persona(s, "train") for s in (2, 3, 4)]
    cfg = ConversationEvalConfig(agents=["gold_writes"], k=3)
    out = run_conversation_eval(convs, LastLineReader(), cfg, embedder=HashingEmbedder())
    s = out["summary"]["gold_writes"]
    for key in ("current_accuracy", "stale_rate", "earlier_accuracy"):
        lo, hi = s["persona_ci95"][key]
        assert lo <= s["persona"][key] <= hi, key
    qas = {(c.sample_id, i): qa for c in convs for i, qa in enumerate(c.qa)}
    one = [r for r in out["rows"] if r["conversation"] == convs[0].sample_id]
    assert persona_intervals(one, qas)["current_accuracy"] == [None, None]  # one conversation
    wrong = [dict(r, prediction="I don't know") for r in out["rows"]]
    assert persona_intervals(wrong, qas)["current_accuracy"] == [0.0, 0.0]


def test_gold_writes_show_a_question_about_the_past_the_earlier_version():
    conv = make_persona(8, "train")  # "Where did I live before?" and another such question
    cfg = ConversationEvalConfig(agents=["gold_writes"], k=3)
    out = run_conversation_eval([conv], LastLineReader(), cfg, embedder=HashingEmbedder())
    past = [r for r in out["rows"] if "before?" in r["text"]]
    assert len(past) == 2
    for r in past:  # the changed fact's earlier version, with the answer, in place of the fact
        retired = [line for line in r["lines"] if "(no longer true)" in line]
        assert any(r["gold"].lower() in line.lower() for line in retired), r["lines"]
        # and the fact that replaced it is not shown: no current line opens as a retired one
        stems = {line.split("(no longer true) ", 1)[1].rsplit(" ", 1)[0] for line in retired}
        current = [line.split("] ", 1)[-1] for line in r["lines"] if line not in retired]
        assert not any(c.startswith(stem) for c in current for stem in stems), r["lines"]


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
    loop = [{"counts": {"write_calls": 10, "write_parsed": 9, "op_none": 7},
             "seconds_per_turn": 0.2}]
    assert writing_summary(loop)["validity"] == 0.9  # the loop's writer counts its calls
    assert writing_summary(loop)["ask_validity"] is None
    loop[0]["counts"].update(ask_calls=4, ask_malformed=1)
    assert writing_summary(loop)["ask_validity"] == 0.75


def test_evidence_recall_counts_the_turns_the_lines_come_from():
    from mags_lib.evaluation.conversation_qa import evidence_row, line_turns

    ids = ["D1:1", "D1:2", "D1:3"]
    assert line_turns(["turn:2", 0, "node:4", "working", "D7:1"], ids) == ["D1:3", "D1:1", "D7:1"]
    qa = make_persona(2, "train").qa[0]
    qa = type(qa)(qa.question, qa.answer, ("D1:2", "D1:3"), qa.category)
    shown = [{"sources": ["turn:0"]}, {"sources": ["turn:2"]}, {"sources": ["turn:1"]}]
    assert evidence_row(qa, shown, ids, k=3) == {}  # no cut of KS fits in 3 lines
    more = [{"sources": ["turn:0"]}] * 7 + shown
    assert evidence_row(qa, more, ids, k=10) == {"recall@5": 1.0, "recall@10": 1.0}
    assert evidence_row(qa, [{"sources": ["turn:2"]}] + [{"sources": []}] * 5, ids, k=5) == {
        "recall@5": 0.0}  # the sixth line from the best is not among the best five
    assert evidence_row(qa, [{"text": "x", "sources": []}] * 5, ids, k=5) == {}


def test_the_summary_reports_each_agents_evidence_recall():
    convs = [make_persona(s, "train") for s in (2, 3)]
    cfg = ConversationEvalConfig(agents=["static_rag", "gold_writes"], k=5)
    s = run_conversation_eval(convs, LastLineReader(), cfg, embedder=HashingEmbedder())["summary"]
    for name in ("static_rag", "gold_writes"):
        assert 0.0 < s[name]["recall@5"] <= 1.0 and "recall@10" not in s[name]
        assert set(s[name]["recall@5_by_category"]) and len(s[name]["recall@5_ci95"]) == 2


def test_supersession_is_scored_for_every_agent_with_a_memory():
    convs = [make_persona(s, "train") for s in (2, 3)]
    cfg = ConversationEvalConfig(agents=["static_rag", "gold_writes"], k=5)
    out = run_conversation_eval(convs, LastLineReader(), cfg, embedder=HashingEmbedder())
    gold = out["summary"]["gold_writes"]["writing"]["supersession"]
    assert gold["gold"] > 0 and gold["predicted"] > 0 and 0 < gold["recall"] <= 1.0
    assert gold["correct"] == sum(r["supersession"]["correct"] for r in out["reads"]
                                  if r["agent"] == "gold_writes")
    assert out["summary"]["static_rag"]["writing"]["supersession"] is None  # no memory


def test_the_reader_sees_its_lines_as_a_timeline():
    from mags_lib.agents.open_answer import open_messages, timeline

    recalled = ["[2 June 2023] Ana lives in Lisbon.", "[9 May 2023] Ana: hi.",
                "[2 June 2023] Ana: it rained.", "[31 Smarch 2023] odd",
                "[8 May 2023] (no longer true) Ana lives in Porto."]  # best last, as recall gives
    assert timeline(recalled) == [
        "[31 Smarch 2023] odd",  # no calendar day: kept first, as undated lines are
        "[8 May 2023] (no longer true) Ana lives in Porto.", "[9 May 2023] Ana: hi.",
        "[2 June 2023] Ana lives in Lisbon.", "[2 June 2023] Ana: it rained."]  # a day's order kept
    body = open_messages(recalled, "Where does Ana live?")[1]["content"]
    assert body.index("Porto") < body.index("Lisbon")  # the earlier version never comes last
    assert timeline(["b", "a"]) == ["b", "a"]  # the games' undated lines are left as given


def test_gold_writes_supersede_exactly_what_the_gold_says_they_replace():
    from mags_lib.conversations.types import Conversation, GoldFact, Turn
    from mags_lib.evaluation.conversation_qa import GoldWritesMemory

    # no name opens these facts, so the memory's own subject check cannot tell them apart:
    # only the gold's keys keep the sister's home when the brother's changes
    when = "1:00 pm on 1 May, 2023"
    said = ["My brother lives in Turin.", "My sister lives in Turin.",
            "My brother moved to Leeds.", "My sister moved to Leeds too."]
    turns = [Turn(f"D1:{i + 1}", 1, "Ana", t, when) for i, t in enumerate(said)]
    gold = [GoldFact(1, "Ana", "My brother lives in Turin.", ("D1:1",)),
            GoldFact(1, "Ana", "My sister lives in Turin.", ("D1:2",)),
            GoldFact(1, "Ana", "My brother lives in Leeds.", ("D1:3",), "update",
                     "My brother lives in Turin."),
            GoldFact(1, "Ana", "My sister lives in Leeds.", ("D1:4",), "update",
                     "My sister lives in Turin.")]
    conv = Conversation("toy-1", ("Ana", "Assistant"), {1: turns}, [], gold)
    nodes = GoldWritesMemory(conv, HashingEmbedder(), k=5).memory_nodes()
    assert sorted(n["text"] for n in nodes if n["valid"]) == ["My brother lives in Leeds.",
                                                              "My sister lives in Leeds."]
    assert sorted(n["text"] for n in nodes if not n["valid"]) == ["My brother lives in Turin.",
                                                                  "My sister lives in Turin."]
