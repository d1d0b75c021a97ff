"""The write-objective study (notebook 08): op confusion, judged rows, intervals, bad settings.
Training itself runs in the notebook (SMOKE in the slow chain test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mags_lib.errors import MagsError
from mags_lib.tasks.rewards import chosen_op
from mags_lib.train import write_objectives as wo


def row(op, observation="x", probes=True):
    gold = {"op": op, "observation": observation, "ops": [],
            "memory_before": [{"text": "On rainy turns, the purple glarb eats only the stone.",
                               "block": "semantic"}]}
    if probes:
        gold["probes"] = [{"question": "It is a rainy turn. What does the purple glarb eat?",
                           "creature": "purple glarb", "condition": "rainy", "item": "stone",
                           "stale": []}]
    return {"prompt": [{"role": "user", "content": observation}], "gold": gold}


def test_chosen_op_reads_the_first_add_or_update_and_names_bad_blocks():
    assert chosen_op("<engram>\nadd semantic 0.9: A.\nupdate semantic 0.9: B.\n</engram>") \
        == "add"
    assert chosen_op("<engram>\n</engram>") == "none"
    assert chosen_op("sure, noted") == "bad"
    assert chosen_op("<engram>\nforget: A\n</engram>") == "other"


def test_judged_rows_take_the_first_rows_of_each_op_that_carry_probes():
    rows = [row("none", "n1"), row("add", "a1", probes=False), row("add", "a2"), row("none", "n2"),
            row("update", "u1"), row("none", "n3"), row("add", "a3")]
    picked = [r["gold"]["observation"] for r in wo.judged_rows(rows, 2)]
    assert picked == ["n1", "a2", "n2", "u1", "a3"]


def test_judge_writes_counts_the_confusion_matrix_beside_the_averages():
    rows = [row("none"), row("none"), row("add")]
    texts = ["<engram>\n</engram>", "<engram>\nupdate semantic 0.9: On rainy turns, the purple "
             "glarb eats only the stone.\n</engram>", "no block"]
    out = wo.judge_writes(texts, rows, embedder="hashing")
    assert out["confusion"] == {"add": {"bad": 1}, "update": {}, "none": {"none": 1, "update": 1}}
    assert out["op_accuracy"] == pytest.approx(1 / 3)
    assert out["adherence"] == pytest.approx(2 / 3)
    assert out["outcome"] == pytest.approx((1.0 + 1.0 - 1.0) / 3)  # the restated rule merged
    text = wo.markdown({"rows": 3, "split": "test", "gold_ops": {"none": 2, "add": 1},
                        "models": {"sft": out},
                        "by_objective": wo.by_objective({"sft": out, "f1-s0": {
                            **out, "objective": "f1"}, "f1-s1": {**out, "objective": "f1"}})})
    assert "| sft | 0.333 | 0 / 0 / 0 | 0 / 0 / 0 | 1 / 0 / 1 |" in text
    assert "| f1 | 2 | 0.333 [0.333, 0.333] |" in text


def test_intervals_over_seeds_and_bad_settings():
    assert wo.interval([]) == {"mean": None, "ci_low": None, "ci_high": None}
    assert wo.interval([0.4])["ci_low"] is None
    low, high = wo.interval([0.4, 0.6])["ci_low"], wo.interval([0.4, 0.6])["ci_high"]
    assert low < 0.4 and high > 0.6
    with pytest.raises(MagsError, match="unknown write objective"):
        wo.WriteObjectivesConfig(objectives=["loss"])
    with pytest.raises(MagsError, match="split must be"):
        wo.WriteObjectivesConfig(split="train")
    stage = wo.objective_stage(wo.WriteObjectivesConfig().role(1), "outcome", 1)
    assert stage.reward_names == list(wo.WRITE_OBJECTIVES["outcome"])
    assert stage.output_dir.endswith("write-outcome-s1") and stage.seed == 1


def test_the_grpo_budget_knobs_widen_the_step_and_mine_by_the_objectives_own_reward():
    cfg = wo.WriteObjectivesConfig(grpo_prompts=4, mine=200)
    plain = wo.objective_stage(cfg.role(0), "f1", 0)
    assert plain.per_device_train_batch_size == plain.num_generations  # the recipe: 1 prompt
    assert plain.mine_candidates == 0
    for objective, reward in (("f1", "engram_reward"), ("outcome", "write_outcome_reward")):
        stage = wo.objective_stage(cfg.role(0), objective, 0, cfg)
        assert stage.per_device_train_batch_size == 4 * stage.num_generations
        assert (stage.mine_candidates, stage.mine_reward) == (200, reward)
        assert stage.mine_lowest_first
    from mags_lib.tasks.rewards import REWARDS

    assert set(wo.MINE_REWARDS.values()) <= set(REWARDS)
    with pytest.raises(MagsError, match="grpo_prompts"):
        wo.WriteObjectivesConfig(grpo_prompts=0)
    with pytest.raises(MagsError, match="mine"):
        wo.WriteObjectivesConfig(mine=-1)


def _trained(tmp_path, stamp):
    d = tmp_path / "write-f1-s0"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"w")
    (d / "manifest.json").write_text('{"wall_s": 526.33}')
    (d / "reward_curve.json").write_text('[{"step": 1, "reward": 1.5}]')
    (d / wo.STAMP).write_text(json.dumps(stamp))
    return d


def test_resume_keeps_a_model_only_under_its_own_stamp(tmp_path):
    stamp = {"base_digest": "ab", "train_hash": "cd", "stage": {"max_steps": 10}}
    d = _trained(tmp_path, stamp)
    assert wo.trained_model(d, stamp) == {"train_s": 526.3,
                                          "reward_curve": [{"step": 1, "reward": 1.5}]}
    for changed in ({**stamp, "base_digest": "other"}, {**stamp, "train_hash": "other"},
                    {**stamp, "stage": {"max_steps": 20}}):
        assert wo.trained_model(d, changed) is None  # write-sft, rows or config changed
    (d / wo.STAMP).write_text("{not json")
    assert wo.trained_model(d, stamp) is None  # a corrupt stamp retrains, never crashes
    (d / wo.STAMP).write_text(json.dumps(stamp))
    (d / "model.safetensors").unlink()
    assert wo.trained_model(d, stamp) is None  # no weights
    assert wo.trained_model(tmp_path / "never-trained", stamp) is None


def test_resume_reuses_saved_outputs_only_for_the_same_judged_rows(tmp_path):
    judged = [row("add", "a1"), row("none", "n1")]
    (tmp_path / "objectives_outputs.json").write_text(json.dumps(
        {"rows": ["a1", "n1"], "outputs": {"f1-s0": ["x", "y"], "short": ["x"]}}))
    assert wo.earlier_outputs(tmp_path, judged) == {"f1-s0": ["x", "y"]}
    assert wo.earlier_outputs(tmp_path, [row("add", "a1"), row("none", "n2")]) == {}
    (tmp_path / "objectives_outputs.json").write_text("truncated {")
    assert wo.earlier_outputs(tmp_path, judged) == {}


def test_a_study_resumes_its_models_and_retrains_what_changed(tmp_path, monkeypatch):
    """run_write_objectives with training and decoding faked: a second run reuses both models
    and their saved outputs; a changed write-sft retrains; a run that dies in training leaves
    no stamp that would vouch for the half-written model."""
    import types

    import mags_lib.train.evaluate as evaluate
    import mags_lib.train.grpo as grpo

    models, out = tmp_path / "models", tmp_path / "results"
    (models / "write-sft").mkdir(parents=True)
    (models / "write-sft" / "model.safetensors").write_bytes(b"sft v1")
    monkeypatch.setattr(wo, "MODELS_DIR", models)
    monkeypatch.setattr(wo, "OBJECTIVES_DIR", models / "objectives")
    rows = {"train": [row("add", "t1")], "test": [row("add", "a1"), row("none", "n1")]}
    monkeypatch.setattr(wo, "load_role_data", lambda role: (rows, {}))
    monkeypatch.setattr(wo, "judge_writes", lambda texts, judged: {"n": len(texts),
                                                                   "texts": list(texts)})
    calls = {"train": [], "generate": 0}

    def fake_grpo(stage, train, evals, init):
        calls["train"].append(stage.name)
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
    cfg = wo.WriteObjectivesConfig(objectives=["f1", "outcome"], seeds=[0], rows_per_op=1)

    first = wo.run_write_objectives(cfg, out)
    assert calls["train"] == ["write-f1", "write-outcome"] and calls["generate"] == 3
    assert first["models"]["f1-s0"]["texts"] == ["write-f1:a1", "write-f1:n1"]

    calls.update(train=[], generate=0)
    second = wo.run_write_objectives(cfg, out)
    assert calls["train"] == [] and calls["generate"] == 1  # only write-sft is decoded again
    assert second["models"]["outcome-s0"] == {**first["models"]["outcome-s0"],
                                              "resumed": True, "train_s": 12.0}

    # notebook 03 re-ran: write-sft's weights change
    (models / "write-sft" / "model.safetensors").write_bytes(b"sft v2, retrained")
    calls.update(train=[], generate=0, die=True)
    with pytest.raises(RuntimeError):
        wo.run_write_objectives(cfg, out)
    assert not (wo.objective_dir("f1", 0) / wo.STAMP).exists()
    calls.update(train=[], die=False)
    wo.run_write_objectives(cfg, out)
    assert calls["train"] == ["write-f1", "write-outcome"]
    stamp = json.loads((wo.objective_dir("f1", 0) / wo.STAMP).read_text())
    assert stamp["stage"]["name"] == "write-f1" and len(stamp["train_hash"]) == 16
