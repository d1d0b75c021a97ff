"""One role's whole training run: judge the base model, SFT cold start, GRPO, judge each stage.

    report = train_role(RoleTrainConfig(role="ask"))          # or train_role("ask")
    report.markdown()      # base / SFT / SFT+GRPO: adherence, accuracy, wall time, peak memory
    report.reward_curve    # GRPO reward per step (TensorBoard logs: models/ask-grpo/tensorboard/)

Steps, all on the same held-out rows (`eval_rows` per task of the val split, greedy, no grammar):
1. load `<data>/<task>/{train,val,test}.jsonl` (bad rows skipped and counted; missing files
   raise a `MagsError` that names notebook 01, which writes them);
2. judge the base model (transformers, the checkpoint SFT starts from), on the first
   `base_eval_rows` of those rows when set (it writes to the full token budget, so it is the
   slowest to judge);
3. SFT cold start -> `models/<role>-sft/`, judged;
4. GRPO from the SFT model with the role's rewards -> `models/<role>-grpo/`, judged;
5. select the final model: the better of SFT and SFT+GRPO on the val rows (`selection.py`; GRPO
   keeps a tie), recorded in `models/<role>-selected.json` for notebooks 04 and 06;
6. judge the selected model on the test split (same size), when the data has one.
Each model directory holds its manifest (config, data hash, metrics, wall time, peak RSS).
Every judging is kept (`judgments.py`: beside the model, the base model's in
`models/judged/<role>-base.json`) and reused by a later run while the weights, rows, budget,
rewards and code are the same, so a resumed or re-run role judges only what is new.
"""

from __future__ import annotations

import gc
import logging
import random
from pathlib import Path
from typing import Any

from mags_lib.checkpoints import select_stage, write_selection
from mags_lib.errors import MagsError
from mags_lib.objectives.data import load_jsonl, row_source
from mags_lib.train.common import (
    is_main_process,
    peak_memory,
    run_context,
    timed,
    wait_for_everyone,
)
from mags_lib.train.report import RoleReport, StageRecord
from mags_lib.train.roles import RoleTrainConfig

log = logging.getLogger(__name__)

SPLITS: tuple[str, ...] = ("train", "val", "test")


def load_role_data(cfg: RoleTrainConfig) -> tuple[dict[str, list[dict]], dict[str, Any]]:
    """The role's rows by split ({"train", "val", "test"}) and a skip report per file.

    Train and val must exist for every task of the role; test is optional. `cfg.sources`
    keeps the rows of those sources only (every split). Train rows are
    repeated by source (`cfg.source_repeats`) and shuffled with the seed (so `max_train_rows`
    takes a fair sample and mixed tasks interleave); val and test keep their order, so every
    stage is judged on the same rows.
    """
    missing = [cfg.data_root / t / f"{s}.jsonl" for t in cfg.tasks for s in ("train", "val")
               if not (cfg.data_root / t / f"{s}.jsonl").is_file()]
    if missing:
        raise MagsError(
            f"no training data for role {cfg.role!r}: {', '.join(map(str, missing))} not found",
            "run notebook 01 (notebooks/01_synthesize_dataset.ipynb, which writes "
            "data/synth/{ask,write,answer}/{train,val,test}.jsonl) first, e.g. "
            "`python -m mags_lib.pipeline --only 01`; or set RoleTrainConfig.data_dir to a "
            "folder laid out so")
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    skips: dict[str, Any] = {}
    for task in cfg.tasks:
        for split in SPLITS:
            path = cfg.data_root / task / f"{split}.jsonl"
            if split == "test" and not path.is_file():
                continue
            got, report = load_jsonl(path, task=task)
            if not got and split != "test":
                raise MagsError(f"{path} holds no valid {task} rows ({report})",
                                "re-run notebook 01, or fix the rows the report names")
            if cfg.sources is not None:
                got = [r for r in got if row_source(r) in cfg.sources]
            rows[split] += got
            skips[f"{task}/{split}"] = report.to_dict()
    empty = [s for s in ("train", "val") if not rows[s]]
    if empty:
        raise MagsError(f"no {' or '.join(empty)} rows of sources {cfg.sources} for role "
                        f"{cfg.role!r} in {cfg.data_root}",
                        "synthesise rows of those sources (notebook 01, SynthConfig.sources; "
                        "LoCoMo rows need the LoCoMo file), or name other sources")
    rows["train"] = repeat_by_source(rows["train"], cfg.source_repeats)
    random.Random(cfg.seed).shuffle(rows["train"])
    return rows, skips


def repeat_by_source(rows: list[dict], repeats: dict[str, int]) -> list[dict]:
    """Each row as many times as `repeats` gives its source (`row_source`; 1 where unnamed).

    >>> rows = [{"gold": {}}, {"gold": {"source": "persona"}}]
    >>> [row_source(r) for r in repeat_by_source(rows, {"game": 2})]
    ['game', 'game', 'persona']
    """
    present = {row_source(r) for r in rows}
    unknown = sorted(set(repeats) - present)
    if unknown:
        raise MagsError(f"source_repeats names {unknown}, which no training row comes from",
                        f"name sources the data holds: {', '.join(sorted(present))}")
    return [r for r in rows for _ in range(repeats.get(row_source(r), 1))]


