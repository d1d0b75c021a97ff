"""The ask-objective study (notebook 11): the imitation reward, gold queries, judging, stages,
resume. Training itself runs in the notebook (SMOKE in the slow chain test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mags_lib.errors import MagsError
from mags_lib.objectives.rewards import REWARDS, ask_f1_reward, recall_reward
from mags_lib.train import ask_objectives as ao

FACTS = ["On rainy turns, the purple glarb eats only the stone.",
         "On sunny turns, the purple glarb eats only the copper.",
         "The red fox sleeps at noon."]


def row(observation="It is a rainy turn. Which does the purple glarb eat?",
        gold_block="<recall>\nquery: what the purple glarb eats when it is rainy\n</recall>"):
    return {"prompt": [{"role": "user", "content": observation}], "task": "ask",
            "completion": [{"role": "assistant", "content": gold_block}], "game_seed": 7,
            "gold": {"observation": observation, "memory_facts": FACTS,
                     "gold_node_text": FACTS[0]}}


def test_the_imitation_reward_pays_the_annotators_words_not_the_rule_found():
    [r] = ao.with_gold_queries([row()])
    assert r["gold"]["queries"] == ["what the purple glarb eats when it is rainy"]
    assert "queries" not in row()["gold"]  # the rows given are not changed
    copy = "<recall>\nquery: what the purple glarb eats when it is rainy\n</recall>"
    terse = "<recall>\nquery: glarb rainy\n</recall>"  # finds the rule in fewer words
    wrong = "<recall>\nquery: what the purple glarb eats when it is sunny\n</recall>"
    f1 = ask_f1_reward([copy, terse, wrong, "<recall>\n</recall>"], gold=[r["gold"]] * 4)
    found = recall_reward([copy, terse, wrong], gold=[r["gold"]] * 3, k=1)
    assert f1[0] == 1.0 and f1[3] == 0.0 and f1[2] > f1[1]  # the wrong weather imitates better
    assert found == [1.0, 1.0, 0.0]
    assert ask_f1_reward([copy], gold=[{"observation": "x"}]) == [None]  # no annotation
    assert "ask_f1_reward" in REWARDS


def test_each_objective_is_the_ask_recipe_with_its_own_rewards_and_mining():
    cfg = ao.AskObjectivesConfig()
    stages = {o: ao.objective_stage(cfg.role(1), o, 1) for o in ao.ASK_OBJECTIVES}
    recipe = cfg.role(1).stages()[1]
    for objective, stage in stages.items():
        assert stage.reward_names == list(ao.ASK_OBJECTIVES[objective])
        assert set(stage.reward_names) <= set(REWARDS)
        assert (stage.max_steps, stage.num_generations, stage.learning_rate, stage.seed) == (
            recipe.max_steps, recipe.num_generations, recipe.learning_rate, 1)
        assert stage.mine_candidates == recipe.mine_candidates > 0
        assert stage.mine_reward == ao.MINE_REWARDS[objective]
        assert Path(stage.output_dir).name == f"ask-{objective}-s1"
    assert stages["outcome"].reward_names == recipe.reward_names  # notebook 02's objective
    assert "recall_reward" not in stages["f1"].reward_names
    with pytest.raises(MagsError, match="unknown ask objective"):
        ao.AskObjectivesConfig(objectives=["f1", "vibes"])
    with pytest.raises(MagsError, match="split"):
        ao.AskObjectivesConfig(split="train")


def test_judging_reports_both_retrievers_and_the_f1_beside_each_other():
    rows = ao.with_gold_queries([row(), row()])
    texts = ["<recall>\nquery: purple glarb rainy stone\n</recall>", "no block"]
    out = ao.judge_asks(texts, rows, {"k": 1, "embedder": "hashing"})
    assert out["n"] == 2 and out["adherence"] == 0.5
    assert out["hit_at_1"] == 0.5 and out["query_hit_at_1"] == 1.0
    assert 0.0 < out["f1"] < 0.5
    text = ao.markdown({"rows": 2, "split": "test", "models": {"sft": out},
                        "by_objective": ao.by_objective({"f1-s0": {**out, "objective": "f1"},
                                                         "f1-s1": {**out, "objective": "f1"}})})
    assert "| sft | 0.500 |" in text and "| f1 | 2 | 0.500 [0.500, 0.500] |" in text


def test_a_missing_ask_sft_names_the_notebook_that_makes_it(tmp_path, monkeypatch):
    monkeypatch.setattr(ao, "MODELS_DIR", tmp_path)
    with pytest.raises(MagsError, match="notebook 02"):
        ao.run_ask_objectives(ao.AskObjectivesConfig(), tmp_path / "out")
