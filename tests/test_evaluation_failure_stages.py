"""Failure stages: where a persona question on a fact's value was lost (write, superseded,
recall, reader), per agent, from the evaluation rows."""

from __future__ import annotations

from mags_lib.conversations.persona import make_persona
from mags_lib.conversations.types import QA
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.conversation_qa import ConversationEvalConfig, run_conversation_eval
from mags_lib.evaluation.conversation_study import study_markdown
from mags_lib.evaluation.failure_stages import STAGES, failure_stage, stage_counts
from mags_lib.llm.base import Completion

CURRENT = QA("Which car do I drive now?", "a Kia", (), 4, kind="current", stale=("a Fiat",),
             asker="Hugo")
EARLIER = QA("Which car did I drive before?", "a Fiat", (), 4, kind="earlier", asker="Hugo")


class Abstains:
    name = "abstains"

    def chat(self, messages, **kw):
        return Completion("I don't know", finish_reason="stop")


def test_a_stale_answer_is_not_answered_even_when_it_names_the_value():
    nodes = [{"text": "Hugo drives a Kia.", "valid": True}]
    assert failure_stage(CURRENT, "a Kia, before that a Fiat", ["Hugo drives a Kia."],
                         nodes) == "reader"
    assert failure_stage(CURRENT, "Kia", ["Hugo drives a Kia."], nodes) == "answered"


def test_an_earlier_value_only_needs_to_be_stored_superseded_or_not():
    old = [{"text": "Hugo drives a Fiat.", "valid": False}]
    assert failure_stage(EARLIER, "I don't know", [], old) == "recall"
    assert failure_stage(EARLIER, "I don't know", [], []) == "write"
    # the current value's question, on the same store, was retired by a later write
    assert failure_stage(CURRENT, "I don't know", [],
                         [{"text": "Hugo drives a Kia.", "valid": False}]) == "superseded"


def test_other_kinds_and_unanswerable_questions_get_no_stage():
    when = QA("When did I get the Kia?", "8 May 2023", (), 2, kind="when")
    unknown = QA("What is my cat's name?", None, (), 5, kind="unknown")
    assert failure_stage(when, "8 May 2023", [], []) is None
    assert failure_stage(unknown, "I don't know", [], []) is None
    assert stage_counts([{"agent": "a", "kind": "when", "stage": None}]) == {}


def test_the_evaluation_places_every_fact_question_and_the_stages_add_up():
    convs = [make_persona(s, "train") for s in (2, 3)]
    cfg = ConversationEvalConfig(agents=["bare", "static_rag", "gold_writes"], k=3)
    out = run_conversation_eval(convs, Abstains(), cfg, embedder=HashingEmbedder())
    facts = [r for r in out["rows"] if r["kind"] in ("current", "earlier")]
    assert facts and all(r["stage"] in STAGES for r in facts)
    assert all(r["stage"] is None for r in out["rows"] if r["kind"] not in ("current",
                                                                           "earlier"))
    s = out["summary"]
    # a reader that always abstains answers nothing: every loss is the reader's or earlier
    assert all(r["stage"] != "answered" for r in facts)
    assert set(s["bare"]["stages"]["current"]) == {"unseen"}  # no store to look into
    gold = s["gold_writes"]["stages"]["current"]
    assert "write" not in gold and "superseded" not in gold  # the gold facts, current kept
    assert gold.get("reader", 0) > 0  # k=3 lines show some of them
    n_current = sum(1 for r in facts if r["agent"] == "static_rag" and r["kind"] == "current")
    assert sum(s["static_rag"]["stages"]["current"].values()) == n_current
    table = study_markdown({"persona": {"split": "train", "conversations": 2, "evidence": {},
                                        "qa": out}})
    assert "by the stage where the answer was lost" in table and "| gold_writes |" in table


def test_an_agent_above_the_upper_bound_is_named_in_the_study_tables():
    from mags_lib.evaluation.conversation_qa import bound_breaches

    summary = {"gold_writes": {"upper_bound": True, "f1": 0.40, "persona": {
                   "current_accuracy": 0.50, "earlier_accuracy": 0.30}},
               "static_rag": {"upper_bound": False, "f1": 0.45, "persona": {
                   "current_accuracy": 0.40, "earlier_accuracy": None}}}
    assert bound_breaches(summary) == [
        "`static_rag` is above the upper bound `gold_writes` on F1 (0.450 > 0.400)"]
    summary["static_rag"]["f1"] = 0.40  # level is not above
    assert bound_breaches(summary) == []


def test_a_line_about_someone_else_with_the_same_value_is_not_the_answer():
    felix = QA("What does Felix drive right now?", "a Volvo", (), 4, kind="current",
               asker="Ana", about="Felix")
    other = ["Ravi drives a Volvo."]
    nodes = [{"text": "Ravi drives a Volvo.", "valid": True}]
    assert failure_stage(felix, "I don't know", other, nodes) == "write"
    nodes.append({"text": "Felix drives a Volvo.", "valid": True})
    assert failure_stage(felix, "I don't know", other, nodes) == "recall"
    assert failure_stage(felix, "I don't know", other + ["Felix's car: a Volvo."],
                         nodes) == "reader"
    # without `about` (LoCoMo) the value alone is matched, as before
    anyone = QA("What does Felix drive?", "a Volvo", (), 4, kind="current")
    assert failure_stage(anyone, "I don't know", other, nodes) == "reader"


def test_every_persona_fact_question_names_whose_fact_and_its_turns_name_them():
    from mags_lib.conversations.persona import persona_set
    from mags_lib.evaluation.failure_stages import names_person

    for split in ("train", "dev", "fresh"):
        for conv in persona_set(split, 3):
            text = {t.dia_id: f"{t.speaker}: {t.text}" for t in conv.turns()}
            facts = [q for q in conv.qa if q.kind in ("current", "earlier", "when")]
            assert facts and all(q.about for q in facts)
            for q in facts:
                for turn in q.evidence:
                    assert names_person(text[turn], q.about), (split, q, text[turn])
