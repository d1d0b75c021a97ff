"""GRPO on top of the SFT model: sample a group of completions per prompt, score them with the
named rewards, and push the policy toward the better-than-group-mean ones.

    result = run_grpo(GRPOStageConfig(name="ask-grpo"), train_rows, eval_rows, "models/ask-sft")
    result.reward_curve   # [{"step": 1, "reward": ..., "rewards/format_reward/mean": ...}, ...]

TRL's `GRPOTrainer` does the algorithm: advantage = (reward - group mean) / group std, a
clipped policy ratio (`epsilon`), an optional KL term to the starting model (`beta`; with LoRA
the reference is the same weights with the adapter switched off, i.e. the SFT model). A fresh
LoRA adapter is trained on the merged SFT checkpoint, then merged and saved like SFT's. With
`cfg.mine_candidates`, the prompts are mined first: the training rows the starting model does
not yet get fully right come first (`mining.py`).
The reward curve comes from `trainer.state.log_history` and is saved as `reward_curve.json`
for the notebook to plot; TensorBoard logs go to `models/<name>/tensorboard/`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.manifest import write_json
from mags_lib.objectives.data import data_hash, to_dataset
from mags_lib.objectives.reward_guard import take_reward_issues
from mags_lib.objectives.rewards import build_rewards
from mags_lib.train.backend import load_trainable
from mags_lib.train.common import (
    curve,
    is_main_process,
    load_merged,
    lora_change,
    lora_state,
    point_tensorboard,
    run_context,
    save_merged,
    timed,
    trainer_kwargs,
    write_manifest,
)
from mags_lib.train.config import GRPOStageConfig
from mags_lib.train.judgments import judged_by_task
from mags_lib.train.mining import mine_prompts
from mags_lib.train.resume import (
    agreed_resume_point,
    clear,
    finished_run,
    model_stamp,
    run_fingerprint,
)

log = logging.getLogger(__name__)

CURVE_KEYS = ("reward", "rewards/", "kl", "loss", "completions/mean_length",
              "clip_ratio/region_mean", "learning_rate")


@dataclass
class GRPOResult:
    """Where the trained model went, its reward curve and metrics; `model` is merged, eval mode."""

    model_dir: Path
    adapter_dir: Path
    metrics: dict[str, Any]
    info: dict[str, Any]
    reward_curve: list[dict] = field(default_factory=list)
    model: Any = field(default=None, repr=False)
    tokenizer: Any = field(default=None, repr=False)


def grpo_args(cfg: GRPOStageConfig, out: Path, cuda: bool):
    """TRL `GRPOConfig` for a stage config."""
    from trl import GRPOConfig

    if len(cfg.reward_weights) != len(cfg.reward_names):
        from mags_lib.errors import MagsError

        raise MagsError(f"{len(cfg.reward_names)} reward names but {len(cfg.reward_weights)} "
                        "weights", "give one weight per name in GRPOStageConfig.reward_weights")
    return GRPOConfig(**trainer_kwargs(cfg, out, cuda), num_generations=cfg.num_generations,
                      max_completion_length=cfg.max_completion_length,
                      temperature=cfg.temperature, beta=cfg.beta, epsilon=cfg.epsilon,
                      loss_type=cfg.loss_type, scale_rewards=cfg.scale_rewards,
                      reward_weights=list(cfg.reward_weights), remove_unused_columns=False,
                      log_completions=cfg.log_completions, shuffle_dataset=True)


def run_grpo(cfg: GRPOStageConfig, train_rows: list[dict], eval_rows: list[dict],
             init_model_dir: str | Path) -> GRPOResult:
    """Train a LoRA adapter with GRPO from `init_model_dir` (the merged SFT model), merge and
    save it under `cfg.out_dir`, save the reward curve, judge it on `eval_rows`."""
    cfg = cfg.resolved()
    train_rows, eval_rows = train_rows[: cfg.max_train_rows], eval_rows[: cfg.max_eval_rows]
    # of the rows before mining: mining is a greedy pass, fixed by the rows, config and model
    fingerprint = run_fingerprint(cfg, data_hash(train_rows), model_stamp(init_model_dir))
    done = finished_run(cfg.out_dir, fingerprint) if cfg.resume else None
    with timed() as wall, run_context(cfg):
        if done:
            result = _reuse(cfg, done, eval_rows)
            mining, rows_hash = done["metrics"].get("mining"), done.get("data_hash")
        else:
            train_rows, mining = mine_prompts(str(init_model_dir), train_rows, cfg)
            result = _train(cfg, train_rows, eval_rows, Path(init_model_dir), fingerprint)
            rows_hash = data_hash(train_rows)
    result.metrics["mining"] = mining
    if is_main_process():
        write_json(result.model_dir / "reward_curve.json", result.reward_curve)
    write_manifest(result.model_dir, cfg, stage="grpo", base_model=str(init_model_dir),
                   backend=result.info, data_hash=rows_hash, run_fingerprint=fingerprint,
                   eval_data_hash=data_hash(eval_rows), metrics=result.metrics,
                   wall_s=done.get("wall_s") if done else wall["s"])
    log.info("GRPO %s: %d steps, %.0f s in all -> %s", cfg.name, result.metrics["steps"],
             wall["s"], result.model_dir)
    return result


@contextmanager
def compact_fused_head() -> Iterator[bool]:
    """Make TRL's fused LM head score the completion positions only (GRPO on a CPU); yields
    whether it could (False: this TRL has no such switch, and nothing is changed).

    GRPO scores each completion's tokens through `trl.trainer.utils`'s fused head. On a Triton
    device it gathers the positions whose label is not -100 first; elsewhere it scores every
    position, prompt included (a fixed tile shape, for compilers), and masks afterwards. On a
    CPU in eager mode that buys nothing: the ask rows' prompts are ~3/4 of each sequence, and
    the head (49,152 words) took 11.6 s of a 46.7 s ask GRPO step (cProfile, 3 steps). The
    numbers are the same either way (the kernel's torch tiles on the same rows;
    `tests/test_train_runs.py` compares them); only which rows enter it changes."""
    import trl.trainer.utils as trl_utils

    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        yield False
        return
    trl_utils._use_triton = lambda device: True  # read only for `compact`; the kernel checks its own
    try:
        yield True
    finally:
        trl_utils._use_triton = original


def _reuse(cfg: GRPOStageConfig, done: dict, eval_rows: list[dict]) -> GRPOResult:
    """The finished run `done` (its manifest) loaded from disk and judged on `eval_rows` (its
    kept judgment when the rows, budget, rewards and code are those it was judged with)."""
    model, tokenizer = load_merged(cfg.out_dir)
    metrics = {k: v for k, v in done["metrics"].items() if k != "generation"}
    # the training run's time, also when it was loaded before
    metrics["reused_run_of"] = metrics.get("reused_run_of") or done.get("time_utc")
    try:
        reward_curve = json.loads((cfg.out_dir / "reward_curve.json").read_text())
    except (OSError, ValueError):
        reward_curve = []
    if eval_rows and is_main_process():
        metrics["generation"] = judged_by_task((model, tokenizer), cfg.out_dir, eval_rows,
                                               cfg.eval_max_tokens, cfg.reward_params)
    return GRPOResult(model_dir=cfg.out_dir, adapter_dir=cfg.out_dir / "adapter", metrics=metrics,
                      info=done.get("backend") or {}, reward_curve=reward_curve, model=model,
                      tokenizer=tokenizer)


def _train(cfg: GRPOStageConfig, train_rows: list[dict], eval_rows: list[dict],
           init_model_dir: Path, fingerprint: str) -> GRPOResult:
    from trl import GRPOTrainer

    out = cfg.out_dir
    model, tokenizer, info = load_trainable(init_model_dir, cfg)
    trainer = GRPOTrainer(model=model,
                          reward_funcs=build_rewards(cfg.reward_names, cfg.reward_params),
                          args=grpo_args(cfg, out, info["device"] == "cuda"),
                          train_dataset=to_dataset(train_rows, "grpo"),
                          processing_class=tokenizer)
    point_tensorboard(trainer, out / "tensorboard")
    before = lora_state(trainer.model)
    # on a GPU, TRL's own choice stands (compact on Triton; fixed shapes for XLA-like devices)
    compact = compact_fused_head() if info["device"] == "cpu" else nullcontext(False)
    take_reward_issues()  # count this run's zeroed rewards only
    start = agreed_resume_point(out / "trainer", fingerprint, cfg.resume)
    with timed() as t, compact:
        trainer.train(resume_from_checkpoint=start.path)
    issues = take_reward_issues()
    if issues:
        log.warning("GRPO %s: %d rewards set to 0 (bad row or action): %s", cfg.name,
                    sum(issues.values()), issues)
    steps = trainer.state.global_step
    reward_curve = curve(trainer.state.log_history, "reward", CURVE_KEYS)
    metrics: dict[str, Any] = {
        "n_train": len(train_rows), "n_eval": len(eval_rows), "steps": steps,
        "resumed_from_step": start.step, "train_seconds": t["s"],
        "seconds_per_step": t["s"] / max(steps - start.step, 1),
        "lora_max_change": lora_change(before, trainer.model), "reward_issues": issues,
        "reward_first": reward_curve[0]["reward"] if reward_curve else None,
        "reward_last": reward_curve[-1]["reward"] if reward_curve else None}
    merged = save_merged(trainer.model, tokenizer, out)
    if is_main_process():
        clear(out / "trainer")
    if eval_rows and is_main_process():
        metrics["generation"] = judged_by_task((merged, tokenizer), out, eval_rows,
                                               cfg.eval_max_tokens, cfg.reward_params)
    return GRPOResult(model_dir=out, adapter_dir=out / "adapter", metrics=metrics, info=info,
                      reward_curve=reward_curve, model=merged, tokenizer=tokenizer)
