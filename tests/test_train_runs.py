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


def write_rows(n: int) -> list[dict]:
    """Write rows in the dataset's shape: an empty block, an add and an update in turn."""
    rows = []
    for i in range(n):
        fact = f"On {WEATHER[i % 3]} turns, the {COLORS[i % 4]} {CREATURES[i % 4]} eats only the {FOODS[i % 4]}."
        op = ("none", "add", "update")[i % 3]
        body = "" if op == "none" else f"{op} semantic 0.95: {fact}\n"
        rows.append({"prompt": [{"role": "system", "content": "Store only what is new."},
                                {"role": "user", "content": f"Memory:\n(empty)\n\nNew turn: {fact}"}],
                     "completion": [{"role": "assistant", "content": f"<engram>\n{body}</engram>"}],
                     "task": "write", "game_seed": i,
                     "gold": {"ops": [] if op == "none" else [{"op": op, "text": fact,
                                                               "block": "semantic"}],
                              "op": op}})
    return rows


@pytest.mark.slow
def test_the_decision_token_is_the_write_op_in_real_tokens_and_its_loss_is_logged(tmp_path):
    """On the embedded tokenizer's chat template the weighted token is the op (`add`,
    `update`, or the `</` that closes an empty block), and a weighted SFT run logs its loss."""
    from transformers import AutoTokenizer

    from mags_lib.models import torch_checkpoint
    from mags_lib.train.sft_loss import decision_positions, newline_token_ids

    tok = AutoTokenizer.from_pretrained(str(torch_checkpoint("embedded")))
    newlines = newline_token_ids(tok)
    for row, want in zip(write_rows(3), ("</", "add", "update"), strict=True):
        prompt = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        full = tok.apply_chat_template(row["prompt"] + row["completion"], tokenize=False)
        ids = tok(full, add_special_tokens=False)["input_ids"]
        n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
        labels = torch.tensor([[-100] * n_prompt + ids[n_prompt:]])
        pos = decision_positions(labels, newlines).item()
        assert tok.decode([ids[pos]]) == want

    rows = write_rows(6)
    cfg = SFTStageConfig(name="test-dw", output_dir=str(tmp_path / "dw"), max_length=96,
                         decision_token_weight=10.0, eval_generate=False,
                         **{**TINY, "max_steps": 2})
    result = run_sft(cfg, rows[:4], rows[4:])
    assert all("decision_loss" in e and "decision_accuracy" in e for e in result.loss_curve)
    assert "eval_loss" in result.metrics  # evaluation is unweighted


@pytest.mark.slow
def test_the_compact_sft_loss_equals_trls_on_a_real_batch(tmp_path):
    """sft_loss.py runs the LM head on the supervised positions only (TRL's kernel scores every
    position off Triton); on one batch of write rows both give the same loss and metrics."""
    from trl import SFTConfig, SFTTrainer

    from mags_lib.objectives.data import to_dataset
    from mags_lib.train.backend import load_trainable
    from mags_lib.train.common import trainer_kwargs
    from mags_lib.train.sft_loss import completion_loss_trainer

    cfg = SFTStageConfig(name="test-eq", output_dir=str(tmp_path / "eq"), max_length=96, **TINY)
    model, tok, _ = load_trainable(cfg.base_model, cfg)
    args = SFTConfig(**trainer_kwargs(cfg, tmp_path / "eq", False), max_length=96,
                     completion_only_loss=True)
    data = dict(model=model, args=args, train_dataset=to_dataset(write_rows(4), "sft"))
    trl_trainer = SFTTrainer(processing_class=tok, **data)
    ours = completion_loss_trainer(1.0, tok, **data)
    batch = next(iter(trl_trainer.get_train_dataloader()))
    model.eval()
    with torch.no_grad():
        losses = [t.compute_loss(model, dict(batch)).item() for t in (trl_trainer, ours)]
    assert losses[0] == pytest.approx(losses[1], rel=1e-4)
    for key in ("mean_token_accuracy", "entropy"):
        assert trl_trainer._metrics["eval"][key][0] == pytest.approx(
            ours._metrics["eval"][key][0], rel=1e-3)


@pytest.mark.slow
def test_grpo_scores_the_completions_alone_with_the_same_numbers(tmp_path, monkeypatch):
    """grpo.compact_fused_head makes TRL's fused head score only the labelled positions off
    Triton too; the log-probs and entropies there are the ones it gives scoring every row."""
    import trl.trainer.utils as trl_utils
    from trl.trainer.utils import add_fused_lm_head

    rows_scored = []
    kernel = trl_utils._ChunkedLogProbFunction

    class Counting:
        @staticmethod
        def apply(hidden, *args):
            rows_scored.append(hidden.shape[0])
            return kernel.apply(hidden, *args)

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", Counting)

    from mags_lib.train.backend import load_trainable
    from mags_lib.train.grpo import compact_fused_head

    cfg = SFTStageConfig(name="test-fh", output_dir=str(tmp_path / "fh"), **TINY)
    model, _, _ = load_trainable(cfg.base_model, cfg)
    base = model.get_base_model()
    add_fused_lm_head(base, outputs=("log_probs", "entropy"))
    model.eval()
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 24))
    mask = torch.ones_like(ids)
    mask[1, :5] = 0  # a left-padded prompt, as GRPO's
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-8] = -100  # only the last 8 tokens, the completion, are scored
    with torch.no_grad():
        full = base(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        with compact_fused_head() as switched:
            compact = base(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    assert switched  # this TRL has the switch; if a new one drops it, the test says so
    scored = labels[:, 1:] != -100
    assert rows_scored == [2 * 23, 16]  # every shifted position, then the 2 x 8 scored ones
    for key in ("log_probs", "entropy"):
        a, b = getattr(full, key), getattr(compact, key)
        assert torch.allclose(a[scored], b[scored], atol=1e-4)
        assert not b[~scored].any()  # unscored positions stay zero
