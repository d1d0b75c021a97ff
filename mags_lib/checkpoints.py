"""Which stage of a role's run is its final model: SFT or SFT+GRPO, whichever judged better on val.

GRPO can make a model worse (here it halved the write model's engram F1), so a run keeps the
better stage rather than the last one:

    stage, why = select_stage(report.stages)          # "grpo" unless SFT scored higher on val
    write_selection(models_dir, "write", stage, why, scores)   # models/write-selected.json
    final_model_name("write")                          # "write-sft" or "write-grpo"

The rule: the mean task accuracy over the role's tasks on the judged val rows, then the mean
adherence; GRPO keeps a tie (no evidence that it hurt). Notebook 04 exports the selected
stage (`mags_lib.export.trained_models`) and notebook 06 plays the selected answer model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mags_lib.manifest import write_json
from mags_lib.paths import MODELS_DIR

CANDIDATES: tuple[str, ...] = ("sft", "grpo")
"""Stages that can be a role's final model, in training order (a later one wins a tie)."""


def stage_score(generation: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """(mean accuracy, mean adherence) over a stage's per-task generation reports; a missing
    number counts as 0.

    >>> stage_score({"ask": {"accuracy": 0.5, "adherence": 1.0},
    ...              "write": {"accuracy": None, "adherence": 0.5}})
    (0.25, 0.75)
    """
    if not generation:
        return (0.0, 0.0)
    # a write report's accuracy is its op accuracy balanced over add / update / none when it
    # has one: mean F1 on val rows that are mostly "none" picked a model that never stores
    acc = [(g["op_balanced"] if g.get("op_balanced") is not None else g.get("accuracy")) or 0.0
           for g in generation.values()]
    adh = [g.get("adherence") or 0.0 for g in generation.values()]
    return (sum(acc) / len(acc), sum(adh) / len(adh))


def select_stage(generations: dict[str, Any]) -> tuple[str, str]:
    """(stage, reason) of the best of `CANDIDATES` by `stage_score`; later stages win ties.

    `generations` maps a stage to its per-task generation dict, or to an object with a
    `.generation` attribute (a `StageRecord`).

    >>> select_stage({"sft": {"write": {"accuracy": 0.46, "adherence": 1.0}},
    ...               "grpo": {"write": {"accuracy": 0.21, "adherence": 1.0}}})[0]
    'sft'
    >>> select_stage({"sft": {"write": {"accuracy": 0.78, "op_balanced": 0.33, "adherence": 1.0}},
    ...               "grpo": {"write": {"accuracy": 0.60, "op_balanced": 0.70, "adherence": 1.0}}})[0]
    'grpo'
    >>> select_stage({"sft": {"ask": {"accuracy": 1.0, "adherence": 1.0}},
    ...               "grpo": {"ask": {"accuracy": 1.0, "adherence": 1.0}}})[0]
    'grpo'
    """
    scores = {s: stage_score(getattr(g, "generation", g)) for s, g in generations.items()
              if s in CANDIDATES}
    if not scores:
        raise ValueError(f"no stage among {CANDIDATES} to select from: {sorted(generations)}")
    best = max(scores, key=lambda s: (scores[s], CANDIDATES.index(s)))
    detail = ", ".join(f"{s}: accuracy {a:.3f}, adherence {h:.3f}" for s, (a, h) in scores.items())
    return best, ("best mean val accuracy (a write model's: op accuracy balanced over add / "
                  f"update / none), then adherence; a later stage wins a tie ({detail})")


def selection_path(role: str, models_dir: str | Path | None = None) -> Path:
    """`models/<role>-selected.json`: which stage of the role's run is final."""
    return Path(models_dir or MODELS_DIR) / f"{role}-selected.json"


def write_selection(role: str, stage: str, reason: str, model_dir: str | Path,
                    models_dir: str | Path | None = None) -> Path:
    return write_json(selection_path(role, models_dir),
                      {"role": role, "stage": stage, "model": f"{role}-{stage}",
                       "model_dir": str(model_dir), "reason": reason})


def selected_stage(role: str, models_dir: str | Path | None = None) -> str | None:
    """The stage recorded for `role`, or None without a (readable) selection file."""
    path = selection_path(role, models_dir)
    try:
        stage = json.loads(path.read_text()).get("stage")
    except (OSError, ValueError, AttributeError):
        return None
    return stage if stage in CANDIDATES else None


def final_model_name(role: str, models_dir: str | Path | None = None) -> str:
    """`<role>-<stage>` of the selected stage; `<role>-grpo` when no selection was recorded."""
    return f"{role}-{selected_stage(role, models_dir) or CANDIDATES[-1]}"
