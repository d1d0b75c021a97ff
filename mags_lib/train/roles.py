"""What to train for each role of the two-model system: its data, rewards and default sizes.

    cfg = RoleTrainConfig(role="ask")                 # ask defaults: recall rewards, sizes
    cfg = RoleTrainConfig(role="write", smoke=True)   # the same run, shrunk to seconds
    sft, grpo = cfg.stages()                          # the two stage configs as they will run

Roles: `ask` (emit `<recall>`), `write` (emit `<engram>`), `answer` (pick an option as
`<answer>X</answer>`), and `mixed`, one model trained on ask + write rows together (the
single-model variant the two-model system is compared with; evaluated per task).

Default sizes are set so that a full run of ask + write + answer (notebooks 02 + 03) stays
near 45 minutes on an idle 2-core CPU: it took 46 on 2026-11-26 (`estimate_seconds` sizes it
from the measured `CPU_COSTS`: SFT 5-8 s a step at batch 8; GRPO, before its compact head, 7.5 s for
4 completions of 12 tokens, 11.8 for 4 of 48, 45 for 16 of 64; greedy evaluation ~0.3 s a token
for a batch); `smoke=True` shrinks every size (through the stage configs' `resolved()`)
so that one role runs in under a minute.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.objectives.data import ROW_SOURCES
from mags_lib.paths import MODELS_DIR, SYNTH_DATA_DIR
from mags_lib.train.config import GRPOStageConfig, SFTStageConfig

ROLES: tuple[str, ...] = ("ask", "write", "answer", "mixed")
ROLE_TASKS: dict[str, tuple[str, ...]] = {"ask": ("ask",), "write": ("write",),
                                          "answer": ("answer",), "mixed": ("ask", "write")}
"""The data tasks (folders under data/synth/) each role trains and is judged on."""

_GUARD = {"guardrail_reward": 0.5}
ROLE_REWARDS: dict[str, dict[str, float]] = {
    # recall_reward pays a block once some query hits; recall_precision_reward pays each query
    # that hits, which is where most of the SFT model's misses are (queries that drop the
    # weather); at half weight a backup query that misses costs less than a block that misses
    "ask": {"format_reward": 1.0, "recall_reward": 1.0, "recall_precision_reward": 0.5,
            "budget_penalty": 1.0, **_GUARD},
    "write": {"format_reward": 1.0, "engram_reward": 1.0, "budget_penalty": 1.0, **_GUARD},
    # the game's decision reward: 1 for the right option; format keeps the tag closed
    "answer": {"answer_reward": 1.0, "format_reward": 0.5},
    # each task-specific reward returns None on the other task's rows (left out of the sum)
    "mixed": {"format_reward": 1.0, "recall_reward": 1.0, "recall_precision_reward": 0.5,
              "engram_reward": 1.0, "budget_penalty": 1.0, **_GUARD},
}
"""GRPO reward functions (by name in `rewards.REWARDS`) and their weights, per role."""

@dataclass(frozen=True)
class RoleRecipe:
    """A role's full-run sizes and the few settings where it departs from the stage configs'
    defaults. A field left None means the stage config's own default (`SFTStageConfig`,
    `GRPOStageConfig`): the one place defaults live."""

    sft_steps: int = field(metadata={"help": "SFT optimiser steps at batch 8"})
    grpo_steps: int = field(metadata={"help": "GRPO optimiser steps"})
    completion_tokens: int = field(metadata={
        "help": "GRPO completion budget (the role's outputs in SmolLM2 tokens: a recall block "
                "of one or two queries 20-57, an engram block 10-37, an answer tag ~8)"})
    eval_tokens: int = field(metadata={"help": "tokens generated per judged prompt"})
    sft_decision_weight: float = field(default=1.0, metadata={
        "help": "SFT loss weight of the decision token (SFTStageConfig.decision_token_weight)"})
    sft_max_length: int = field(default=384, metadata={
        "help": "SFT sequence length in tokens (SFTStageConfig.max_length); longer rows are "
                "cut, completion included"})
    grpo_prompts: int = field(default=1, metadata={
        "help": "prompts per GRPO step, each with num_generations completions"})
    grpo_lr: float | None = field(default=None, metadata={"help": "GRPO peak learning rate"})
    grpo_temperature: float | None = field(default=None, metadata={
        "help": "rollout sampling temperature"})
    grpo_scale_rewards: str | None = field(default=None, metadata={
        "help": "TRL's advantage scaling: 'group' or 'batch'"})
    grpo_mine: int | None = field(default=None, metadata={
        "help": "training rows the SFT model is decoded on to mine GRPO's prompts (mining.py)"})
    grpo_mine_lowest_first: bool | None = field(default=None, metadata={
        "help": "mined rows lowest score first (else in the rows' order)"})

    def grpo_overrides(self) -> dict[str, Any]:
        """The GRPOStageConfig fields this recipe sets (None fields are left to its defaults)."""
        pairs = {"learning_rate": self.grpo_lr, "temperature": self.grpo_temperature,
                 "scale_rewards": self.grpo_scale_rewards, "mine_candidates": self.grpo_mine,
                 "mine_lowest_first": self.grpo_mine_lowest_first}
        return {k: v for k, v in pairs.items() if v is not None}


# GRPO steps are few (after SFT most answer groups have no reward spread; more steps lowered the
# write model's F1); the ask model's GRPO runs on mined prompts, lowest SFT score first, 4 a step
# at lr 1e-4 and temperature 0.7, advantages scaled by the batch. The write model's op token is
# weighted 10x in SFT (`sft_decision_weight`, sft_loss.py): under the plain token-mean loss the
# op was the seed's prior (held-out op accuracy 0.33-0.67 in 4 runs of 120 steps). Weighted for
# 360 steps the model chose its op (held-out 0.867, F1 0.860) and played within noise of the
# plain writer, but those steps took 50 minutes here; 240 steps fit notebooks 01-03's
# 60-minute budget once LoRA dropout was dropped. Since the mix grew to 4,096 rows (persona and
# LoCoMo rows beside the game's, game rows twice) 240 steps were 0.47 of a pass with the loss
# still falling; one pass (512 steps, 48 min on 2 cores) wrote the development personas' facts
# far better (fact exact 0.44 -> 0.67; in the loop current facts 14 -> 29 of 48) but writes
# more chit-chat as facts (none -> add 9 -> 43 of 108; journal 2026-11-30). Trained on rule changes partly re-framed as
# first sights (SynthConfig.reframe_update_share) it reached 0.900 but wrote nothing for some
# changes and played worse. The answer model trains 60 SFT steps: at 30 (a quarter epoch) it
# named the last-named option when unsure (greedy accuracy 0.74 with the right item named last
# 0.86, first 0.69, 3 seeds); at 60 it read the notes (0.85, last 0.90, first 0.82), and in the
# loop greedy `mags` went from 0.845 to 0.955. Trained on rows written in every order of the
# options (SynthConfig.answer_all_orders) it was no better. The runs behind each choice are in
# docs/journal.md (2026-11-26, 2026-11-27). Since 2026-11-28 the answer rows also hold the
# conversations' open questions over dated memory lines (up to 10 LoCoMo facts: 512 tokens).
# These are the defaults of a RoleTrainConfig that is given no steps. The notebooks set their
# own (`with_steps`): notebook 02 trains the answer model 120 SFT steps (its rows grew to 512
# tokens with the conversations' questions; 60 was measured on game rows alone), notebook 03
# the writer 550 (one pass over the mix with the game's rows twice).
ROLE_RECIPES: dict[str, RoleRecipe] = {
    "ask": RoleRecipe(sft_steps=36, grpo_steps=10, completion_tokens=64, eval_tokens=64,
                      grpo_prompts=4, grpo_lr=1e-4, grpo_temperature=0.7,
                      grpo_scale_rewards="batch", grpo_mine=400, grpo_mine_lowest_first=True),
    "write": RoleRecipe(sft_steps=512, grpo_steps=10, completion_tokens=48, eval_tokens=48,
                        sft_decision_weight=10.0),
    "answer": RoleRecipe(sft_steps=60, grpo_steps=10, completion_tokens=12, eval_tokens=16,
                         sft_max_length=512),
    "mixed": RoleRecipe(sft_steps=60, grpo_steps=30, completion_tokens=64, eval_tokens=64),
}
"""The full-run recipe of each role (smoke runs shrink it through the stage configs)."""
SFT_BATCH = 8
GRPO_GENERATIONS = 4


def default_stages(role: str, recipe: RoleRecipe | None = None
                   ) -> tuple[SFTStageConfig, GRPOStageConfig]:
    """The SFT and GRPO stage configs a role trains with unless told otherwise."""
    r = recipe or ROLE_RECIPES[role]
    rewards = ROLE_REWARDS[role]
    sft = SFTStageConfig(name=f"{role}-sft", max_steps=r.sft_steps,
                         per_device_train_batch_size=SFT_BATCH, warmup_steps=0.05,
                         max_length=r.sft_max_length,
                         decision_token_weight=r.sft_decision_weight)
    grpo = GRPOStageConfig(name=f"{role}-grpo", max_steps=r.grpo_steps,
                           per_device_train_batch_size=GRPO_GENERATIONS * r.grpo_prompts,
                           num_generations=GRPO_GENERATIONS,
                           max_completion_length=r.completion_tokens,
                           reward_names=list(rewards), reward_weights=list(rewards.values()),
                           **r.grpo_overrides())
    return sft, grpo


@dataclass
class RoleTrainConfig:
    """One role's whole training run: data, base evaluation, SFT cold start, GRPO, evaluation.

    The run-wide fields below (seed, threads, smoke, base model, where models go, evaluation
    sizes) are written into both stage configs by `stages()`; the stage configs own the
    training hyperparameters (steps, batch, learning rate, LoRA, rewards).
    """

    role: str = field(default="ask", metadata={
        "help": "ask | write | answer | mixed (one model on ask + write rows)"})
    base_model: str = field(default="embedded", metadata={
        "help": "the model SFT starts from and the base row of the table is judged on: "
                "'embedded' (SmolLM2-135M-Instruct, dequantised to a transformers checkpoint), "
                "a checkpoint dir, a .gguf path or a hub id"})
    data_dir: str | None = field(default=None, metadata={
        "help": "folder with <task>/{train,val,test}.jsonl; None = data/synth/ (notebook 01)"})
    models_dir: str | None = field(default=None, metadata={
        "help": "models go to <models_dir>/<role>-sft and <role>-grpo; None = models/"})
    source_repeats: dict[str, int] = field(default_factory=dict, metadata={
        "help": "train rows of a source ('game', 'persona', 'locomo') repeated this many times "
                "before the shuffle (1 where unnamed), to weigh one task up in a mixture; val "
                "and test rows are never repeated"})
    sources: list[str] | None = field(default=None, metadata={
        "help": "keep only the rows of these sources ('game', 'persona', 'locomo'), in every "
                "split; None = all of them (the mixed models). The transfer matrix trains one "
                "side at a time: ['game'], or ['persona', 'locomo']"})
    eval_rows: int = field(default=40, metadata={
        "help": "held-out (val) rows per task judged by generation at each stage; the same "
                "rows for SFT and GRPO, and for base unless `base_eval_rows` cuts them"})
    base_eval_rows: int | None = field(default=None, metadata={
        "help": "val rows per task the base model is judged on: the first of the `eval_rows` "
                "rows (None = all of them). The untrained model writes to the full token "
                "budget on every row (the embedded model has scored 0 on every row judged so "
                "far), so the full runs judge it on fewer rows"})
    eval_max_tokens: int | None = field(default=None, metadata={
        "help": "tokens generated per judged prompt; None = the role's recipe (ROLE_RECIPES)"})
    eval_test: bool = field(default=True, metadata={
        "help": "also judge the final (GRPO) model on the test split, if data holds one"})
    seed: int = field(default=0, metadata={"help": "seed for row order, LoRA init, sampling"})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch (None = leave as is); 1 when another process shares a "
                "2-core machine"})
    smoke: bool = field(default=False, metadata={
        "help": "shrink every size for a seconds-long end-to-end run (same code path)"})
    sft: SFTStageConfig | None = field(default=None, metadata={
        "help": "the SFT cold start; None = the role's defaults (default_stages)"})
    grpo: GRPOStageConfig | None = field(default=None, metadata={
        "help": "GRPO from the SFT model; None = the role's defaults (default_stages)"})

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise MagsError(f"unknown role {self.role!r}", f"use one of {', '.join(ROLES)}")
        sft, grpo = default_stages(self.role)
        self.sft = self.sft or sft
        self.grpo = self.grpo or grpo
        bad = {k: v for k, v in self.source_repeats.items() if not isinstance(v, int) or v < 1}
        if bad:
            raise MagsError(f"source_repeats {bad} are not whole numbers >= 1",
                            "give each named source a repeat count of 1 or more")
        if self.sources is not None and (not self.sources or not set(self.sources) <= set(ROW_SOURCES)):
            raise MagsError(f"sources {self.sources!r} name no known source",
                            f"give a non-empty list of {', '.join(ROW_SOURCES)}, or None "
                            "for all")
        if self.eval_max_tokens is None:
            self.eval_max_tokens = ROLE_RECIPES[self.role].eval_tokens

    def with_steps(self, sft_steps: int | None = None, grpo_steps: int | None = None
                   ) -> RoleTrainConfig:
        """This config with other optimiser step counts (None keeps a stage's own)."""
        sft = self.sft if sft_steps is None else replace(self.sft, max_steps=sft_steps)
        grpo = self.grpo if grpo_steps is None else replace(self.grpo, max_steps=grpo_steps)
        return replace(self, sft=sft, grpo=grpo)

    @property
    def tasks(self) -> tuple[str, ...]:
        return ROLE_TASKS[self.role]

    @property
    def data_root(self) -> Path:
        return Path(self.data_dir) if self.data_dir else SYNTH_DATA_DIR

    def model_dir(self, stage: str) -> Path:
        return Path(self.models_dir or MODELS_DIR) / f"{self.role}-{stage}"

    def stages(self) -> tuple[SFTStageConfig, GRPOStageConfig]:
        """Both stage configs as they will run: run-wide fields applied, then `resolved()`."""
        run = {"seed": self.seed, "torch_threads": self.torch_threads, "smoke": self.smoke,
               "max_eval_rows": self.eval_rows * len(self.tasks),
               "eval_max_tokens": self.eval_max_tokens}
        sft = replace(self.sft, name=f"{self.role}-sft", output_dir=str(self.model_dir("sft")),
                      base_model=self.base_model, **run)
        grpo = replace(self.grpo, name=f"{self.role}-grpo",
                       output_dir=str(self.model_dir("grpo")), **run)
        return sft.resolved(), grpo.resolved()

    def eval_rows_per_task(self) -> int:
        """Judged rows per task after SMOKE shrinking (the stages cut the judged set to this)."""
        return self.stages()[0].max_eval_rows // len(self.tasks)

    def base_rows_per_task(self) -> int:
        """Rows per task the base model is judged on: the first `base_eval_rows` of the
        judged rows (all of them when None; never more)."""
        n = self.eval_rows_per_task()
        return n if self.base_eval_rows is None else max(1, min(self.base_eval_rows, n))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


CPU_COSTS: dict[str, float] = {
    "sft_s_per_row": 6.4 / 8,  # SFT step at batch 8 (2026-11-26: 5.7 ask, 5.3 answer, 8.2 write)
    "grpo_s_per_step": 5.5,  # GRPO step: fixed part (optimiser update, set-up)
    "grpo_s_per_completion": 1.0,  # ... plus this per completion (forward, reference, backward)
    "grpo_s_per_token": 0.108,  # ... plus this per token of the completion budget (decoding)
    "eval_s_per_token": 0.3,  # one greedy decoding step for a batch of EVAL_BATCH prompts
    "mine_s_per_row": 0.31,  # GRPO prompt mining: the SFT model's greedy output, which ends early
    "stage_overhead_s": 5.0,  # load, LoRA wrap, trainer set-up, merge, save
}
"""Seconds on the 2-core CPU this project is sized for, torch on both cores. SFT: the run of
2026-11-26 evening, with the LM head on the supervised positions only (`sft_loss.py`; before
it, 10.7 / 12.4 / 18.3 s a step). The rest fitted to the stages of the full run of 2026-11-23
on an idle machine (GRPO: write 14.7 s a step for 4 completions of 48 tokens, answer 10.8 for
4 of 12; whole roles: answer 567 s, write 1,037 s) and of 2026-11-24 (ask GRPO: 28.5 s a step
for 16 completions of 64 tokens; decoding is batched, so a step's cost grows with the
completions far less than in proportion; mining: 62 s for the SFT model's output on 200
training rows).
1 thread is ~1.6x slower; a second busy process on the same cores makes 2 threads thrash, up to
10x slower, so set torch_threads=1 on a shared machine. Used by `estimate_seconds` to size the
defaults; the run's own manifests hold the real times."""


def estimate_seconds(cfg: RoleTrainConfig, costs: dict[str, float] | None = None) -> dict:
    """Estimated wall seconds of `train_role(cfg)` per stage, from per-step costs: every
    judged batch and GRPO group assumed to run to its full token budget.

    >>> round(sum(estimate_seconds(RoleTrainConfig(role="answer")).values()) / 60)  # ran 7.8
    9
    """
    from mags_lib.train.evaluate import EVAL_BATCH

    c = {**CPU_COSTS, **(costs or {})}
    sft, grpo = cfg.stages()
    def judge_s(rows_per_task: int) -> float:
        batches = math.ceil(rows_per_task / EVAL_BATCH) * len(cfg.tasks)
        return batches * sft.eval_max_tokens * c["eval_s_per_token"]

    judge = judge_s(cfg.eval_rows_per_task())
    sft_rows = sft.max_steps * sft.per_device_train_batch_size * sft.gradient_accumulation_steps
    grpo_step = grpo.gradient_accumulation_steps * (
        c["grpo_s_per_step"] + grpo.per_device_train_batch_size * c["grpo_s_per_completion"]
        + grpo.max_completion_length * c["grpo_s_per_token"])
    eval_loss = sft.max_eval_rows * c["sft_s_per_row"] / 3  # forward only
    mine = grpo.mine_candidates * c["mine_s_per_row"]
    return {"base": judge_s(cfg.base_rows_per_task()),
            "sft": sft_rows * c["sft_s_per_row"] + eval_loss + judge + c["stage_overhead_s"],
            "grpo": mine + grpo.max_steps * grpo_step + judge + c["stage_overhead_s"],
            "test": judge if cfg.eval_test else 0.0}
