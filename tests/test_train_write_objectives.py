"""The write-objective study (notebook 08): op confusion, judged rows, intervals, bad settings.
Training itself runs in the notebook (SMOKE in the slow chain test)."""

from __future__ import annotations

import pytest

from mags_lib.errors import MagsError
from mags_lib.objectives.completions import chosen_op
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


def test_op_confusion_counts_a_fact_due_and_not_stored_as_dropped():
    """`dropped` is over the add / update rows only: an update written as add is a wrong op
    but stores the fact; an empty block, an unparsable reply or a forget-only block drop it."""
    from mags_lib.objectives.write_metrics import op_confusion

    upd, add, empty = ("<engram>\nupdate semantic 0.9: A.\n</engram>",
                       "<engram>\nadd semantic 0.9: A.\n</engram>", "<engram>\n</engram>")
    texts = [add, empty, "sure", "<engram>\nforget: A\n</engram>", upd, empty, upd]
    gold = [{"op": "update"}, {"op": "update"}, {"op": "add"}, {"op": "add"}, {"op": "update"},
            {"op": "none"}, {"op": "none"}]
    ops = op_confusion(texts, gold)
    assert ops["dropped"] == 3 / 5 and ops["accuracy"] == 2 / 7
    assert op_confusion([empty], [{"op": "none"}])["dropped"] is None


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


def test_bad_settings_and_the_stage_of_an_objective():
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
    from mags_lib.objectives.rewards import REWARDS

    assert set(wo.MINE_REWARDS.values()) <= set(REWARDS)
    with pytest.raises(MagsError, match="grpo_prompts"):
        wo.WriteObjectivesConfig(grpo_prompts=0)
    with pytest.raises(MagsError, match="mine"):
        wo.WriteObjectivesConfig(mine=-1)
