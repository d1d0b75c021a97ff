"""The write model's GRPO under three objectives, on the same budget: F1 to a gold annotation,
the memory's outcome, and their mix (notebook 08).

* `f1`: `engram_reward`, the soft F1 of the ops against notebook 01's gold engram block (what
  notebook 03 trains with);
* `outcome`: `write_outcome_reward` (`tasks.outcome`): apply the sampled block to the memory a
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
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.errors import MagsError
from mags_lib.models import file_digest
from mags_lib.paths import MODELS_DIR
from mags_lib.tasks.data import data_hash
from mags_lib.tasks.outcome import combine, outcome_terms
from mags_lib.tasks.rewards import WRITE_OPS as OPS
from mags_lib.tasks.rewards import engram_reward, format_reward, op_confusion
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
OBJECTIVES_DIR = MODELS_DIR / "objectives"


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
    `objectives.json` (and each model's outputs) under `out_dir` and returns it."""
    from mags_lib.train.evaluate import generate
    from mags_lib.train.grpo import run_grpo

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
    prompts = [r["prompt"] for r in judged]
    earlier = earlier_outputs(out_dir, judged) if cfg.resume else {}
    base = {"base_digest": file_digest(sft_dir / "model.safetensors"),
            "train_hash": data_hash(rows["train"])}
    outputs = {"sft": generate(str(sft_dir), prompts, role.eval_max_tokens)}
    models = {"sft": judge_writes(outputs["sft"], judged)}
    out = _save(out_dir, cfg, judged, models, outputs)
    for objective in cfg.objectives:
        for seed in cfg.seeds:
            name = f"{objective}-s{seed}"
            stage = objective_stage(cfg.role(seed), objective, seed, cfg)
            stamp = {**base, "stage": json.loads(json.dumps(dataclasses.asdict(stage),
                                                            default=str))}
            kept = trained_model(objective_dir(objective, seed), stamp) if cfg.resume else None
            if kept is not None:
                outputs[name] = earlier.get(name) or generate(
                    str(objective_dir(objective, seed)), prompts, role.eval_max_tokens)
                models[name] = {**judge_writes(outputs[name], judged), "objective": objective,
                                "seed": seed, **kept, "resumed": True}
            else:
                t0 = time.perf_counter()
                # an older stamp must not vouch for the weights this run writes over
                (objective_dir(objective, seed) / STAMP).unlink(missing_ok=True)
                result = run_grpo(stage, rows["train"], [], sft_dir)
                outputs[name] = generate((result.model, result.tokenizer), prompts,
                                         role.eval_max_tokens)
                models[name] = {**judge_writes(outputs[name], judged), "objective": objective,
                                "seed": seed, "train_s": round(time.perf_counter() - t0, 1),
                                "reward_curve": result.reward_curve}
                del result
            out = _save(out_dir, cfg, judged, models, outputs)  # a long study keeps each run
            if kept is None:  # stamped once its outputs are saved: resume never pairs a model
                # with another one's outputs
                write_text(objective_dir(objective, seed) / STAMP, json.dumps(stamp, indent=2))
    return out


STAMP = "objective.json"
"""File in a trained objective model's directory: the write-sft digest, training rows' hash
and stage config it was trained from (what `resume` compares)."""


def trained_model(model_dir: Path, stamp: dict[str, Any]) -> dict[str, Any] | None:
    """`{"train_s", "reward_curve"}` of the model in `model_dir` when it was trained under
    `stamp` (same base weights, training rows and stage config) and its weights are there;
    None otherwise (no stamp, another stamp, an unreadable one, no weights)."""
    try:
        same = json.loads((model_dir / STAMP).read_text()) == stamp
        manifest = json.loads((model_dir / "manifest.json").read_text())
        curve = json.loads((model_dir / "reward_curve.json").read_text())
    except (OSError, ValueError):
        return None
    if not same or not (model_dir / "model.safetensors").is_file():
        return None
    return {"train_s": round(float(manifest.get("wall_s", 0.0)), 1), "reward_curve": curve}


def earlier_outputs(out_dir: Path, judged: list[dict]) -> dict[str, list[str]]:
    """The outputs a previous run saved, when it judged the same rows (else none)."""
    try:
        saved = json.loads((out_dir / "objectives_outputs.json").read_text())
    except (OSError, ValueError):
        return {}
    if saved.get("rows") != [r["gold"]["observation"] for r in judged]:
        return {}
    return {k: v for k, v in saved.get("outputs", {}).items()
            if isinstance(v, list) and len(v) == len(judged)}


def _save(out_dir: Path, cfg: WriteObjectivesConfig, judged: list[dict],
          models: dict[str, dict], outputs: dict[str, list[str]]) -> dict[str, Any]:
    out = {"split": cfg.split, "rows": len(judged),
           "gold_ops": dict(Counter(r["gold"]["op"] for r in judged)),
           "models": models, "by_objective": by_objective(models)}
    write_text(out_dir / "objectives.json", json.dumps(out, indent=2))
    write_text(out_dir / "objectives_outputs.json", json.dumps(
        {"rows": [r["gold"]["observation"] for r in judged], "outputs": outputs}))
    return out


def by_objective(models: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Per objective: the mean over seeds of each score with a 95% t interval (None with one
    seed)."""
    out: dict[str, dict[str, Any]] = {}
    for objective in dict.fromkeys(m["objective"] for m in models.values() if "objective" in m):
        runs = [m for m in models.values() if m.get("objective") == objective]
        out[objective] = {"n_seeds": len(runs)}
        for key in ("op_accuracy", "f1", "outcome", "held", "stale", "adherence"):
            values = [r[key] for r in runs if r.get(key) is not None]
            out[objective][key] = interval(values)
    return out


_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262}


def interval(values: list[float]) -> dict[str, float | None]:
    """Mean and 95% t interval of `values` (None bounds with fewer than two).

    >>> interval([0.5, 0.7, 0.6])["mean"], round(interval([0.5, 0.7, 0.6])["ci_low"], 3)
    (0.6, 0.352)
    """
    if not values:
        return {"mean": None, "ci_low": None, "ci_high": None}
    m = mean(values)
    if len(values) < 2:
        return {"mean": m, "ci_low": None, "ci_high": None}
    half = _T95.get(len(values) - 1, 1.96) * stdev(values) / math.sqrt(len(values))
    return {"mean": m, "ci_low": m - half, "ci_high": m + half}


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
