"""Notebook 12's study: supersession pooled over personas, the tables, SMOKE sizes."""

from __future__ import annotations

from mags_lib.conversations.persona import persona_set
from mags_lib.embed import HashingEmbedder
from mags_lib.evaluation.conversation_study import (
    ConversationStudyConfig,
    evidence_summary,
    study_markdown,
    supersession_summary,
)


def test_supersession_of_gold_facts_beats_raw_turns():
    out = supersession_summary(persona_set("dev", 3), HashingEmbedder())
    gold, raw = out["gold_facts"], out["raw_turns"]
    assert gold["gold"] == raw["gold"] > 0
    assert gold["recall"] > 0.5 and gold["recall"] > (raw["recall"] or 0.0)


def test_evidence_summary_has_both_retrievers_and_readers_use_the_dialogue_memory():
    from mags_lib.evaluation.conversation_qa import ConversationEvalConfig
    from mags_lib.memory import DIALOGUE_MEMORY

    convs = persona_set("dev", 1)
    out = evidence_summary(convs, HashingEmbedder())
    assert set(out) == {"memory", "bm25"}
    assert all(0.0 <= s["all"]["recall@10"] <= 1.0 for s in out.values())
    context = evidence_summary(convs, HashingEmbedder(), {"episode_context": 2})
    assert context["memory"]["all"] != out["memory"]["all"]  # the overrides reach the memory
    assert context["bm25"] == out["bm25"]
    cfg = ConversationEvalConfig()
    assert cfg.memory == DIALOGUE_MEMORY and cfg.memory is not DIALOGUE_MEMORY
    assert ConversationStudyConfig().memory == DIALOGUE_MEMORY


def test_smoke_shrinks_sizes_not_code():
    cfg = ConversationStudyConfig(smoke=True, agents=["bare"])
    run = cfg.resolved()
    assert run.personas < cfg.personas and run.agents == ["bare"] and run.smoke
    assert ConversationStudyConfig().resolved() == ConversationStudyConfig()


def test_markdown_labels_the_upper_bound_and_a_missing_locomo():
    qa = {"summary": {"bare": {"upper_bound": False, "f1": 0.1, "f1_ci95": (0.05, 0.2)},
                      "gold_writes": {"upper_bound": True, "f1": 0.5,
                                      "persona": {"current_accuracy": 0.8}}}}
    ev = {"memory": {"all": {"recall@5": 0.5, "recall@10": 0.6}},
          "bm25": {"all": {"recall@5": 0.4, "recall@10": 0.5}}}
    sup = {"gold_facts": {"precision": 0.9, "recall": 0.95, "gold": 20}}
    text = study_markdown({"persona": {"split": "dev", "conversations": 2, "evidence": ev,
                                       "supersession": sup, "qa": qa},
                           "locomo": {"missing": "LoCoMo is not on this machine"}})
    assert "gold_writes (upper bound)" in text and "0.100 (0.05–0.20)" in text
    assert "**locomo**: LoCoMo is not on this machine" in text and "| gold_facts | 0.900" in text


def test_mags_without_trained_models_is_left_out_with_the_reason(tmp_path, monkeypatch):
    from mags_lib.evaluation import conversation_study as cs

    monkeypatch.setattr("mags_lib.evaluation.answer_model.find_gguf", lambda *a, **k: None)
    roles, why = cs.role_models({"ask": "auto", "write": "auto"})
    assert roles == {} and "no trained ask model" in why and "notebooks 02-04" in why
    text = study_markdown({"left_out": {"agents": ["mags"], "why": why}})
    assert "Left out: mags (no trained ask model" in text


def test_the_reader_is_named_and_auto_falls_back_to_the_base_model(tmp_path, monkeypatch):
    import pytest

    from mags_lib.errors import MagsError
    from mags_lib.evaluation import conversation_study as cs

    monkeypatch.setattr("mags_lib.evaluation.answer_model.find_gguf", lambda *a, **k: None)
    model, note = cs.reader_model("auto")
    assert model == "embedded" and "no trained answer model" in note and "02 and 04" in note
    trained = tmp_path / "answer-grpo-q8_0.gguf"
    trained.write_bytes(b"GGUF")
    monkeypatch.setattr("mags_lib.evaluation.answer_model.find_gguf", lambda *a, **k: trained)
    assert cs.reader_model("auto") == (str(trained), "the trained answer model "
                                                      "answer-grpo-q8_0.gguf")
    assert cs.reader_model("embedded")[0] == "embedded"
    with pytest.raises(MagsError, match="not found"):
        cs.reader_model(str(tmp_path / "missing.gguf"))
    text = study_markdown({"reader": note})
    assert text.startswith("Every agent answers with the embedded base model")


def test_the_model_files_are_named_by_content():
    """Two trainings of one recipe export files of one name; a result names which it read."""
    from mags_lib.evaluation.conversation_study import model_ids

    class Named:
        def __init__(self, name):
            self.name = name

    ids = model_ids(Named("llamacpp:answer-grpo-q8_0.gguf:288e8af82c808132"),
                    {"write": Named("llamacpp:write-grpo-q8_0.gguf:b979339cb3bd4d82"),
                     "prompted": None})
    assert ids == {"reader": "llamacpp:answer-grpo-q8_0.gguf:288e8af82c808132",
                   "write": "llamacpp:write-grpo-q8_0.gguf:b979339cb3bd4d82"}
    text = study_markdown({"models": ids})
    assert "write `write-grpo-q8_0.gguf:b979339cb3bd4d82`" in text
    assert "Model files" not in study_markdown({"reader": "the embedded base model"})


def test_prompted_baselines_write_with_the_base_model_not_the_trained_reader(monkeypatch):
    import mags_lib.llm
    from mags_lib.evaluation.conversation_study import prompted_role

    reader = object()
    assert prompted_role(["bare", "static_rag", "mags"], "x.gguf", reader) == {}
    assert prompted_role(["mem0"], "embedded", reader) == {"prompted": reader}
    loaded = []
    monkeypatch.setattr(mags_lib.llm, "load_llm", lambda model: loaded.append(model) or model)
    assert prompted_role(["bare", "mem0"], "models/gguf/answer-grpo-q8_0.gguf", reader) == {
        "prompted": "embedded"}
    assert loaded == ["embedded"]


def test_role_models_loads_only_the_roles_an_agent_reads(monkeypatch):
    """`mags_verbatim` reads no write model, so a machine without one can still run it."""
    from mags_lib.agents.registry import trained_roles
    from mags_lib.evaluation import conversation_study as cs

    def find(name):
        return f"/m/{name}-q8_0.gguf" if name.startswith("ask") else None

    monkeypatch.setattr("mags_lib.evaluation.answer_model.find_gguf", find)
    monkeypatch.setattr("mags_lib.llm.load_llm", lambda cfg=None, **kw: ("llm", cfg.model))
    needed = trained_roles("mags_verbatim")
    roles, why = cs.role_models({"ask": "auto", "write": "auto"}, needed)
    assert why is None and list(roles) == ["ask"] and roles["ask"][1].startswith("/m/ask")
    roles, why = cs.role_models({"ask": "auto", "write": "auto"}, trained_roles("mags"))
    assert roles == {} and "no trained write model" in why
    assert trained_roles("static_rag") == () and trained_roles("mags_prompted") == ()
