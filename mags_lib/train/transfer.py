"""One-sided write models for the transfer matrix (notebook 14).

The mixed write model (notebook 03) learns from the game, the persona conversations and
LoCoMo's training conversations together. The transfer matrix asks what each side alone gives:
the same recipe (SFT then GRPO, the role's LoRA, learning rates and decision-token weight) on
the rows of one side only, judged beside the mixed model on every task's held-out text
(`evaluation.transfer`).

    cfg = side_config("game", grpo_steps=10, source_repeats={"game": 2})
    cfg = cfg.with_steps(matched_steps(cfg, mix))  # each row as often as the mix showed it
    got = train_side(cfg, resume=True)  # {"model_dir", "stage", "reused", "metrics"}

A side's model goes to `models/transfer/<side>/`; with `resume`, a model trained from the same
rows and configuration (its stamp `write-transfer.json` holds the fingerprint) is reused.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.checkpoints import selected_stage
from mags_lib.errors import MagsError
from mags_lib.objectives.data import data_hash
from mags_lib.paths import TRANSFER_MODELS_DIR
from mags_lib.train.roles import RoleTrainConfig

SIDES: dict[str, tuple[str, ...]] = {"game": ("game",), "conversations": ("persona", "locomo")}
"""The transfer matrix's one-sided training sets, by the row sources they keep."""

STAMP = "write-transfer.json"
_RUNTIME = ("models_dir", "output_dir", "name", "torch_threads")  # do not change the model


def side_config(side: str, *, sft_steps: int | None = None, grpo_steps: int | None = None,
                seed: int = 0, smoke: bool = False, base_eval_rows: int | None = 20,
                torch_threads: int | None = None, models_dir: str | Path | None = None,
                source_repeats: dict[str, int] | None = None) -> RoleTrainConfig:
    """The write role's configuration on `side`'s rows only (`SIDES`), its models under
    `models_dir` (default `models/transfer/<side>`); None steps keep the role's.
    `source_repeats` is the mix's (notebook 03's `WRITE_SOURCE_REPEATS`): the counts of the
    side's own sources are kept, so that its rows are weighted as the mix weighed them.

    >>> side_config("conversations", source_repeats={"game": 2}).source_repeats
    {}
    """
    if side not in SIDES:
        raise MagsError(f"unknown transfer side {side!r}", f"use one of {', '.join(SIDES)}")
    repeats = {s: n for s, n in (source_repeats or {}).items() if s in SIDES[side]}
    return RoleTrainConfig(role="write", sources=list(SIDES[side]), seed=seed, smoke=smoke,
                           base_eval_rows=base_eval_rows, torch_threads=torch_threads,
                           source_repeats=repeats,
                           models_dir=str(models_dir or TRANSFER_MODELS_DIR / side)
                           ).with_steps(sft_steps, grpo_steps)


def one_pass_steps(cfg: RoleTrainConfig) -> int:
    """SFT steps for one pass over `cfg`'s training rows (its `source_repeats` applied) at its
    batch: notebook 03's mix makes one such pass, so a side given the mix's repeats and these
    steps sees each of its rows exactly as often as the mix did, and only the other side's
    rows differ."""
    batch = cfg.sft.per_device_train_batch_size * cfg.sft.gradient_accumulation_steps
    return max(1, math.ceil(_train_rows(cfg) / batch))


def matched_steps(cfg: RoleTrainConfig, mix: dict[str, Any]) -> int:
    """SFT steps that show `cfg`'s side each of its rows as often as the mix showed it: the
    passes the mix made (its steps x batch over the rows of every side, its `source_repeats`
    applied) over this side's rows, rounded. `mix` is notebook 03's recorded write config
    (`sources`, None for all, `source_repeats`, `sft.max_steps`), trained at `cfg`'s batch
    (the same role recipe), so the steps scale with the rows. Notebook 03 makes one pass today (550 steps, 4,396 rows at 8), so this is
    `one_pass_steps(cfg)`; a mix trained longer or shorter gives its sides as many passes."""
    from dataclasses import replace

    repeats = dict(mix.get("source_repeats") or {})
    sides = {s for srcs in SIDES.values() for s in srcs}
    if mix.get("sources") is not None and set(mix["sources"]) != sides:  # None: every source
        raise MagsError(f"the mix was trained on {mix.get('sources')}, not on the transfer "
                        f"sides' sources {sorted(sides)}",
                        "rerun notebook 03 with every source, or give notebook 14 SFT_STEPS")
    steps = int((mix.get("sft") or {}).get("max_steps") or 0)
    if steps < 1:
        raise MagsError("the mix's recorded config has no sft.max_steps",
                        "rerun notebook 03 (it records its config), or give notebook 14 SFT_STEPS")
    mix_rows = sum(_train_rows(replace(cfg, sources=list(srcs), source_repeats={
        k: n for k, n in repeats.items() if k in srcs})) for srcs in SIDES.values())
    return max(1, round(steps * _train_rows(cfg) / mix_rows))


def _train_rows(cfg: RoleTrainConfig) -> int:
    from mags_lib.train.stages import load_role_data

    return len(load_role_data(cfg)[0]["train"])


def _strip(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k not in _RUNTIME}
    return d


def fingerprint(cfg: RoleTrainConfig) -> str:
    """What the trained model depends on: the configuration (where it is saved and the thread
    count aside) and the training rows' content hash."""
    from mags_lib.train.stages import load_role_data

    rows = load_role_data(cfg)[0]
    text = json.dumps({"config": _strip(cfg.to_dict()), "train": data_hash(rows["train"]),
                       "val": data_hash(rows["val"])}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def stamp(cfg: RoleTrainConfig, metrics: dict[str, Any], fp: str | None = None) -> Path:
    """Record that the models under `cfg.models_dir` were trained from `cfg` (its fingerprint)
    with `metrics` (the role report's)."""
    path = Path(cfg.models_dir) / STAMP
    write_text(path, json.dumps({"fingerprint": fp or fingerprint(cfg), "sources": cfg.sources,
                                 "metrics": metrics}, indent=2, sort_keys=True, default=str))
    return path


def trained(cfg: RoleTrainConfig, fp: str | None = None) -> dict[str, Any] | None:
    """The stamp of a model trained from `cfg` (same fingerprint, selected model on disk), or
    None (never trained, another configuration or other rows, or files gone)."""
    path = Path(cfg.models_dir) / STAMP
    if not path.is_file():
        return None
    try:
        got = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    stage = selected_stage(cfg.role, cfg.models_dir)
    if got.get("fingerprint") != (fp or fingerprint(cfg)) or stage is None \
            or not (cfg.model_dir(stage) / "config.json").is_file():
        return None
    return got


def train_side(cfg: RoleTrainConfig, resume: bool = True) -> dict[str, Any]:
    """Train the write model of `cfg` (or reuse it, with `resume`, when `trained`); returns
    the selected model's folder and stage, whether it was reused, and the training metrics."""
    from mags_lib.train.stages import train_role

    fp = fingerprint(cfg)
    got = trained(cfg, fp) if resume else None
    if got is None:
        report = train_role(cfg)
        got = {"metrics": {"table": report.table(), **report.metrics()}}
        stamp(cfg, got["metrics"], fp)
        reused = False
    else:
        reused = True
    stage = selected_stage(cfg.role, cfg.models_dir)
    return {"model_dir": str(cfg.model_dir(stage)), "stage": stage, "reused": reused,
            "sources": list(cfg.sources or []), "fingerprint": fp, "metrics": got["metrics"]}
