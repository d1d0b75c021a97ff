"""The write model's GRPO under three objectives, on the same budget: F1 to a gold annotation,
the memory's outcome, and their mix (notebook 08).

* `f1`: `engram_reward`, the soft F1 of the ops against notebook 01's gold engram block (what
  notebook 03 trains with);
* `outcome`: `write_outcome_reward` (`objectives.outcome`): apply the sampled block to the memory a
  perfect writer held before the turn, then ask the memory about every rule known after it:
  held - mu * stale - lam * extra;
* `mix`: both at half weight.

Each starts from notebook 03's SFT model (`models/write-sft`) with the write recipe's GRPO stage
(steps, completions, learning rate), only the reward functions differ, once per seed. Every
model is judged on the same held-out rows by generating and parsing: adherence, F1, the outcome
reward and its terms, and the confusion matrix of the op it chose against the gold op (add /
update / none; "bad" when the block does not parse), so a soft score cannot hide a model that
writes the wrong op. Models go to `models/objectives/` (not exported by notebook 04).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.objectives.completions import WRITE_OPS as OPS
from mags_lib.objectives.outcome import combine, outcome_terms
from mags_lib.objectives.rewards import engram_reward, format_reward
from mags_lib.objectives.write_metrics import op_confusion
from mags_lib.paths import MODELS_DIR
from mags_lib.train.objective_study import OBJECTIVES_DIR, Study, run_study, save_study
from mags_lib.train.objective_study import by_objective as _by_objective
from mags_lib.train.roles import ROLE_REWARDS, RoleTrainConfig
from mags_lib.train.stages import load_role_data

WRITE_OBJECTIVES: dict[str, dict[str, float]] = {
    "f1": ROLE_REWARDS["write"],
    "outcome": {"format_reward": 1.0, "write_outcome_reward": 1.0, "budget_penalty": 1.0,
                "guardrail_reward": 0.5},
    "mix": {"format_reward": 1.0, "engram_reward": 0.5, "write_outcome_reward": 0.5,
            "budget_penalty": 1.0, "guardrail_reward": 0.5},
}
"""GRPO reward functions and weights of each write objective (format, budget and guardrail
terms are the same in all three)."""
MINE_REWARDS: dict[str, str] = {"f1": "engram_reward", "outcome": "write_outcome_reward",
                                 "mix": "write_outcome_reward"}
"""With mining on, each objective picks its GRPO prompts by its own main reward: the rows where
the SFT model's greedy block scores lowest under what the objective pays for."""
SCORES = ("op_accuracy", "f1", "outcome", "held", "stale", "adherence")


@dataclass
class WriteObjectivesConfig:
    """What `run_write_objectives` trains and how it judges."""

    objectives: list[str] = field(default_factory=lambda: list(WRITE_OBJECTIVES), metadata={
        "help": "objectives to train (keys of WRITE_OBJECTIVES)"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "GRPO seeds per objective (row order, LoRA init, sampling)"})
    rows_per_op: int = field(default=20, metadata={
        "help": "held-out rows judged per gold op (add / update / none), the same for all"})
    split: str = field(default="test", metadata={"help": "the held-out split judged"})
    grpo_steps: int | None = field(default=None, metadata={
        "help": "GRPO steps (None: the write recipe's, as notebook 03)"})
    grpo_prompts: int | None = field(default=None, metadata={
        "help": "prompts per GRPO step, each with the recipe's 4 completions (None: the write "
                "recipe's, 1); the ask recipe uses 4"})
    mine: int = field(default=0, metadata={
        "help": "training rows the SFT model is decoded on to mine GRPO's prompts, lowest "
                "score under the objective's MINE_REWARDS first (0: no mining, the rows in "
                "their order, as notebook 03)"})
    torch_threads: int | None = field(default=None, metadata={
        "help": "torch CPU threads (None: torch's default)"})
    resume: bool = field(default=True, metadata={
        "help": "reuse a model already trained from the same write-sft weights, training rows "
                "and stage config (its `objective.json` stamp), judging its saved outputs "
                "again; False retrains every one"})
    smoke: bool = field(default=False, metadata={"help": "SMOKE-shrunk stages and rows"})

    def __post_init__(self) -> None:
        unknown = [o for o in self.objectives if o not in WRITE_OBJECTIVES]
        if unknown:
            raise MagsError(f"unknown write objective(s) {unknown}",
                            f"use some of {list(WRITE_OBJECTIVES)}")
        if self.split not in ("val", "test"):
            raise MagsError(f"split must be 'val' or 'test', not {self.split!r}",
                            "judge on a held-out split")
        if self.grpo_prompts is not None and self.grpo_prompts < 1:
            raise MagsError(f"grpo_prompts must be at least 1, not {self.grpo_prompts}",
                            "pass grpo_prompts >= 1 or None for the recipe's")
        if self.mine < 0:
            raise MagsError(f"mine must be >= 0, not {self.mine}", "pass 0 to turn mining off")
        if self.rows_per_op < 1:
            raise MagsError(f"rows_per_op must be at least 1, not {self.rows_per_op}",
                            "pass rows_per_op >= 1")

    def role(self, seed: int = 0) -> RoleTrainConfig:
        cfg = RoleTrainConfig(role="write", seed=seed, torch_threads=self.torch_threads,
                              smoke=self.smoke)
        return cfg.with_steps(grpo_steps=self.grpo_steps)


def judged_rows(rows: list[dict], per_op: int) -> list[dict]:
    """The first `per_op` rows of each gold op that carry outcome probes (rows keep their
    order, which notebook 01 shuffled)."""
    taken: Counter = Counter()
    out = []
    for r in rows:
        op = r["gold"].get("op")
        if op in OPS and r["gold"].get("probes") and taken[op] < per_op:
            taken[op] += 1
            out.append(r)
    return out


