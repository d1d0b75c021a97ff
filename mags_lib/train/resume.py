"""Resume an interrupted training run from its newest trainer checkpoint.

A CPU run of one role takes one to two hours (notebook 03's SFT is 550 steps of 8 to 11 s), so
a killed kernel, a closed laptop or a stopped `make models` should not cost the steps already
taken. With `save_steps > 0` the trainer writes `models/<name>/trainer/checkpoint-<step>/`
(adapter, optimiser, scheduler, RNG states, the data position; `save_total_limit=1` keeps the
newest only), and this module decides whether a new run continues from it:

    point = agreed_resume_point(out / "trainer", run_fingerprint(cfg, rows), cfg.resume)
    trainer.train(resume_from_checkpoint=point.path)   # None: from the start
    clear(out / "trainer")                             # once the model is saved

and a stage that finished (its manifest holds the same fingerprint, its model is saved) is
loaded instead of trained again (`finished_run`), so a run killed in GRPO keeps its SFT model.

A checkpoint is used only by the run that wrote it: `trainer/run.json` holds the fingerprint of
the stage config, the training rows, the training code (the modules of `train/`, `objectives/`
and `actions/` that the trainers load, with those packages' grammars) and, for GRPO, the model
it starts from; a run whose fingerprint differs removes the checkpoints and
starts over, saying why. Settings that do not change what is trained (`resume`, `save_steps`,
`torch_threads`, `logging_steps`, the judging sizes) are left out of the fingerprint, so a run
can be resumed with fewer threads. A checkpoint
without its `trainer_state.json` (the process died while writing it) is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.code_graph import closure, code_digest, code_index
from mags_lib.code_shape import code_shape

log = logging.getLogger(__name__)

RUN_FILE = "run.json"
STEP_DIR = re.compile(r"^checkpoint-(\d+)$")
# StageConfig fields that change how a run is carried out or judged, not what it trains
NOT_TRAINED: frozenset[str] = frozenset({
    "resume", "save_steps", "torch_threads", "logging_steps", "eval_max_tokens",
    "max_eval_rows", "eval_generate", "log_completions"})
TRAINING_CODE: tuple[str, ...] = ("train", "objectives", "actions")
# what runs a training step: the modules these load (within TRAINING_CODE) are the training code
TRAINERS: frozenset[str] = frozenset({"mags_lib.train.sft", "mags_lib.train.grpo"})
PACKAGE_DIR = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ResumePoint:
    """Where a run starts: `path` is the checkpoint to resume (None: the first step) and
    `step` its optimiser step; `reason` says why, for the log and the manifest."""

    path: str | None
    step: int
    reason: str


def run_fingerprint(cfg: Any, data_hash: str, start_from: str = "") -> str:
    """A short hash of what a run trains: the stage config's fields (less `NOT_TRAINED`), the
    training rows' hash, the training code (`training_code_digest`) and, for GRPO, a stamp of
    the model it starts from."""
    fields = {k: v for k, v in asdict(cfg).items() if k not in NOT_TRAINED}
    text = json.dumps({"cfg": fields, "data": data_hash, "start": start_from,
                       "code": training_code_digest()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def training_code_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """Hash of the code that shapes a training step: the modules of `train/` (trainers, losses),
    `objectives/` (rows, rewards) and `actions/` (the parsers the rewards use) that `TRAINERS`
    load (their static import closure, `mags_lib.code_graph`), with those packages' data files
    (the grammars). A checkpoint written before an edit there is not resumed: its optimiser state
    belongs to other code. An edit of a study beside the trainers (`train/recall_reranker.py`,
    `train/transfer.py`, ...) keeps the checkpoints: on 2026-12-06 one threw away two hours of
    notebook 03's SFT when the whole folder counted. Each file counts by its shape
    (`mags_lib.code_shape`), so that editing a comment, a docstring or a help string does not
    throw away hours of training either."""
    index = code_index(package_dir)
    parts = tuple(f"{package_dir.name}.{p}" for p in TRAINING_CODE)
    loaded = {m for m in closure(set(TRAINERS), index.imports)
              if m in parts or m.startswith(tuple(f"{p}." for p in parts))}
    return code_digest(index, loaded)


def package_code_digest(parts: Sequence[str], package_dir: Path = PACKAGE_DIR) -> str:
    """Hash of the package's Python files under `parts` (sub-packages, or single modules such
    as "embed.py"), each by its path and `code_shape`; a part that is not there adds nothing."""
    h = hashlib.sha256()
    for sub in parts:
        root = package_dir / sub
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root] if root.is_file() else []
        for path in files:
            h.update(str(path.relative_to(package_dir)).encode() + b"\0"
                     + code_shape(path.read_text(encoding="utf-8")).encode())
    return h.hexdigest()[:16]


def model_stamp(model_dir: str | Path) -> str:
    """A stamp of a saved model for `run_fingerprint`: the sizes and modification times of
    its weight files (a retrained SFT model gets a new stamp; hashing 500 MB would take
    seconds on every run)."""
    root = Path(model_dir)
    files = sorted(p for p in root.glob("*.safetensors")) if root.is_dir() else []
    return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)


def checkpoints(trainer_dir: Path) -> list[tuple[int, Path]]:
    """The complete checkpoints under `trainer_dir` as (step, path), oldest first."""
    found = []
    if trainer_dir.is_dir():
        for p in trainer_dir.iterdir():
            m = STEP_DIR.match(p.name)
            if m and p.is_dir() and (p / "trainer_state.json").is_file():
                found.append((int(m.group(1)), p))
    return sorted(found)


def resume_point(trainer_dir: Path, fingerprint: str, resume: bool = True,
                 write: bool = True) -> ResumePoint:
    """Decide where a run with `fingerprint` starts, and (with `write`, rank 0 of a launch)
    record the fingerprint in `trainer_dir/run.json` and remove checkpoints it cannot use."""
    saved = _saved_fingerprint(trainer_dir)
    found = checkpoints(trainer_dir)
    if found and resume and saved == fingerprint:
        step, path = found[-1]
        point = ResumePoint(str(path), step, f"resumed from {path} (step {step})")
        log.warning("training %s: %s", trainer_dir.parent.name, point.reason)
        return point
    if not found:
        reason = "no checkpoint"
    elif not resume:
        reason = f"resume=False: {len(found)} checkpoint(s) removed"
    else:
        reason = (f"checkpoint(s) of another run removed (its config, rows, start model or "
                  f"training code differ: fingerprint {saved or 'missing'}, this run {fingerprint})")
    if found:
        log.warning("training %s: %s; starting from step 0", trainer_dir.parent.name, reason)
    if write:
        clear(trainer_dir)
        trainer_dir.mkdir(parents=True, exist_ok=True)
        write_text(trainer_dir / RUN_FILE, json.dumps({"fingerprint": fingerprint}))
    return ResumePoint(None, 0, reason)


def agreed_resume_point(trainer_dir: Path, fingerprint: str, resume: bool = True) -> ResumePoint:
    """`resume_point` for every process of a launch: rank 0 decides and tidies the folder,
    the others read its decision after a barrier (in a single process: rank 0's alone)."""
    from mags_lib.train.common import is_main_process, wait_for_everyone

    point = resume_point(trainer_dir, fingerprint, resume) if is_main_process() else None
    wait_for_everyone()
    return point or resume_point(trainer_dir, fingerprint, resume, write=False)


def finished_run(out_dir: Path, fingerprint: str) -> dict | None:
    """The manifest of the run of `fingerprint` that finished in `out_dir` (its merged model and
    adapter saved beside the manifest), else None. A stage whose run finished before a later
    one broke (SFT done, GRPO killed) is then loaded, not trained again."""
    try:
        found = json.loads((out_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("run_fingerprint") != fingerprint:
        return None
    saved = ((out_dir / "config.json").is_file() and any(out_dir.glob("*.safetensors"))
             and (out_dir / "adapter" / "adapter_config.json").is_file())
    if saved:
        log.warning("training %s: the same run finished at %s: loading it (resume=False trains "
                    "it again)", out_dir.name, found.get("time_utc", "?"))
    return found if saved else None


def clear(trainer_dir: Path) -> None:
    """Remove the run's checkpoints (complete or not), its fingerprint and TRL's model card,
    then the folder itself if nothing else is in it (a finished run keeps no optimiser state)."""
    if not trainer_dir.is_dir():
        return
    for p in trainer_dir.iterdir():
        if STEP_DIR.match(p.name) or p.name.startswith("tmp-checkpoint"):
            shutil.rmtree(p, ignore_errors=True)
    (trainer_dir / RUN_FILE).unlink(missing_ok=True)
    card = trainer_dir / "README.md"  # TRL writes a model card beside each checkpoint
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if "generated_from_trainer" in card.read_text():
            card.unlink()
    with contextlib.suppress(OSError):  # something else is there (a user's file): leave it
        trainer_dir.rmdir()


def _saved_fingerprint(trainer_dir: Path) -> str | None:
    try:
        return json.loads((trainer_dir / RUN_FILE).read_text())["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
