"""The objective-study runner both studies share (notebooks 08 and 11): stamps, saved outputs,
intervals, and a whole study with training and decoding faked, once per role."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from mags_lib.train import ask_objectives as ao
from mags_lib.train import objective_study as study
from mags_lib.train import write_objectives as wo


def test_intervals_over_seeds():
    assert study.interval([]) == {"mean": None, "ci_low": None, "ci_high": None}
    assert study.interval([0.4])["ci_low"] is None
    low, high = study.interval([0.4, 0.6])["ci_low"], study.interval([0.4, 0.6])["ci_high"]
    assert low < 0.4 and high > 0.6


def _trained(tmp_path, stamp):
    d = tmp_path / "write-f1-s0"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"w")
    (d / "manifest.json").write_text('{"wall_s": 526.33}')
    (d / "reward_curve.json").write_text('[{"step": 1, "reward": 1.5}]')
    (d / study.STAMP).write_text(json.dumps(stamp))
    return d


def test_resume_keeps_a_model_only_under_its_own_stamp(tmp_path):
    stamp = {"base_digest": "ab", "train_hash": "cd", "stage": {"max_steps": 10}}
    d = _trained(tmp_path, stamp)
    assert study.trained_model(d, stamp) == {"train_s": 526.3,
                                             "reward_curve": [{"step": 1, "reward": 1.5}]}
    for changed in ({**stamp, "base_digest": "other"}, {**stamp, "train_hash": "other"},
                    {**stamp, "stage": {"max_steps": 20}}):
        assert study.trained_model(d, changed) is None  # the SFT model, rows or config changed
    (d / study.STAMP).write_text("{not json")
    assert study.trained_model(d, stamp) is None  # a corrupt stamp retrains, never crashes
    (d / study.STAMP).write_text(json.dumps(stamp))
    (d / "model.safetensors").unlink()
    assert study.trained_model(d, stamp) is None  # no weights
    assert study.trained_model(tmp_path / "never-trained", stamp) is None


def _judged(observation):
    return {"prompt": [{"role": "user", "content": observation}],
            "gold": {"observation": observation}}


def test_resume_reuses_saved_outputs_only_for_the_same_judged_rows(tmp_path):
    judged = [_judged("a1"), _judged("n1")]
    (tmp_path / "objectives_outputs.json").write_text(json.dumps(
        {"rows": ["a1", "n1"], "outputs": {"f1-s0": ["x", "y"], "short": ["x"]}}))
    assert study.earlier_outputs(tmp_path, judged) == {"f1-s0": ["x", "y"]}
    assert study.earlier_outputs(tmp_path, [_judged("a1"), _judged("n2")]) == {}
    (tmp_path / "objectives_outputs.json").write_text("truncated {")
    assert study.earlier_outputs(tmp_path, judged) == {}


def _write_row(op, observation):
    return {"prompt": [{"role": "user", "content": observation}],
            "gold": {"op": op, "observation": observation, "ops": [], "memory_before": [],
                     "probes": [{"question": "?", "creature": "purple glarb",
                                 "condition": "rainy", "item": "stone", "stale": []}]}}


def _ask_row(observation):
    gold_block = "<recall>\nquery: what the purple glarb eats when it is rainy\n</recall>"
    return {"prompt": [{"role": "user", "content": observation}], "task": "ask",
            "completion": [{"role": "assistant", "content": gold_block}],
            "gold": {"observation": observation}}


ROLES = {
    "write": dict(module=wo, sft="write-sft", run="run_write_objectives", judge="judge_writes",
                  cfg=lambda: wo.WriteObjectivesConfig(objectives=["f1", "outcome"], seeds=[0],
                                                       rows_per_op=1),
                  rows=lambda: {"train": [_write_row("add", "t1")],
                                "test": [_write_row("add", "q1"), _write_row("none", "q2")]}),
    "ask": dict(module=ao, sft="ask-sft", run="run_ask_objectives", judge="judge_asks",
                cfg=lambda: ao.AskObjectivesConfig(objectives=["f1", "outcome"], seeds=[0],
                                                   rows=2),
                rows=lambda: {"train": [_ask_row("t1")], "test": [_ask_row("q1"),
                                                                   _ask_row("q2")]}),
}


@pytest.mark.parametrize("role", list(ROLES))
def test_a_study_resumes_its_models_and_retrains_what_changed(role, tmp_path, monkeypatch):
    """A role's study with training and decoding faked: a second run reuses both models and
    their saved outputs; a changed SFT model retrains; a run that dies in training leaves no
    stamp that would vouch for the half-written model."""
    import mags_lib.train.evaluate as evaluate
    import mags_lib.train.grpo as grpo

    spec = ROLES[role]
    mod, run = spec["module"], getattr(spec["module"], spec["run"])
    models, out = tmp_path / "models", tmp_path / "results"
    (models / spec["sft"]).mkdir(parents=True)
    (models / spec["sft"] / "model.safetensors").write_bytes(b"sft v1")
    monkeypatch.setattr(mod, "MODELS_DIR", models)
    monkeypatch.setattr(mod, "OBJECTIVES_DIR", models / "objectives")
    rows = spec["rows"]()
    monkeypatch.setattr(mod, "load_role_data", lambda r: (rows, {}))
    monkeypatch.setattr(mod, spec["judge"], lambda texts, judged, *a: {
        "n": len(texts), "texts": list(texts)})
    calls = {"train": [], "generate": 0, "train_gold": []}

    def fake_grpo(stage, train, evals, init):
        calls["train"].append(stage.name)
        calls["train_gold"].append(train[0]["gold"])
        if calls.get("die"):
            raise RuntimeError("killed")
        d = Path(stage.output_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / "model.safetensors").write_bytes(stage.name.encode())
        (d / "manifest.json").write_text('{"wall_s": 12.0}')
        (d / "reward_curve.json").write_text("[]")
        return types.SimpleNamespace(model=stage.name, tokenizer=None, reward_curve=[])

    def fake_generate(model, prompts, max_tokens=64, **kw):
        calls["generate"] += 1
        name = model[0] if isinstance(model, tuple) else Path(str(model)).name
        return [f"{name}:{p[0]['content']}" for p in prompts]

    monkeypatch.setattr(grpo, "run_grpo", fake_grpo)
    monkeypatch.setattr(evaluate, "generate", fake_generate)
    cfg = spec["cfg"]()

    first = run(cfg, out)
    assert calls["train"] == [f"{role}-f1", f"{role}-outcome"] and calls["generate"] == 3
    assert first["models"]["f1-s0"]["texts"] == [f"{role}-f1:q1", f"{role}-f1:q2"]
    assert set(first["by_objective"]) == {"f1", "outcome"}
    if role == "ask":  # the imitation reward reads the gold block's queries from the rows
        assert calls["train_gold"][0]["queries"] == [
            "what the purple glarb eats when it is rainy"]

    calls.update(train=[], generate=0)
    second = run(cfg, out)
    assert calls["train"] == [] and calls["generate"] == 1  # only the SFT model decodes again
    assert second["models"]["outcome-s0"] == {**first["models"]["outcome-s0"],
                                              "resumed": True, "train_s": 12.0}

    # the SFT notebook re-ran: its weights change
    (models / spec["sft"] / "model.safetensors").write_bytes(b"sft v2, retrained")
    calls.update(train=[], generate=0, die=True)
    with pytest.raises(RuntimeError):
        run(cfg, out)
    assert not (mod.objective_dir("f1", 0) / study.STAMP).exists()
    calls.update(train=[], die=False)
    run(cfg, out)
    assert calls["train"] == [f"{role}-f1", f"{role}-outcome"]
    stamp = json.loads((mod.objective_dir("f1", 0) / study.STAMP).read_text())
    assert stamp["stage"]["name"] == f"{role}-f1" and len(stamp["train_hash"]) == 16
