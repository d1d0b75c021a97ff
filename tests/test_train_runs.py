"""mags_lib.train with the real embedded SmolLM2-135M: backend fallback, a tiny SFT and GRPO run.

The SFT and GRPO runs are a few steps on a handful of rows: they check that the code path works
(adapter weights move, the merged model saves and reloads, rewards are logged), not quality.
"""

from __future__ import annotations

import json
import random

import pytest
import torch

from mags_lib.train import GRPOStageConfig, SFTStageConfig, generate_and_score, run_grpo, run_sft
from mags_lib.train.backend import load_trainable

SYSTEM = "You read a memory. Reply with a <recall> block of one or two queries."
COLORS, CREATURES = ["purple", "red", "green", "blue"], ["glarb", "fox", "snail", "drake"]
FOODS, WEATHER = ["stones", "carrots", "moss", "apples"], ["rainy", "sunny", "windy"]


def ask_rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        c, k, f, w = (rng.choice(x) for x in (COLORS, CREATURES, FOODS, WEATHER))
        fact = f"On {w} turns the {c} {k} eats {f}."
        rows.append({
            "prompt": [{"role": "system", "content": SYSTEM},
                       {"role": "user", "content": f"It is {w}. The {c} {k} is hungry."}],
            "completion": [{"role": "assistant",
                            "content": f"<recall>\nquery: what does the {c} {k} eat on {w} turns\n</recall>"}],
            "task": "ask", "game_seed": i,
            "gold": {"memory_facts": ["The red fox sleeps at noon.", fact,
                                      "Kashtiro lies by the sea."], "gold_node_text": fact}})
    return rows


# One torch thread: on a shared 2-core machine two threads thrash (10x slower) when another
# process holds a core; run_sft / run_grpo restore the thread count afterwards.
TINY = dict(max_steps=3, per_device_train_batch_size=2, eval_max_tokens=8, logging_steps=1,
            torch_threads=1)


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the CPU fallback")
def test_unsloth_requested_without_cuda_falls_back_to_peft_with_a_warning():
    with pytest.warns(UserWarning, match="Unsloth was asked for"):
        model, tokenizer, info = load_trainable("embedded", SFTStageConfig(use_unsloth=True))
    assert info["backend"] == "peft" and "no CUDA GPU" in info["reason"]
    assert 0 < info["trainable_params"] < info["total_params"] / 20
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert tokenizer.pad_token is not None


@pytest.fixture(scope="module")
def sft_result(tmp_path_factory):
    rows = ask_rows(10)
    cfg = SFTStageConfig(name="test-sft", output_dir=str(tmp_path_factory.mktemp("sft")),
                         max_length=96, **TINY)
    return run_sft(cfg, rows[:8], rows[8:])


@pytest.mark.slow
def test_sft_moves_lora_weights_and_saves_a_loadable_merged_model(sft_result):
    from transformers import AutoModelForCausalLM

    r = sft_result
    assert r.metrics["steps"] == 3 and r.metrics["lora_max_change"] > 0
    assert len(r.loss_curve) == 3 and all("loss" in e for e in r.loss_curve)
    assert (r.adapter_dir / "adapter_config.json").is_file()
    assert not r.model.training
    manifest = json.loads((r.model_dir / "manifest.json").read_text())
    for key in ("base_model", "data_hash", "config", "metrics", "wall_s", "peak_rss_mb", "backend"):
        assert key in manifest, key
    assert manifest["config"]["max_length"] == 96
    assert manifest["metrics"]["generation"]["ask"]["n"] == 2
    reloaded = AutoModelForCausalLM.from_pretrained(str(r.model_dir))
    name = "model.layers.0.self_attn.q_proj.weight"
    assert torch.equal(reloaded.state_dict()[name], r.model.state_dict()[name])
    base = AutoModelForCausalLM.from_pretrained(r.info["model_path"])
    assert not torch.equal(base.state_dict()[name], reloaded.state_dict()[name])


@pytest.mark.slow
def test_generate_and_score_from_a_checkpoint_dir(sft_result):
    report = generate_and_score(str(sft_result.model_dir), ask_rows(2, seed=5), kind="recall",
                                max_tokens=8)
    assert report["n"] == 2 and 0.0 <= report["adherence"] <= 1.0
    assert report["samples"][0]["output"] != ""


@pytest.mark.slow
def test_grpo_runs_and_logs_rewards(sft_result, tmp_path):
    threads_before = torch.get_num_threads()
    cfg = GRPOStageConfig(name="test-grpo", output_dir=str(tmp_path / "grpo"),
                          num_generations=2, max_completion_length=16, beta=0.0,
                          reward_names=["format_reward", "guardrail_reward"],
                          reward_weights=[1.0, 0.5], **{**TINY, "max_steps": 2})
    r = run_grpo(cfg, ask_rows(4), [], sft_result.model_dir)
    assert r.metrics["steps"] == 2 and len(r.reward_curve) == 2
    for entry in r.reward_curve:
        assert {"reward", "rewards/format_reward/mean", "rewards/guardrail_reward/mean"} <= set(entry)
    assert json.loads((r.model_dir / "reward_curve.json").read_text()) == r.reward_curve
    assert list((r.model_dir / "tensorboard").glob("events.out.tfevents*"))
    assert (r.model_dir / "config.json").is_file() and not r.model.training
    assert torch.get_num_threads() == threads_before
