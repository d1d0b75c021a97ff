"""Judging write and ask models on persona rows prompted as in play (a scripted fake model)."""

from __future__ import annotations

from mags_lib.agents.role_prompts import WRITE_SYSTEM
from mags_lib.evaluation.role_judge import judge_ask, judge_roles, judge_write, judged_text
from mags_lib.llm import Completion
from mags_lib.synth.conversation_rows import persona_judge_rows


class Scripted:
    """Answers each prompt from a table (the row's gold completion) or with a fixed reply."""

    def __init__(self, table: dict[str, str] | None = None, default: str = "<engram>\n"):
        self.table, self.default, self.calls = table or {}, default, []

    def chat(self, messages, **kw):
        self.calls.append(kw)
        text = self.table.get(messages[-1]["content"], self.default)
        return Completion(text.removesuffix("</engram>"), finish_reason="stop")


def test_rows_are_the_loops_messages_and_never_a_train_persona():
    rows = persona_judge_rows("test", 1)
    assert rows["write"] and rows["ask"]
    assert all(r["prompt"][0]["content"] == WRITE_SYSTEM[0] for r in rows["write"])
    assert all(r["gold"]["conversation"].startswith("persona-test-") for r in rows["write"])


def test_a_perfect_writer_and_one_that_stores_nothing():
    rows = persona_judge_rows("dev", 1)["write"]
    perfect = Scripted({r["prompt"][-1]["content"]: r["completion"][0]["content"] for r in rows})
    good = judge_write(perfect, rows)
    assert good["op_accuracy"] == 1.0 and good["dropped"] == 0.0 and good["fact_exact"] == 1.0
    assert all(kw["temperature"] == 0.0 and kw["grammar"] is None for kw in perfect.calls)
    lazy = judge_write(Scripted(), rows)
    assert lazy["dropped"] == 1.0 and lazy["op_confusion"]["update"] == {
        "none": sum(r["gold"]["op"] == "update" for r in rows)}
    assert 0 < lazy["op_accuracy"] < 1 and len(lazy["samples"]) <= 12


def test_ask_judge_scores_hits_by_kind():
    rows = persona_judge_rows("dev", 1)["ask"]
    echo = Scripted({r["prompt"][-1]["content"]: r["completion"][0]["content"] for r in rows})
    good = judge_ask(echo, rows, k=3)
    assert good["hit"] >= 0.7 and set(good["by_kind"]) <= {"current", "earlier", "when"}
    bad = judge_ask(Scripted(default="<recall>\nquery: weather\n</recall>"), rows, k=1)
    assert bad["hit"] < good["hit"]


def test_judge_roles_reports_both_models_and_nothing_without_models():
    rows = persona_judge_rows("dev", 1)
    rows = {"write": rows["write"][:6], "ask": rows["ask"][:4]}
    assert judge_roles({}, rows) == {}
    assert judged_text({}) == "no trained write or ask model judged"
    judged = judge_roles({"write": Scripted(), "ask": Scripted(
        default="<recall>\nquery: weather\n</recall>")}, rows)
    assert judged["write"]["n"] == 6 and judged["ask"]["n"] == 4
    text = judged_text(judged)
    assert "write: 6 turns, op accuracy" in text and "op confusion (gold -> chosen)" in text
    assert "ask: 4 questions, hit@3" in text and "  out:  " in text
    assert "  out:  " not in judged_text(judged, samples=False)


def test_seconds_of_a_cached_generation_are_its_own_not_the_lookups():
    """A run answered from the LLM cache reports the generation's seconds (stored with it), so
    a rerun from the cache does not claim a 0.00003 s write model."""
    rows = persona_judge_rows("dev", 1)["write"][:3]

    class Cached(Scripted):
        def chat(self, messages, **kw):
            out = super().chat(messages, **kw)
            return Completion(out.text, seconds=0.4, finish_reason="stop", cached=True)

    assert judge_write(Cached(), rows)["seconds_p50"] == 0.4
    assert judge_write(Scripted(), rows)["seconds_p50"] < 0.1  # not cached: the wall time
