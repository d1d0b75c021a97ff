"""Training configs: one dataclass per stage (SFT cold start, then GRPO), a help string per field.

    cfg = TrainConfig(sft=SFTStageConfig(name="ask-sft"), grpo=GRPOStageConfig(name="ask-grpo"))
    run_sft(cfg.sft, train_rows, eval_rows)

`smoke=True` shrinks sizes (steps, rows, batch, lengths) through `resolved()`, which both
trainers call first; it never switches to different code. `asdict(cfg)` goes into every manifest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from mags_lib.paths import MODELS_DIR


@dataclass
class StageConfig:
    """What SFT and GRPO share: the model, the LoRA adapter, the optimiser, the output."""

    name: str = field(default="ask-sft", metadata={
        "help": "run name; the model is saved under models/<name>/ unless output_dir is set"})
    base_model: str = field(default="embedded", metadata={
        "help": "'embedded' (SmolLM2-135M-Instruct), a checkpoint dir, a .gguf path or a hub id"})
    output_dir: str | None = field(default=None, metadata={
        "help": "where to save; None = models/<name>/"})
    use_unsloth: Literal["auto"] | bool = field(default="auto", metadata={
        "help": "'auto': Unsloth when CUDA and unsloth are there, else transformers + PEFT; "
                "True: ask for Unsloth (falls back with a warning); False: never"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scale numerator (scale = alpha/r)"})
    lora_dropout: float = field(default=0.0, metadata={
        "help": "dropout on the LoRA input; 0 by default: 0.05 cost 13-20% of a CPU SFT step and "
                "ran in every decoding step of GRPO's rollouts (journal 2026-11-27)"})
    target_modules: str | list[str] = field(default="all-linear", metadata={
        "help": "modules that get LoRA: 'all-linear' (every projection, not lm_head) or names"})
    learning_rate: float = field(default=5e-4, metadata={"help": "peak AdamW learning rate"})
    lr_scheduler_type: str = field(default="linear", metadata={
        "help": "transformers scheduler name (linear, cosine, constant, ...)"})
    warmup_steps: float = field(default=0.0, metadata={
        "help": "LR warm-up: a step count, or a float in [0, 1) for a share of all steps"})
    num_train_epochs: float = field(default=2.0, metadata={
        "help": "passes over the training rows (ignored when max_steps > 0)"})
    max_steps: int = field(default=-1, metadata={"help": "optimiser steps; -1 = use epochs"})
    per_device_train_batch_size: int = field(default=8, metadata={"help": "rows per step"})
    gradient_accumulation_steps: int = field(default=1, metadata={
        "help": "steps whose gradients add up before one optimiser update"})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "recompute activations in backward (saves memory, ~20% slower; off on CPU)"})
    max_train_rows: int | None = field(default=None, metadata={
        "help": "use at most this many training rows (None = all)"})
    max_eval_rows: int | None = field(default=None, metadata={
        "help": "use at most this many held-out rows (None = all)"})
    eval_max_tokens: int = field(default=64, metadata={
        "help": "tokens generated per held-out prompt when judging the trained model"})
    logging_steps: int = field(default=1, metadata={"help": "log (and TensorBoard) every N steps"})
    seed: int = field(default=0, metadata={"help": "seed for data order, LoRA init, sampling"})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch during the run (None = leave as is); 1 avoids 10x "
                "thrashing when another process holds a core of a 2-core machine"})
    save_steps: int = field(default=25, metadata={
        "help": "write a resumable trainer checkpoint (adapter, optimiser, RNG, data position) "
                "every N optimiser steps under <out>/trainer/, newest only, removed once the "
                "model is saved; 0 = never (train/resume.py)"})
    resume: bool = field(default=True, metadata={
        "help": "continue the same run (same config, rows, training code and start model) "
                "from its newest checkpoint when it was stopped, and load it when it finished; "
                "False = train from the first step"})
    smoke: bool = field(default=False, metadata={
        "help": "shrink sizes for a minutes-long end-to-end check (same code path)"})

    @property
    def out_dir(self) -> Path:
        return Path(self.output_dir) if self.output_dir else MODELS_DIR / self.name

    def _smoke_sizes(self) -> dict:
        # Greedy decoding on a CPU costs ~0.1-0.4 s a token whatever the batch, so the judged
        # token budget, not the row count, sets a SMOKE run's evaluation time.
        return {"max_steps": 2, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1,
                "max_train_rows": min(self.max_train_rows or 16, 16),
                "max_eval_rows": min(self.max_eval_rows or 4, 4),
                "eval_max_tokens": min(self.eval_max_tokens, 16)}

    def resolved(self):
        """This config as it will run: with SMOKE sizes applied when `smoke` is set."""
        return replace(self, **self._smoke_sizes()) if self.smoke else self

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SFTStageConfig(StageConfig):
    """Supervised cold start on prompt-completion rows, loss on the completion only."""

    max_length: int = field(default=512, metadata={
        "help": "tokens per training sequence (prompt + completion); longer rows are truncated"})
    completion_only_loss: bool = field(default=True, metadata={
        "help": "loss on completion tokens only (whole-chat loss gave degenerate text here)"})
    eval_generate: bool = field(default=True, metadata={
        "help": "after training, generate on the held-out prompts and score adherence/accuracy"})
    decision_token_weight: float = field(default=1.0, metadata={
        "help": "training-loss weight of the completion's decision token, the first after its "
                "opening tag line (the write model's op: add / update / an empty block); 1 = "
                "TRL's plain token mean; must be > 0 (sft_loss.py: what 10 did)"})

    def _smoke_sizes(self) -> dict:
        return {**super()._smoke_sizes(), "max_length": min(self.max_length, 256)}


@dataclass
class GRPOStageConfig(StageConfig):
    """Group Relative Policy Optimisation on top of the SFT model, with a fresh LoRA adapter."""

    name: str = field(default="ask-grpo", metadata={
        "help": "run name; the model is saved under models/<name>/ unless output_dir is set"})
    save_steps: int = field(default=5, metadata={
        "help": "resumable checkpoint every N optimiser steps (a CPU GRPO step takes 30 to 50 s, "
                "so 5 is a few minutes); 0 = never (train/resume.py)"})
    learning_rate: float = field(default=5e-5, metadata={
        "help": "peak AdamW learning rate (the write, answer and mixed roles' value; the ask "
                "role's recipe sets 1e-4)"})
    max_steps: int = field(default=100, metadata={"help": "optimiser steps; -1 = use epochs"})
    per_device_train_batch_size: int = field(default=4, metadata={
        "help": "completions per step; a multiple of num_generations"})
    num_generations: int = field(default=4, metadata={
        "help": "completions sampled per prompt (the group whose mean is the baseline)"})
    max_completion_length: int = field(default=64, metadata={"help": "tokens per completion"})
    temperature: float = field(default=1.0, metadata={"help": "sampling temperature in rollouts"})
    beta: float = field(default=0.04, metadata={
        "help": "KL coefficient to the starting (SFT) model; 0 skips the reference pass"})
    epsilon: float = field(default=0.2, metadata={"help": "PPO-style ratio clip range"})
    loss_type: str = field(default="dapo", metadata={
        "help": "TRL loss aggregation: 'grpo' (per-sequence mean), 'dapo' (token-level, no "
                "length bias), 'dr_grpo', 'bnpo'"})
    scale_rewards: str = field(default="group", metadata={
        "help": "advantage scaling: 'group' (std within a prompt's group), 'batch', 'none'"})
    reward_names: list[str] = field(default_factory=lambda: [
        "format_reward", "recall_reward", "recall_precision_reward", "budget_penalty",
        "guardrail_reward"], metadata={
        "help": "reward functions by name (mags_lib.objectives.rewards.REWARDS)"})
    reward_weights: list[float] = field(default_factory=lambda: [1.0, 1.0, 0.5, 1.0, 0.5], metadata={
        "help": "one weight per reward; the weighted sum is the scalar reward"})
    reward_params: dict[str, dict] = field(default_factory=lambda: {
        name: {"k": 1, "embedder": "hashing"}
        for name in ("recall_reward", "recall_precision_reward")}, metadata={
        "help": "keyword parameters per reward name (recall_reward and recall_precision_reward: "
                "a hit is the gold fact at rank k = 1; at k = 3, the memory lines an agent shows "
                "its answer model, the SFT model already finds 0.99 of the rules, which leaves "
                "GRPO no signal). The hashing embedder, not play's MiniLM, on purpose: it is the "
                "stricter judge (ask-grpo on 160 val rows at k = 1: hashing pays 145 rows, "
                "MiniLM those 145 and 10 more, none the other way; tools/ask_reward_embedders.py), "
                "so MiniLM would only pay queries that miss lexically; 'embedded' switches"})
    mine_candidates: int = field(default=0, metadata={
        "help": "before training, decode the starting model greedily on this many training rows "
                "and give GRPO those scoring below 1 on mine_reward first (mining.py; 0 = off, "
                "GRPO draws from all training rows)"})
    mine_reward: str = field(default="recall_precision_reward", metadata={
        "help": "the reward (by name, with its reward_params) that mining scores outputs with"})
    mine_lowest_first: bool = field(default=False, metadata={
        "help": "mining: of the rows below 1, give GRPO the lowest-scoring first (for the ask "
                "model, blocks whose every query misses before blocks with one miss); False: "
                "in the training rows' order"})
    log_completions: bool = field(default=False, metadata={
        "help": "print sampled completions with their rewards at each logging step"})

    def _smoke_sizes(self) -> dict:
        return {**super()._smoke_sizes(), "max_steps": 1, "num_generations": 2,
                "per_device_train_batch_size": 2, "max_train_rows": 8,
                "mine_candidates": min(self.mine_candidates, 4),
                "max_completion_length": min(self.max_completion_length, 16)}


@dataclass
class TrainConfig:
    """Both stages of one training run (what a training notebook serialises)."""

    sft: SFTStageConfig = field(default_factory=SFTStageConfig, metadata={
        "help": "the supervised cold start"})
    grpo: GRPOStageConfig = field(default_factory=GRPOStageConfig, metadata={
        "help": "the reinforcement stage on top of the SFT model"})

    def to_dict(self) -> dict:
        return asdict(self)
