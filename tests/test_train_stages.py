"""mags_lib.train role runs: configs and sizing, data loading, the report, the router check,
the CLI; one slow end-to-end SMOKE run of the ask role on tiny rows."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace

import pytest

from mags_lib.agents import router
from mags_lib.errors import MagsError
from mags_lib.game.senseless import game_observations
from mags_lib.objectives.data import write_jsonl
from mags_lib.objectives.rewards import REWARDS
from mags_lib.train import common
from mags_lib.train.__main__ import build_config, main
from mags_lib.train.report import RoleReport, StageRecord, compare_single_model
from mags_lib.train.roles import (
    ROLE_REWARDS,
    ROLES,
    RoleTrainConfig,
    estimate_seconds,
)
from mags_lib.train.stages import first_per_task, load_role_data, train_role

CREATURES = ["purple glarb", "red fox", "green snail", "blue drake"]
ITEMS, WEATHER = ["stone", "carrot", "moss", "apple"], ["rainy", "sunny", "windy"]


def rule(rng: random.Random) -> tuple[str, str, str]:
    return rng.choice(CREATURES), rng.choice(WEATHER), rng.choice(ITEMS)


def tiny_rows(task: str, n: int, seed: int = 0) -> list[dict]:
    """Short rows of one task in the training row format (prompts of ~40 tokens)."""
    rng, rows = random.Random(seed), []
    for i in range(n):
        c, w, item = rule(rng)
        fact = f"On {w} turns, the {c} eats only the {item}."
        question = f"It is a {w} turn. The {c} is offered the {item} and the moss."
        completion, gold = {
            "ask": (f"<recall>\nquery: what does the {c} eat on {w} turns\n</recall>",
                    {"memory_facts": [fact, "Kashtiro lies by the sea."], "gold_node_text": fact}),
            "write": (f"<engram>\nadd semantic 0.90: {fact}\n</engram>",
                      {"ops": [{"op": "add", "text": fact}]}),
            "answer": (f"<answer>{item}</answer>", {"answer": item, "options": [item, "moss"]}),
        }[task]
        rows.append({"prompt": [{"role": "system", "content": f"You are the {task} model."},
                                {"role": "user", "content": question if task != "write" else fact}],
                     "completion": [{"role": "assistant", "content": completion}],
                     "task": task, "gold": gold, "game_seed": i})
    return rows


def write_data(root, tasks=("ask",), n=(12, 6, 4)) -> None:
    for task in tasks:
        for split, count, seed in zip(("train", "val", "test"), n, (0, 1, 2), strict=True):
            write_jsonl(root / task / f"{split}.jsonl", tiny_rows(task, count, seed))


# ----- config and sizing ---------------------------------------------------------------------


def test_role_defaults_pick_registered_rewards_and_distinct_models(tmp_path):
    for role in ROLES:
        cfg = RoleTrainConfig(role=role, models_dir=str(tmp_path))
        sft, grpo = cfg.stages()
        assert grpo.reward_names == list(ROLE_REWARDS[role])
        assert set(grpo.reward_names) <= set(REWARDS)
        assert len(grpo.reward_weights) == len(grpo.reward_names)
        assert sft.out_dir == tmp_path / f"{role}-sft" and grpo.out_dir == tmp_path / f"{role}-grpo"
        assert grpo.per_device_train_batch_size % grpo.num_generations == 0
        assert sft.max_eval_rows == grpo.max_eval_rows == cfg.eval_rows * len(cfg.tasks)
        json.dumps(cfg.to_dict())
    assert "recall_reward" in ROLE_REWARDS["ask"] and "engram_reward" in ROLE_REWARDS["write"]
    assert list(ROLE_REWARDS["answer"]) == ["answer_reward", "format_reward"]
    with pytest.raises(MagsError, match="unknown role"):
        RoleTrainConfig(role="dance")


def test_run_wide_fields_reach_both_stages_and_with_steps_overrides_steps():
    cfg = RoleTrainConfig(role="write", seed=7, torch_threads=1, base_model="x").with_steps(5, 3)
    sft, grpo = cfg.stages()
    assert (sft.max_steps, grpo.max_steps) == (5, 3)
    assert sft.seed == grpo.seed == 7 and sft.torch_threads == grpo.torch_threads == 1
    assert sft.base_model == "x" and sft.eval_max_tokens == grpo.eval_max_tokens == 48
    assert cfg.with_steps().sft.max_steps == 5  # None keeps the stage's own


def test_estimates_grow_with_steps_and_smoke_shrinks_them():
    # The full run's time is measured (README, manifests), not asserted from an estimate fitted
    # to that same run. What is checked: SMOKE sizes are far smaller, and the estimate follows
    # the step counts it is given.
    full = sum(sum(estimate_seconds(RoleTrainConfig(role=r)).values())
               for r in ("ask", "write", "answer"))
    smoke = {r: sum(estimate_seconds(RoleTrainConfig(role=r, smoke=True)).values())
             for r in ("ask", "write", "answer")}
    # notebook 02 trains ask + answer, 03 write: each within the 3-minute SMOKE budget
    assert smoke["ask"] + smoke["answer"] <= 3 * 60 - 30 and smoke["write"] <= 90, smoke
    assert sum(smoke.values()) < full / 10, (smoke, full)
    ask = RoleTrainConfig(role="ask")
    more = sum(estimate_seconds(ask.with_steps(80, 50)).values())
    assert more > sum(estimate_seconds(ask).values())
    small = RoleTrainConfig(role="mixed", smoke=True)
    sft, grpo = small.stages()
    assert sft.max_steps <= 3 and grpo.max_steps <= 2 and sft.eval_max_tokens <= 16
    assert small.eval_rows_per_task() == 2  # 4 judged rows shared by the two tasks


def test_base_model_judged_on_the_first_rows_when_asked():
    full = RoleTrainConfig(role="ask", eval_rows=160)
    fewer = replace(full, base_eval_rows=40)
    assert full.base_rows_per_task() == 160 and fewer.base_rows_per_task() == 40
    assert replace(full, base_eval_rows=500).base_rows_per_task() == 160  # never more
    assert replace(fewer, smoke=True).base_rows_per_task() == 4  # SMOKE shrinks both
    assert replace(full, base_eval_rows=0).base_rows_per_task() == 1
    # the base stage is the only one that gets cheaper
    a, b = estimate_seconds(full), estimate_seconds(fewer)
    assert b["base"] < a["base"] and {k: v for k, v in a.items() if k != "base"} == {
        k: v for k, v in b.items() if k != "base"}


# ----- data ----------------------------------------------------------------------------------


def test_missing_data_names_notebook_01_before_loading_any_model(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr("mags_lib.models.torch_checkpoint", boom)
    with pytest.raises(MagsError) as err:
        train_role(RoleTrainConfig(role="ask", data_dir=str(tmp_path / "nothing")))
    assert "ask/train.jsonl" in err.value.cause and "notebook 01" in err.value.fix
    write_jsonl(tmp_path / "bad" / "ask" / "train.jsonl", [{"not": "a row"}])
    write_jsonl(tmp_path / "bad" / "ask" / "val.jsonl", tiny_rows("ask", 2))
    with pytest.raises(MagsError, match="no valid ask rows"):
        load_role_data(RoleTrainConfig(role="ask", data_dir=str(tmp_path / "bad")))


def test_load_role_data_mixes_tasks_keeps_val_order_and_counts_skips(tmp_path):
    write_data(tmp_path, tasks=("ask", "write"))
    with (tmp_path / "write" / "val.jsonl").open("a") as fh:
        fh.write("{broken\n")
    (tmp_path / "ask" / "test.jsonl").unlink()  # test is optional
    cfg = RoleTrainConfig(role="mixed", data_dir=str(tmp_path), seed=3)
    rows, skips = load_role_data(cfg)
    assert len(rows["train"]) == 24 and {r["task"] for r in rows["train"][:8]} == {"ask", "write"}
    assert rows["train"] == load_role_data(cfg)[0]["train"]  # the seed fixes the order
    assert rows["val"][:6] == tiny_rows("ask", 6, 1) and len(rows["test"]) == 4
    assert skips["write/val"]["reasons"] == {"bad_json": 1} and "ask/test" not in skips
    picked = first_per_task(rows["val"], 2)
    assert [r["task"] for r in picked] == ["ask", "ask", "write", "write"]


def test_source_repeats_weigh_a_source_up_in_train_only_and_reject_unknown_sources(tmp_path):
    rows = tiny_rows("write", 6, 0)
    for r in rows[:2]:
        r["gold"]["source"] = "persona"
    for split in ("train", "val"):
        write_jsonl(tmp_path / "write" / f"{split}.jsonl", rows)
    cfg = RoleTrainConfig(role="write", data_dir=str(tmp_path), source_repeats={"game": 3})
    got = load_role_data(cfg)[0]
    sources = Counter(r["gold"].get("source", "game") for r in got["train"])
    assert sources == {"game": 12, "persona": 2} and got["val"] == rows
    with pytest.raises(MagsError, match="locomo"):
        load_role_data(replace(cfg, source_repeats={"locomo": 2}))
    with pytest.raises(MagsError, match="whole numbers"):
        RoleTrainConfig(role="write", source_repeats={"game": 0})


def test_sources_keep_one_sides_rows_in_every_split_and_refuse_what_is_not_there(tmp_path):
    rows = tiny_rows("write", 6, 0)
    for r in rows[:2]:
        r["gold"]["source"] = "persona"
    for split in ("train", "val", "test"):
        write_jsonl(tmp_path / "write" / f"{split}.jsonl", rows)
    cfg = RoleTrainConfig(role="write", data_dir=str(tmp_path), sources=["persona"])
    got = load_role_data(cfg)[0]
    assert {s: [r["gold"].get("source") for r in got[s]] for s in got} == {
        s: ["persona", "persona"] for s in ("train", "val", "test")}
    game = load_role_data(replace(cfg, sources=["game"]))[0]
    assert len(game["train"]) == 4 and all("source" not in r["gold"] for r in game["val"])
    with pytest.raises(MagsError, match="no train or val rows of sources"):
        load_role_data(replace(cfg, sources=["locomo"]))
    with pytest.raises(MagsError, match="no known source"):
        RoleTrainConfig(role="write", sources=["gam"])
    with pytest.raises(MagsError, match="no known source"):
        RoleTrainConfig(role="write", sources=[])


# ----- report, figure, router, CLI -----------------------------------------------------------


def fake_report(role="ask", tasks=("ask",)) -> RoleReport:
    def gen(adherence, accuracy, per_query=None):
        return {t: {"n": 4, "adherence": adherence, "format_mean": adherence,
                    "accuracy_name": "recall_hit_rate", "accuracy": accuracy, "seconds": 1.5,
                    **({"query_hit_at": {"1": per_query}} if per_query is not None else {}),
                    "samples": [{"prompt": "p", "output": "o", "format": 0.0,
                                 "task_score": 0.0}]} for t in tasks}

    stages = {"base": StageRecord("base", gen(0.0, 0.0), 3.0, 900.0),
              "sft": StageRecord("sft", gen(0.9, 0.5, 0.6), 30.0, 2000.0, train_s=20.0,
                                 steps=10, lora_max_change=0.01),
              "grpo": StageRecord("grpo", gen(1.0, 0.75, 0.55), 40.0, 2100.0, train_s=30.0,
                                  steps=5)}
    return RoleReport(role=role, tasks=tasks, config={}, data={}, stages=stages,
                      loss_curve=[{"step": 1, "loss": 2.0}, {"step": 2, "loss": 1.0}],
                      reward_curve=[{"step": 1, "reward": 0.5, "rewards/format_reward/mean": 0.5},
                                    {"step": 2, "reward": 0.9, "rewards/format_reward/mean": 1.0}])


def test_report_table_targets_save_and_figure(tmp_path):
    report = fake_report()
    table = report.table()
    assert [r["stage"] for r in table] == ["base", "SFT", "SFT+GRPO"]
    assert table[1]["eval_s"] == 1.5 and table[2]["steps"] == 5
    assert report.targets()["ask"] == {"adherence": 1.0, "adherence_met": True,
                                       "recall_sft": 0.5, "recall_grpo": 0.75,
                                       "recall_grpo_above_sft": True,
                                       "query_recall_sft": 0.6, "query_recall_grpo": 0.55,
                                       "query_recall_grpo_above_sft": False}
    assert "| SFT+GRPO | ask |" in report.markdown() and "peak_cuda_mb" not in report.markdown()
    # with per-row hits on the same rows, the paired gain and its interval over games
    games = [1, 1, 2, 2, 3, 3, 4, 4]
    report.stages["sft"].generation["ask"].update(
        row_hits_at_1=[[True, False]] * 8, row_games=games)
    report.stages["grpo"].generation["ask"].update(
        row_hits_at_1=[[True]] * 7 + [[False]], row_games=games)
    gain = report.targets()["ask"]["recall_gain"]
    q, b = gain["per_query"], gain["per_block"]
    # game 4: SFT 2 of 4 queries, GRPO 1 of 2: a tie
    assert (q["a"], q["b"], q["groups"], q["groups_b_ahead"], q["groups_b_behind"]) == (
        0.5, 7 / 8, 4, 3, 0)
    assert q["beyond_noise"] and q["ci"][0] > 0
    assert (b["gain"], b["rows_b_behind"], b["beyond_noise"]) == (-1 / 8, 1, False)
    report.stages["grpo"].generation["ask"]["row_games"] = games[::-1]  # other rows: no pair
    assert "recall_gain" not in report.targets()["ask"]
    assert report.samples_text(1).count("output:") == 3
    paths = report.save(tmp_path)
    assert json.loads(paths["table"].read_text()) == table
    assert paths["csv"].read_text().splitlines()[0].startswith("stage,task,n,adherence")
    assert RoleReport.load(paths["report"]).table() == table
    metrics = json.loads(json.dumps(report.metrics(), default=str))
    assert metrics["reward_last"] == 0.9 and metrics["test_note"] == ""
    from mags_lib.plots import save_figure
    from mags_lib.train.figures import plot_role_training

    assert save_figure(plot_role_training(report), tmp_path / "c.png").stat().st_size > 1000
    mixed = fake_report("mixed", ("ask", "write"))
    rows = compare_single_model(mixed, {"ask": table})
    assert len(rows) == 6 and rows[0]["separate_adherence"] == 0.0
    assert rows[1]["task"] == "write" and rows[1]["separate_adherence"] is None


def test_router_routes_every_game_observation_kind_as_needed():
    check = router.router_accuracy(game_observations([100, 101], episode_length=80))
    assert check["accuracy"] == 1.0 and {"decide", "announce"} <= set(check["by_kind"])
    old_rules = {"decision": ("ask", "answer"), "information": ("write",)}
    stale = router.router_accuracy(game_observations([100], episode_length=80),
                                   router=lambda o: router.route(o, old_rules))
    assert stale["accuracy"] < 1.0 and stale["errors"][0]["expected"] == ["ask", "answer"]


def test_cli_builds_the_config_the_notebooks_build():
    import argparse

    args = argparse.Namespace(role="answer", smoke=True, seed=2, torch_threads=1,
                              base_model="embedded", data_dir="/d", models_dir="/m",
                              eval_rows=10, base_eval_rows=3, no_test=True, sft_steps=7,
                              grpo_steps=None, no_unsloth=True)
    cfg = build_config(args)
    assert cfg.sft.use_unsloth is False and cfg.grpo.use_unsloth is False
    auto = replace(cfg, sft=replace(cfg.sft, use_unsloth="auto"),
                   grpo=replace(cfg.grpo, use_unsloth="auto"))
    assert auto == RoleTrainConfig(role="answer", smoke=True, seed=2, torch_threads=1,
                                   data_dir="/d", models_dir="/m", eval_rows=10,
                                   base_eval_rows=3, eval_test=False).with_steps(7)
    default = build_config(argparse.Namespace(**{**vars(args), "eval_rows": None,
                                                 "base_eval_rows": None}))
    assert default.eval_rows == RoleTrainConfig().eval_rows
    assert default.base_eval_rows is None
    weighted = build_config(argparse.Namespace(**{**vars(args), "source_repeats": [("game", 2)]}))
    assert weighted.source_repeats == {"game": 2}
    one_side = build_config(argparse.Namespace(**{**vars(args), "sources": ["game"]}))
    assert one_side.sources == ["game"] and default.sources is None
    with pytest.raises(SystemExit):
        main(["--role", "poetry"])
    with pytest.raises(SystemExit):
        main(["--role", "write", "--source-repeats", "game"])


def test_only_the_main_process_writes_manifests(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    assert not common.is_main_process()
    common.write_manifest(tmp_path, None, stage="sft")
    assert not (tmp_path / "manifest.json").exists()
    monkeypatch.setenv("RANK", "0")
    common.write_manifest(tmp_path, None, stage="sft")
    assert json.loads((tmp_path / "manifest.json").read_text())["stage"] == "sft"


def test_peak_memory_sees_an_allocation():
    import mmap
    import time

    from mags_lib.rss import current_rss_mb

    size = 64 * 2**20
    start = current_rss_mb()
    with common.peak_memory(interval_s=0.01) as mem:
        # fresh anonymous pages (numpy could reuse memory freed by earlier tests, which is
        # already resident, and then RSS would not move)
        block = mmap.mmap(-1, size)
        block.write(b"\x01" * size)  # touch every page
        time.sleep(0.1)  # a few samples while it is held
        block.close()
    assert mem["rss_mb"] >= start + 48 and mem["cuda_mb"] is None


# ----- end to end ----------------------------------------------------------------------------


@pytest.mark.slow
def test_train_role_smoke_end_to_end_on_tiny_rows(tmp_path):
    write_data(tmp_path / "data")
    cfg = RoleTrainConfig(role="ask", smoke=True, torch_threads=1, eval_test=True,
                          base_eval_rows=2, data_dir=str(tmp_path / "data"),
                          models_dir=str(tmp_path / "models"))
    report = train_role(cfg)
    assert [r["stage"] for r in report.table()] == ["base", "SFT", "SFT+GRPO"]
    assert [r["n"] for r in report.table()] == [2, 4, 4]  # base: the first 2 of the 4 rows
    assert all(0.0 <= r["adherence"] <= 1.0 for r in report.table())
    assert report.data["n_judged"] == {"val": 4, "base_val": 2, "test": 4}
    base_prompts = [s["prompt"] for s in report.stages["base"].generation["ask"]["samples"]]
    sft_prompts = [s["prompt"] for s in report.stages["sft"].generation["ask"]["samples"]]
    assert base_prompts == sft_prompts[:2]
    for stage in ("sft", "grpo"):
        model_dir = tmp_path / "models" / f"ask-{stage}"
        manifest = json.loads((model_dir / "manifest.json").read_text())
        assert manifest["stage"] == stage and (model_dir / "config.json").is_file()
        assert list((model_dir / "tensorboard").glob("events.out.tfevents*"))
    assert report.stages["sft"].lora_max_change > 0 and report.stages["sft"].steps == 2
    assert len(report.loss_curve) == 2 and len(report.reward_curve) == 1
    assert report.test is not None and report.test["ask"]["n"] == 4
    k = cfg.stages()[1].reward_params["recall_reward"]["k"]
    for stage, rec in report.stages.items():  # every stage judged at the reward's depth
        judged = rec.generation["ask"]
        assert judged["accuracy"] == judged["hit_at"][k], stage

    # run again: every model is loaded and every judging kept (`judgments.py`), none repeated
    import mags_lib.train.evaluate as evaluate

    def no_judging(*args, **kwargs):
        raise AssertionError("a model was judged again")

    real = evaluate.eval_by_task
    evaluate.eval_by_task = no_judging
    try:
        again = train_role(cfg)
    finally:
        evaluate.eval_by_task = real

    def bare(generation):
        return {t: {k: v for k, v in r.items() if k != "reused_judgment_of"}
                for t, r in generation.items()}
    for stage, rec in again.stages.items():
        assert rec.generation["ask"]["reused_judgment_of"], stage
        assert bare(rec.generation) == report.stages[stage].generation, stage
        assert rec.generation["ask"]["hit_at"][k] == rec.generation["ask"]["accuracy"]
    assert bare(again.test) == report.test
    assert (tmp_path / "models" / "judged" / "ask-base.json").is_file()