def judge_writes(texts: list[str], rows: list[dict], embedder: str = "embedded"
                 ) -> dict[str, Any]:
    """Adherence, F1, the outcome reward and its terms, and the op confusion matrix of write
    outputs on `rows` (gold op -> chosen op -> count)."""
    golds = [r["gold"] for r in rows]
    fmt = format_reward(texts, task=["write"] * len(texts))
    f1 = engram_reward(texts, gold=golds)
    terms = [outcome_terms(t, g, embedder=embedder) for t, g in zip(texts, golds, strict=True)]
    ops = op_confusion(texts, golds)
    parsed = [x for x in terms if x is not None]
    outcome = [combine(x) for x in terms]
    return {"n": len(texts), "adherence": mean(f == 1.0 for f in fmt),
            "f1": mean(x for x in f1 if x is not None),
            "outcome": mean(outcome),
            **{k: mean(x[k] for x in parsed) if parsed else None
               for k in ("held", "stale", "extra")},
            "op_accuracy": ops["accuracy"], "confusion": ops["confusion"]}


def objective_dir(objective: str, seed: int) -> Path:
    """Where `run_write_objectives` saves the model of one objective and seed."""
    return OBJECTIVES_DIR / f"write-{objective}-s{seed}"


def objective_stage(role: RoleTrainConfig, objective: str, seed: int,
                    cfg: WriteObjectivesConfig | None = None):
    """The write recipe's GRPO stage with `objective`'s rewards (and `cfg`'s prompts per step
    and mining), saved under models/objectives/write-<objective>-s<seed>."""
    _, stage = role.stages()
    rewards = WRITE_OBJECTIVES[objective]
    budget: dict[str, Any] = {}
    if cfg is not None and cfg.grpo_prompts is not None:
        budget["per_device_train_batch_size"] = stage.num_generations * cfg.grpo_prompts
    if cfg is not None and cfg.mine > 0:
        budget.update(mine_candidates=cfg.mine, mine_reward=MINE_REWARDS[objective],
                      mine_lowest_first=True)
    stage = dataclasses.replace(stage, name=f"write-{objective}", reward_names=list(rewards),
                                reward_weights=list(rewards.values()),
                                output_dir=str(objective_dir(objective, seed)), **budget)
    return stage.resolved()


def run_write_objectives(cfg: WriteObjectivesConfig, out_dir: Path) -> dict[str, Any]:
    """Train each objective x seed from write-sft, judge every model on the same rows; writes
    `objectives.json` (and each model's outputs) under `out_dir` and returns it
    (`objective_study.run_study`: resume, stamps)."""
    sft_dir = MODELS_DIR / "write-sft"
    if not sft_dir.is_dir():
        raise MagsError(f"{sft_dir} not found",
                        "run notebook 03 first (python -m mags_lib.pipeline --only 03)")
    role = cfg.role()
    rows, _ = load_role_data(role)
    judged = judged_rows(rows[cfg.split], 2 if cfg.smoke else cfg.rows_per_op)
    if not judged:
        raise MagsError(f"no {cfg.split} write rows carry outcome probes",
                        "re-run notebook 01 (it writes gold['probes'] on write rows)")

    def save(models: dict[str, dict], outputs: dict[str, list[str]]) -> dict[str, Any]:
        out = {"split": cfg.split, "rows": len(judged),
               "gold_ops": dict(Counter(r["gold"]["op"] for r in judged)),
               "models": models, "by_objective": by_objective(models)}
        return save_study(out_dir, out, judged, outputs)

    study = Study(sft_dir=sft_dir, train=rows["train"], judged=judged,
                  judge=lambda texts: judge_writes(texts, judged),
                  stage=lambda objective, seed: objective_stage(cfg.role(seed), objective,
                                                                seed, cfg),
                  save=save, eval_tokens=role.eval_max_tokens)
    return run_study(study, cfg.objectives, cfg.seeds, out_dir, cfg.resume)


def by_objective(models: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Per objective: the mean over seeds of each of `SCORES` with a 95% t interval (None
    with one seed)."""
    return _by_objective(models, SCORES)


def markdown(out: dict[str, Any]) -> str:
    """The judged models and the per-objective means as markdown tables."""
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    lines = [f"{out['rows']} {out['split']} rows (gold ops {out['gold_ops']})", "",
             "| model | op accuracy | add -> add / update / none | update -> update / add / "
             "none | none -> none / add / update | F1 | outcome | held | stale |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, m in out["models"].items():
        c = m["confusion"]
        cell = {g: " / ".join(str(c.get(g, {}).get(p, 0)) for p in order)
                for g, order in (("add", ("add", "update", "none")),
                                 ("update", ("update", "add", "none")),
                                 ("none", ("none", "add", "update")))}
        lines.append(f"| {name} | {f(m['op_accuracy'])} | {cell['add']} | {cell['update']} "
                     f"| {cell['none']} | {f(m['f1'])} | {f(m['outcome'])} | {f(m['held'])} "
                     f"| {f(m['stale'])} |")
    lines += ["", "| objective | seeds | op accuracy [95% CI] | F1 [95% CI] | outcome [95% CI] |",
              "|---|---|---|---|---|"]
    for objective, s in out["by_objective"].items():
        cells = [f"{f(s[k]['mean'])} [{f(s[k]['ci_low'])}, {f(s[k]['ci_high'])}]"
                 for k in ("op_accuracy", "f1", "outcome")]
        lines.append(f"| {objective} | {s['n_seeds']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
