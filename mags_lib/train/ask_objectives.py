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
(MiniLM, top 3). Models go to `models/objectives/ask-<objective>-s<seed>/` with the same resume
stamp as the write objectives (`write_objectives.STAMP`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.errors import MagsError
from mags_lib.models import file_digest
from mags_lib.paths import MODELS_DIR
from mags_lib.tasks.data import data_hash
from mags_lib.tasks.rewards import ask_f1_reward, format_reward, recall_queries
from mags_lib.train.evaluate import ask_hit_rates
from mags_lib.train.roles import ROLE_REWARDS, RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data
from mags_lib.train.write_objectives import (
    OBJECTIVES_DIR,
    STAMP,
    earlier_outputs,
    interval,
    trained_model,
)

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
    completion). The rows given are not changed."""
    out = []
    for r in rows:
        gold_text = (r.get("completion") or [{}])[-1].get("content", "")
        out.append({**r, "gold": {**r["gold"], "queries": recall_queries(gold_text)}})
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
    `objectives.json` (and each model's outputs) under `out_dir` and returns it."""
    from mags_lib.train.evaluate import generate
    from mags_lib.train.grpo import run_grpo

    sft_dir = MODELS_DIR / "ask-sft"
    if not sft_dir.is_dir():
        raise MagsError(f"{sft_dir} not found",
                        "run notebook 02 first (python -m mags_lib.pipeline --only 02)")
    role = cfg.role()
    rows, _ = load_role_data(role)
    train = with_gold_queries(rows["train"])
    judged = with_gold_queries(first_per_task(rows[cfg.split], 4 if cfg.smoke else cfg.rows))
    if not judged:
        raise MagsError(f"no {cfg.split} ask rows", "re-run notebook 01")
    judge = role.stages()[1].reward_params["recall_reward"]
    prompts = [r["prompt"] for r in judged]
    earlier = earlier_outputs(out_dir, judged) if cfg.resume else {}
    base = {"base_digest": file_digest(sft_dir / "model.safetensors"),
            "train_hash": data_hash(train)}
    outputs = {"sft": generate(str(sft_dir), prompts, role.eval_max_tokens)}
    models = {"sft": judge_asks(outputs["sft"], judged, judge)}
    out = _save(out_dir, cfg, judged, judge, models, outputs)
    for objective in cfg.objectives:
        for seed in cfg.seeds:
            name = f"{objective}-s{seed}"
            model_dir = objective_dir(objective, seed)
            stage = objective_stage(cfg.role(seed), objective, seed)
            stamp = {**base, "stage": json.loads(json.dumps(dataclasses.asdict(stage),
                                                            default=str))}
            kept = trained_model(model_dir, stamp) if cfg.resume else None
            if kept is not None:
                outputs[name] = earlier.get(name) or generate(str(model_dir), prompts,
                                                              role.eval_max_tokens)
                models[name] = {**judge_asks(outputs[name], judged, judge),
                                "objective": objective, "seed": seed, **kept, "resumed": True}
            else:
                t0 = time.perf_counter()
                (model_dir / STAMP).unlink(missing_ok=True)  # no old stamp vouches for these
                result = run_grpo(stage, train, [], sft_dir)
                outputs[name] = generate((result.model, result.tokenizer), prompts,
                                         role.eval_max_tokens)
                models[name] = {**judge_asks(outputs[name], judged, judge),
                                "objective": objective, "seed": seed,
                                "train_s": round(time.perf_counter() - t0, 1),
                                "reward_curve": result.reward_curve}
                del result
            out = _save(out_dir, cfg, judged, judge, models, outputs)
            if kept is None:  # stamped once its outputs are saved (as the write objectives)
                write_text(model_dir / STAMP, json.dumps(stamp, indent=2))
    return out


def _save(out_dir: Path, cfg: AskObjectivesConfig, judged: list[dict], judge: dict,
          models: dict[str, dict], outputs: dict[str, list[str]]) -> dict[str, Any]:
    out = {"split": cfg.split, "rows": len(judged), "reward_judge": judge,
           "play_judge": PLAY_JUDGE, "models": models, "by_objective": by_objective(models)}
    write_text(out_dir / "objectives.json", json.dumps(out, indent=2))
    write_text(out_dir / "objectives_outputs.json", json.dumps(
        {"rows": [r["gold"]["observation"] for r in judged], "outputs": outputs}))
    return out


def by_objective(models: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Per objective: the mean over seeds of each score with a 95% t interval."""
    out: dict[str, dict[str, Any]] = {}
    for objective in dict.fromkeys(m["objective"] for m in models.values() if "objective" in m):
        runs = [m for m in models.values() if m.get("objective") == objective]
        out[objective] = {"n_seeds": len(runs)}
        for key in SCORES:
            out[objective][key] = interval([r[key] for r in runs if r.get(key) is not None])
    return out


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
