"""Supervised cold start: LoRA SFT on prompt-completion rows, loss on the completion only.

    result = run_sft(SFTStageConfig(name="ask-sft"), train_rows, eval_rows)
    result.model_dir     # models/ask-sft/: merged checkpoint, adapter/, manifest.json
    result.metrics       # train loss, eval loss, adherence and accuracy of generated outputs

Why SFT first: the untrained 135M model never produced a well-formed action, so every GRPO
reward was 0 and no group had an advantage to learn from. Loss on the completion only matters:
the same rows as whole chats with loss on every token gave degenerate text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.objectives.data import data_hash, to_dataset
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
from mags_lib.train.config import SFTStageConfig
from mags_lib.train.judgments import judged_by_task
from mags_lib.train.resume import agreed_resume_point, clear, finished_run, run_fingerprint
from mags_lib.train.sft_loss import completion_loss_trainer

log = logging.getLogger(__name__)


@dataclass
class SFTResult:
    """Where the trained model went and how it did. `model` is the merged model in eval mode."""

    model_dir: Path
    adapter_dir: Path
    metrics: dict[str, Any]
    info: dict[str, Any]
    loss_curve: list[dict] = field(default_factory=list)
    model: Any = field(default=None, repr=False)
    tokenizer: Any = field(default=None, repr=False)


def run_sft(cfg: SFTStageConfig, train_rows: list[dict], eval_rows: list[dict],
            reward_params: dict[str, dict] | None = None) -> SFTResult:
    """Train a LoRA adapter on `train_rows`, merge it, save it, judge it on `eval_rows` with
    the rewards' `reward_params` (pass the GRPO stage's, so both stages are judged alike)."""
    cfg = cfg.resolved()
    train_rows, eval_rows = train_rows[: cfg.max_train_rows], eval_rows[: cfg.max_eval_rows]
    fingerprint = run_fingerprint(cfg, data_hash(train_rows))
    done = finished_run(cfg.out_dir, fingerprint) if cfg.resume else None
    with timed() as wall, run_context(cfg):
        if done:
            result = _reuse(cfg, done, eval_rows, reward_params)
        else:
            result = _train(cfg, train_rows, eval_rows, reward_params, fingerprint)
    write_manifest(result.model_dir, cfg, stage="sft", base_model=cfg.base_model,
                   backend=result.info, data_hash=data_hash(train_rows),
                   eval_data_hash=data_hash(eval_rows), run_fingerprint=fingerprint,
                   metrics=result.metrics, wall_s=done.get("wall_s") if done else wall["s"],
                   loss_curve=result.loss_curve)
    log.info("SFT %s: %d steps, %.0f s in all -> %s", cfg.name, result.metrics["steps"],
             wall["s"], result.model_dir)
    return result


def _reuse(cfg: SFTStageConfig, done: dict, eval_rows: list[dict],
           reward_params: dict[str, dict] | None) -> SFTResult:
    """The finished run `done` (its manifest) loaded from disk and judged on `eval_rows` (its
    kept judgment when the rows, budget, rewards and code are those it was judged with)."""
    model, tokenizer = load_merged(cfg.out_dir)
    metrics = {k: v for k, v in done["metrics"].items() if k != "generation"}
    # the training run's time, also when it was loaded before
    metrics["reused_run_of"] = metrics.get("reused_run_of") or done.get("time_utc")
    if eval_rows and cfg.eval_generate and is_main_process():
        metrics["generation"] = judged_by_task((model, tokenizer), cfg.out_dir, eval_rows,
                                               cfg.eval_max_tokens, reward_params)
    return SFTResult(model_dir=cfg.out_dir, adapter_dir=cfg.out_dir / "adapter", metrics=metrics,
                     info=done.get("backend") or {}, loss_curve=done.get("loss_curve") or [],
                     model=model, tokenizer=tokenizer)


def _train(cfg: SFTStageConfig, train_rows: list[dict], eval_rows: list[dict],
           reward_params: dict[str, dict] | None, fingerprint: str) -> SFTResult:
    from trl import SFTConfig, SFTTrainer

    out = cfg.out_dir
    model, tokenizer, info = load_trainable(cfg.base_model, cfg)
    cuda = info["device"] == "cuda"
    args = SFTConfig(**trainer_kwargs(cfg, out, cuda), max_length=cfg.max_length,
                     completion_only_loss=cfg.completion_only_loss, prediction_loss_only=True)
    data = dict(model=model, args=args, train_dataset=to_dataset(train_rows, "sft"),
                eval_dataset=to_dataset(eval_rows, "sft") if eval_rows else None)
    if cuda and cfg.decision_token_weight == 1.0:  # TRL's fused head is compact on Triton
        trainer = SFTTrainer(processing_class=tokenizer, **data)
    else:  # sft_loss.py: TRL's kernel scores every position off Triton
        trainer = completion_loss_trainer(cfg.decision_token_weight, tokenizer, **data)
    point_tensorboard(trainer, out / "tensorboard")
    before = lora_state(trainer.model)
    start = agreed_resume_point(out / "trainer", fingerprint, cfg.resume)
    with timed() as t:
        train_out = trainer.train(resume_from_checkpoint=start.path)
    steps = trainer.state.global_step
    loss_curve = curve(trainer.state.log_history, "loss",
                       ("loss", "learning_rate", "grad_norm", "decision_"))
    # a resumed trainer's training_loss averages the steps since the resume only
    train_loss = (sum(e["loss"] for e in loss_curve) / len(loss_curve)
                  if start.step and loss_curve else train_out.training_loss)
    metrics: dict[str, Any] = {"train_loss": train_loss, "n_train": len(train_rows),
                               "n_eval": len(eval_rows), "steps": steps,
                               "resumed_from_step": start.step, "train_seconds": t["s"],
                               "seconds_per_step": t["s"] / max(steps - start.step, 1),
                               "lora_max_change": lora_change(before, trainer.model)}
    if eval_rows:
        metrics["eval_loss"] = trainer.evaluate()["eval_loss"]
    merged = save_merged(trainer.model, tokenizer, out)
    if is_main_process():
        clear(out / "trainer")
    if eval_rows and cfg.eval_generate and is_main_process():
        metrics["generation"] = judged_by_task((merged, tokenizer), out, eval_rows,
                                               cfg.eval_max_tokens, reward_params)
    return SFTResult(model_dir=out, adapter_dir=out / "adapter", metrics=metrics, info=info,
                     loss_curve=loss_curve, model=merged, tokenizer=tokenizer)
