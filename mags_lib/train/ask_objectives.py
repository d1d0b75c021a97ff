"""The ask model's GRPO under an imitation objective and an outcome objective, on the same
budget (notebook 11): the ask half of the comparison notebook 08 makes for the write model.

* `f1`: `ask_f1_reward`, the soft F1 of the sampled recall queries against notebook 01's gold
  recall block (the annotator's queries): it pays for saying what the annotator said;
* `outcome`: notebook 02's rewards, `recall_reward` + half `recall_precision_reward`: the
  sampled queries are run against a memory holding the row's facts, and pay when they find
  the rule the turn needs;
* `mix`: both at half weight.

Each starts from notebook 02's SFT model (`models/ask-sft`) with the ask recipe's GRPO stage
(steps, prompts per step, completions, learning rate, mining by the objective's own main
reward), only the rewards differ, once per seed. Every model is judged on the same held-out
rows by generating and parsing: adherence, the F1 against the gold queries, and whether the
queries find the rule, with the reward's judge (hashing embedder, top 1) and with play's
(MiniLM, top 3). Models go to `models/objectives/ask-<objective>-s<seed>/`; training, resume
and stamps are `objective_study.run_study`, as for the write objectives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from mags_lib.actions import query_texts
from mags_lib.errors import MagsError
from mags_lib.objectives.rewards import ask_f1_reward, format_reward
from mags_lib.paths import MODELS_DIR
from mags_lib.train.evaluate import ask_hit_rates
from mags_lib.train.objective_study import OBJECTIVES_DIR, Study, run_study, save_study
from mags_lib.train.objective_study import by_objective as _by_objective
from mags_lib.train.roles import ROLE_REWARDS, RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data

ASK_OBJECTIVES: dict[str, dict[str, float]] = {
    "f1": {"format_reward": 1.0, "ask_f1_reward": 1.0, "budget_penalty": 1.0,
           "guardrail_reward": 0.5},
    "outcome": ROLE_REWARDS["ask"],
    "mix": {"format_reward": 1.0, "ask_f1_reward": 0.5, "recall_reward": 0.5,
            "recall_precision_reward": 0.25, "budget_penalty": 1.0, "guardrail_reward": 0.5},
}
"""GRPO reward functions and weights of each ask objective (format, budget and guardrail terms
are the same in all three; `outcome` is notebook 02's recipe)."""
MINE_REWARDS: dict[str, str] = {"f1": "ask_f1_reward", "outcome": "recall_precision_reward",
                                "mix": "recall_precision_reward"}
"""The reward each objective mines its GRPO prompts by (the recipe mines; see `mining.py`)."""
PLAY_JUDGE = {"k": 3, "embedder": "embedded"}
"""Recall as the closed loop does it: MiniLM, the top 3 lines shown to the answer model."""
SCORES = ("hit_at_1", "play_hit_at_3", "query_hit_at_1", "f1", "adherence")


@dataclass
class AskObjectivesConfig:
    """What `run_ask_objectives` trains and how it judges."""

    objectives: list[str] = field(default_factory=lambda: ["f1", "outcome"], metadata={
        "help": "objectives to train (keys of ASK_OBJECTIVES; 'mix' adds 15 minutes a seed "
                "set)"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "GRPO seeds per objective (row order, LoRA init, sampling)"})
    rows: int = field(default=160, metadata={"help": "held-out rows judged, the same for all"})
    split: str = field(default="test", metadata={"help": "the held-out split judged"})
    grpo_steps: int | None = field(default=None, metadata={
        "help": "GRPO steps (None: the ask recipe's, as notebook 02)"})
    torch_threads: int | None = field(default=None, metadata={
        "help": "torch CPU threads (None: torch's default)"})
    resume: bool = field(default=True, metadata={
        "help": "reuse a model already trained from the same ask-sft weights, training rows "
                "and stage config (its stamp), judging its saved outputs again"})
    smoke: bool = field(default=False, metadata={"help": "SMOKE-shrunk stages and rows"})

    def __post_init__(self) -> None:
        unknown = [o for o in self.objectives if o not in ASK_OBJECTIVES]
        if unknown:
            raise MagsError(f"unknown ask objective(s) {unknown}",
                            f"use some of {list(ASK_OBJECTIVES)}")
        if self.split not in ("val", "test"):
            raise MagsError(f"split must be 'val' or 'test', not {self.split!r}",
                            "judge on a held-out split")
        if self.rows < 1:
            raise MagsError(f"rows must be at least 1, not {self.rows}", "pass rows >= 1")

    def role(self, seed: int = 0) -> RoleTrainConfig:
        cfg = RoleTrainConfig(role="ask", seed=seed, torch_threads=self.torch_threads,
                              smoke=self.smoke)
        return cfg.with_steps(grpo_steps=self.grpo_steps)


def with_gold_queries(rows: list[dict]) -> list[dict]:
    """Rows whose gold also carries the queries of their gold recall block (`gold["queries"]`,
    what `ask_f1_reward` reads; TRL hands rewards the dataset's columns but not the
    completion), every line kept as `ask_f1_reward` keeps the completion's (a synthesised
    block may say "glarb rainy" twice, as a query and as a connect). The rows given are not
    changed."""
    out = []
    for r in rows:
        gold_text = (r.get("completion") or [{}])[-1].get("content", "")
        queries, _ = query_texts(gold_text, distinct=False)
        out.append({**r, "gold": {**r["gold"], "queries": queries}})
    return out


def judge_asks(texts: list[str], rows: list[dict], reward_judge: dict[str, Any]
               ) -> dict[str, Any]:
    """Adherence, F1 against the gold queries, and hit rates of ask outputs on `rows`: with
    the reward's judge (`reward_judge`: hashing, top 1) and with play's (`PLAY_JUDGE`)."""
    fmt = format_reward(texts, task=["ask"] * len(texts))
    f1 = [x for x in ask_f1_reward(texts, gold=[r["gold"] for r in rows]) if x is not None]
    reward = ask_hit_rates(texts, rows, reward_judge)
    play = ask_hit_rates(texts, rows, PLAY_JUDGE)
    return {"n": len(texts), "adherence": mean(f == 1.0 for f in fmt),
            "f1": mean(f1) if f1 else None,
            "hit_at_1": reward["hit_at"][1], "query_hit_at_1": reward["query_hit_at"][1],
            "play_hit_at_3": play["hit_at"][3], "queries_per_row": reward["queries_per_row"]}


def objective_dir(objective: str, seed: int) -> Path:
    """Where `run_ask_objectives` saves the model of one objective and seed."""
    return OBJECTIVES_DIR / f"ask-{objective}-s{seed}"


def objective_stage(role: RoleTrainConfig, objective: str, seed: int):
    """The ask recipe's GRPO stage with `objective`'s rewards (mining by its own main reward),
    saved under models/objectives/ask-<objective>-s<seed>."""
    _, stage = role.stages()
    rewards = ASK_OBJECTIVES[objective]
    mine = {"mine_reward": MINE_REWARDS[objective]} if stage.mine_candidates > 0 else {}
    stage = dataclasses.replace(stage, name=f"ask-{objective}", reward_names=list(rewards),
                                reward_weights=list(rewards.values()),
                                output_dir=str(objective_dir(objective, seed)), **mine)
    return stage.resolved()


def run_ask_objectives(cfg: AskObjectivesConfig, out_dir: Path) -> dict[str, Any]:
    """Train each objective x seed from ask-sft, judge every model on the same rows; writes
    `objectives.json` (and each model's outputs) under `out_dir` and returns it
    (`objective_study.run_study`: resume, stamps)."""
    sft_dir = MODELS_DIR / "ask-sft"
    if not sft_dir.is_dir():
        raise MagsError(f"{sft_dir} not found",
                        "run notebook 02 first (python -m mags_lib.pipeline --only 02)")
    role = cfg.role()
    rows, _ = load_role_data(role)
    judged = with_gold_queries(first_per_task(rows[cfg.split], 4 if cfg.smoke else cfg.rows))
    if not judged:
        raise MagsError(f"no {cfg.split} ask rows", "re-run notebook 01")
    judge = role.stages()[1].reward_params["recall_reward"]

    def save(models: dict[str, dict], outputs: dict[str, list[str]]) -> dict[str, Any]:
        out = {"split": cfg.split, "rows": len(judged), "reward_judge": judge,
               "play_judge": PLAY_JUDGE, "models": models, "by_objective": by_objective(models)}
        return save_study(out_dir, out, judged, outputs)

    study = Study(sft_dir=sft_dir, train=with_gold_queries(rows["train"]), judged=judged,
                  judge=lambda texts: judge_asks(texts, judged, judge),
                  stage=lambda objective, seed: objective_stage(cfg.role(seed), objective, seed),
                  save=save, eval_tokens=role.eval_max_tokens)
    return run_study(study, cfg.objectives, cfg.seeds, out_dir, cfg.resume)


def by_objective(models: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Per objective: the mean over seeds of each of `SCORES` with a 95% t interval."""
    return _by_objective(models, SCORES)


def markdown(out: dict[str, Any]) -> str:
    """The judged models and the per-objective means as markdown tables."""
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    head = ("hit@1 (reward's judge: hashing) | hit@3 (play's: MiniLM) | per query @1 | "
            "F1 to gold queries | queries / row | adherence")
    lines = [f"{out['rows']} {out['split']} rows", "", f"| model | {head} |",
             "|---|---|---|---|---|---|---|"]
    for name, m in out["models"].items():
        lines.append(f"| {name} | {f(m['hit_at_1'])} | {f(m['play_hit_at_3'])} | "
                     f"{f(m['query_hit_at_1'])} | {f(m['f1'])} | {f(m['queries_per_row'])} | "
                     f"{f(m['adherence'])} |")
    lines += ["", "| objective | seeds | hit@1 [95% CI] | hit@3 in play [95% CI] | "
              "F1 to gold [95% CI] |", "|---|---|---|---|---|"]
    for objective, s in out["by_objective"].items():
        cells = [f"{f(s[k]['mean'])} [{f(s[k]['ci_low'])}, {f(s[k]['ci_high'])}]"
                 for k in ("hit_at_1", "play_hit_at_3", "f1")]
        lines.append(f"| {objective} | {s['n_seeds']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