def first_per_task(rows: list[dict], n: int) -> list[dict]:
    """The first `n` rows of each task, tasks in order of first appearance (notebook 01
    writes each split shuffled, so the first rows are a fair sample)."""
    seen: dict[str, list[dict]] = {}
    for r in rows:
        bucket = seen.setdefault(r["task"], [])
        if len(bucket) < n:
            bucket.append(r)
    return [r for bucket in seen.values() for r in bucket]


def _judge(model: Any, model_dir: str | Path, rows: list[dict], cfg: RoleTrainConfig,
           reward_params: dict, path: Path | None = None) -> dict:
    """Per-task generation report, with the stages' (SMOKE-shrunk) token budget; kept at
    `path` (default: beside the model in `model_dir`) and reused while nothing it depends on
    changed (`judgments.py`)."""
    from mags_lib.train.judgments import judged_by_task

    with run_context(cfg):
        return judged_by_task(model, model_dir, rows, cfg.stages()[0].eval_max_tokens,
                              reward_params, path)


def _base_stage(cfg: RoleTrainConfig, val: list[dict], reward_params: dict) -> StageRecord:
    """Judge the checkpoint SFT starts from (on rank 0 only under `accelerate launch`; it also
    converts an embedded GGUF once, which the other ranks then load). Its judgment is kept in
    `<models>/judged/<role>-base.json`, so a resumed `make models` does not judge it again."""
    from mags_lib.models import torch_checkpoint

    generation: dict = {}
    with timed() as wall, peak_memory() as mem:
        if is_main_process():
            base = torch_checkpoint(cfg.base_model)
            kept = cfg.model_dir("sft").parent / "judged" / f"{cfg.role}-base.json"
            generation = _judge(str(base), base, val, cfg, reward_params, kept)
        wait_for_everyone()
    return StageRecord("base", generation, wall["s"], mem["rss_mb"], mem["cuda_mb"])


def _record(stage: str, result: Any, wall: dict, mem: dict) -> StageRecord:
    m = result.metrics
    return StageRecord(stage, m.get("generation", {}), wall["s"], mem["rss_mb"], mem["cuda_mb"],
                       train_s=m["train_seconds"], steps=m["steps"],
                       lora_max_change=m["lora_max_change"], model_dir=str(result.model_dir),
                       mining=m.get("mining"))


def train_role(cfg: RoleTrainConfig | str) -> RoleReport:
    """Train and judge one role end to end (see the module docstring); returns the report."""
    from mags_lib.train.grpo import run_grpo
    from mags_lib.train.sft import run_sft

    cfg = RoleTrainConfig(role=cfg) if isinstance(cfg, str) else cfg
    sft_cfg, grpo_cfg = cfg.stages()
    rows, skips = load_role_data(cfg)
    val = first_per_task(rows["val"], cfg.eval_rows_per_task())
    test = first_per_task(rows["test"], cfg.eval_rows_per_task())
    params = grpo_cfg.reward_params
    with timed() as total:
        base_val = first_per_task(val, cfg.base_rows_per_task())
        log.info("role %s: judging the base model on %d val rows", cfg.role, len(base_val))
        stages = {"base": _base_stage(cfg, base_val, params)}
        with timed() as wall, peak_memory() as mem:
            sft = run_sft(sft_cfg, rows["train"], val, params)  # judged as GRPO will be
        stages["sft"] = _record("sft", sft, wall, mem)
        loss_curve = sft.loss_curve
        del sft  # the merged SFT model; GRPO reloads it from disk
        gc.collect()
        with timed() as wall, peak_memory() as mem:
            grpo = run_grpo(grpo_cfg, rows["train"], val, sft_cfg.out_dir)
        stages["grpo"] = _record("grpo", grpo, wall, mem)
        stage, reason = select_stage(stages)
        final_dir = cfg.model_dir(stage)
        if is_main_process():
            write_selection(cfg.role, stage, reason, final_dir, cfg.models_dir)
        log.info("role %s: final model %s (%s)", cfg.role, final_dir.name, reason)
        test_eval, note = None, "no test split in the data"
        if cfg.eval_test and test and is_main_process():
            final = (grpo.model, grpo.tokenizer) if stage == "grpo" else str(final_dir)
            test_eval = _judge(final, final_dir, test, cfg, params,
                               final_dir / "judged-test.json")
            note = ""
        elif not cfg.eval_test:
            note = "eval_test=False"
    report = RoleReport(role=cfg.role, tasks=cfg.tasks, config=cfg.to_dict(),
                        data={"skips": skips, "n": {s: len(r) for s, r in rows.items()},
                              "n_judged": {"val": len(val), "base_val": len(base_val),
                                           "test": len(test)}},
                        stages=stages, loss_curve=loss_curve, reward_curve=grpo.reward_curve,
                        test=test_eval, test_note=note, wall_s=total["s"],
                        selected={"stage": stage, "model_dir": str(final_dir), "reason": reason})
    log.info("role %s done in %.0f s\n%s", cfg.role, total["s"], report.markdown())
    return report
