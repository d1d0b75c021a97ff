"""One role's GRPO under several objectives, on one budget: train each objective x seed from the
role's SFT model, judge every model on the same held-out rows, resume what was trained before.

    out = run_study(Study(sft_dir, train, judged, judge, stage, save, eval_tokens),
                    objectives=["f1", "outcome"], seeds=[0, 1, 2], out_dir=..., resume=True)

The write objectives (notebook 08, `write_objectives.py`) and the ask objectives (notebook 11,
`ask_objectives.py`) are this loop with their own rows, judge and stages. A trained model
carries a stamp (`STAMP`: the SFT weights' digest, the training rows' hash, the stage config);
with `resume`, a model whose stamp matches is not trained again, and its outputs from the last
run are judged again when that run judged the same rows. The stamp is written only after the
model's outputs are saved, so a run that dies mid-training never leaves a stamp that vouches
for half-written weights, and resume never pairs a model with another one's outputs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.models import file_digest
from mags_lib.objectives.data import data_hash
from mags_lib.paths import MODELS_DIR

OBJECTIVES_DIR = MODELS_DIR / "objectives"
STAMP = "objective.json"
"""File in a trained objective model's directory: the SFT model's digest, the training rows'
hash and the stage config it was trained from (what `resume` compares)."""


@dataclass
class Study:
    """What `run_study` needs from a role."""

    sft_dir: Path  # the SFT model every objective's GRPO starts from (and the 'sft' row)
    train: list[dict]  # GRPO's training rows (hashed into the stamp)
    judged: list[dict]  # the held-out rows every model is judged on (their gold["observation"])
    judge: Callable[[list[str]], dict[str, Any]]  # outputs on `judged` -> scores
    stage: Callable[[str, int], Any]  # (objective, seed) -> GRPO stage, its output_dir set
    save: Callable[[dict, dict], dict[str, Any]]  # (models, outputs) -> the study, written
    eval_tokens: int  # tokens generated per judged prompt


def run_study(study: Study, objectives: list[str], seeds: list[int], out_dir: Path,
              resume: bool = True) -> dict[str, Any]:
    """Train each objective x seed (or keep it, under `resume`), judge every model on
    `study.judged`, save after each model; returns what `study.save` returned last."""
    from mags_lib.train.evaluate import generate
    from mags_lib.train.grpo import run_grpo

    prompts = [r["prompt"] for r in study.judged]
    earlier = earlier_outputs(out_dir, study.judged) if resume else {}
    base = {"base_digest": file_digest(study.sft_dir / "model.safetensors"),
            "train_hash": data_hash(study.train)}
    outputs = {"sft": generate(str(study.sft_dir), prompts, study.eval_tokens)}
    models = {"sft": study.judge(outputs["sft"])}
    out = study.save(models, outputs)
    for objective in objectives:
        for seed in seeds:
            name = f"{objective}-s{seed}"
            stage = study.stage(objective, seed)
            model_dir = Path(stage.output_dir)
            stamp = {**base, "stage": json.loads(json.dumps(dataclasses.asdict(stage),
                                                            default=str))}
            kept = trained_model(model_dir, stamp) if resume else None
            if kept is not None:
                outputs[name] = earlier.get(name) or generate(str(model_dir), prompts,
                                                              study.eval_tokens)
                models[name] = {**study.judge(outputs[name]), "objective": objective,
                                "seed": seed, **kept, "resumed": True}
            else:
                t0 = time.perf_counter()
                (model_dir / STAMP).unlink(missing_ok=True)  # no old stamp vouches for these
                result = run_grpo(stage, study.train, [], study.sft_dir)
                outputs[name] = generate((result.model, result.tokenizer), prompts,
                                         study.eval_tokens)
                models[name] = {**study.judge(outputs[name]), "objective": objective,
                                "seed": seed, "train_s": round(time.perf_counter() - t0, 1),
                                "reward_curve": result.reward_curve}
                del result
            out = study.save(models, outputs)  # a long study keeps each model as it goes
            if kept is None:
                write_text(model_dir / STAMP, json.dumps(stamp, indent=2))
    return out


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
    if saved.get("rows") != observations(judged):
        return {}
    return {k: v for k, v in saved.get("outputs", {}).items()
            if isinstance(v, list) and len(v) == len(judged)}


def observations(judged: list[dict]) -> list[str]:
    """What identifies the judged rows in `objectives_outputs.json`."""
    return [r["gold"]["observation"] for r in judged]


def save_study(out_dir: Path, out: dict[str, Any], judged: list[dict],
               outputs: dict[str, list[str]]) -> dict[str, Any]:
    """Write `out` to `objectives.json` and the outputs to `objectives_outputs.json`."""
    write_text(out_dir / "objectives.json", json.dumps(out, indent=2))
    write_text(out_dir / "objectives_outputs.json", json.dumps(
        {"rows": observations(judged), "outputs": outputs}))
    return out


def by_objective(models: dict[str, dict], keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Per objective: the number of seeds and, per score in `keys`, the mean over seeds with a
    95% t interval (None bounds with one seed)."""
    out: dict[str, dict[str, Any]] = {}
    for objective in dict.fromkeys(m["objective"] for m in models.values() if "objective" in m):
        runs = [m for m in models.values() if m.get("objective") == objective]
        out[objective] = {"n_seeds": len(runs)}
        for key in keys:
            out[objective][key] = interval([r[key] for r in runs if r.get(key) is not None])
    return out


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
    from scipy import stats

    t = float(stats.t.ppf(0.975, len(values) - 1))
    half = t * stdev(values) / math.sqrt(len(values))
    return {"mean": m, "ci_low": m - half, "ci_high": m + half}
