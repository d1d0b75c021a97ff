"""A model's judgment kept beside it, so that a resumed or re-run training does not judge again.

    key = judgment_key(model_stamp(model_dir), rows, max_tokens, reward_params)
    report = judge_once(model_dir / JUDGED_FILE, key, lambda: eval_by_task(model, rows, ...))

Judging by generation (`evaluate.eval_by_task`) is greedy, so its report is fixed by the model's
weights, the rows, the token budget, the reward parameters and the code that generates and
scores; `judgment_key` hashes exactly these (the weights by `resume.model_stamp`: the sizes and
times of the weight files, which change whenever a model is saved again). On a 2-core CPU the
judging of a role's base model and of each finished stage took about 10 minutes of every resumed
`make models` (journal, 2026-12-02), and a notebook 02 or 03 re-run whose training was all
loaded still judged everything again. A kept report is used only under the same key; a missing,
unreadable or other key's file judges again and replaces it, so a damaged file costs a judging
and never a wrong number. A reused report says so (`reused_judgment_of` in each task's report:
when it was judged).

Greedy decoding can differ in a rare token between thread counts (`torch_threads` may change
on a resume), so a kept report is the model's judgment at the time it was made, not a fresh one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text
from mags_lib.objectives.data import data_hash
from mags_lib.train.resume import PACKAGE_DIR, package_code_digest

log = logging.getLogger(__name__)

JUDGED_FILE = "judged.json"
# what generating and scoring run on: the trainers' package and what the rewards read (the
# parsers, the memory and embedder of the ask model's hit reward, the model loaders)
JUDGING_CODE: tuple[str, ...] = ("train", "objectives", "actions", "memory", "llm", "embed.py",
                                 "models.py")


def judgment_key(model: str, rows: Sequence[dict], max_tokens: int,
                 reward_params: dict | None, package_dir: Path = PACKAGE_DIR) -> str | None:
    """A short hash of what a judging depends on; None when the model has no stamp (nothing
    saved to stamp: such a judging is never kept).

    >>> judgment_key("", [], 8, None) is None
    True
    >>> a = judgment_key("m:1:2", [{"prompt": "p"}], 8, {})
    >>> a == judgment_key("m:1:2", [{"prompt": "p"}], 8, {}), a == judgment_key("m:1:3", [], 8, {})
    (True, False)
    """
    if not model:
        return None
    text = json.dumps({"model": model, "rows": data_hash(list(rows)), "max_tokens": max_tokens,
                       "params": reward_params or {},
                       "code": package_code_digest(JUDGING_CODE, package_dir)},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_judgment(path: Path, key: str | None) -> dict[str, Any] | None:
    """The report kept at `path` under `key`, else None (no file, another key, unreadable)."""
    if key is None:
        return None
    try:
        kept = json.loads(Path(path).read_text(), object_pairs_hook=_int_keys)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or not isinstance(
            kept.get("report"), dict):
        return None
    return kept


def _int_keys(pairs: list[tuple[str, Any]]) -> dict:
    """JSON objects back as `eval_by_task` made them: its only int keys are depths (`hit_at`).

    >>> _int_keys([("1", 0.5), ("write", 2)])
    {1: 0.5, 'write': 2}
    """
    return {int(k) if k.isdigit() else k: v for k, v in pairs}


def judge_once(path: Path, key: str | None, judge: Callable[[], dict[str, dict[str, Any]]],
               what: str = "") -> dict[str, dict[str, Any]]:
    """The report kept at `path` under `key`, else `judge()`'s, kept there (atomically) for the
    next run when `key` is not None. A report is `eval_by_task`'s, {task: report}; a reused one
    has `reused_judgment_of` (when it was judged) in each task's report."""
    kept = load_judgment(path, key)
    if kept is not None:
        log.warning("judging %s: the same model, rows and code were judged at %s: reusing it "
                    "(delete %s to judge again)", what or Path(path).parent.name,
                    kept.get("time_utc"), path)
        return {task: {**rep, "reused_judgment_of": kept.get("time_utc")} if isinstance(
            rep, dict) else rep for task, rep in kept["report"].items()}
    report = judge()
    if key is not None:
        when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        write_text(Path(path), json.dumps({"key": key, "time_utc": when, "report": report},
                                          default=str))
    return report


def judged_by_task(model: Any, model_dir: str | Path, rows: list[dict], max_tokens: int,
                   reward_params: dict | None, path: str | Path | None = None,
                   what: str = "") -> dict[str, dict[str, Any]]:
    """`evaluate.eval_by_task(model, rows, ...)`, kept at `path` (default: `JUDGED_FILE` in
    `model_dir`, whose weights stamp the judging) and reused while its key holds."""
    from mags_lib.train.evaluate import eval_by_task
    from mags_lib.train.resume import model_stamp

    key = judgment_key(model_stamp(model_dir), rows, max_tokens, reward_params)
    where = Path(path) if path is not None else Path(model_dir) / JUDGED_FILE
    return judge_once(where, key, lambda: eval_by_task(model, rows, max_tokens, reward_params),
                      what or Path(model_dir).name)
