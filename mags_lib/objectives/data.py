"""Training rows for the ask / write / answer models: the one row format, read and written as JSONL.

A row is a prompt-completion example (TRL's "conversational prompt-completion" type) plus the
ground truth the reward functions need:

    {
      "prompt":     [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}],
      "completion": [{"role": "assistant", "content": "<recall>\\nquery: ...\\n</recall>"}],
      "task":       "ask" | "write" | "answer",
      "gold":       {...},          # task-specific ground truth, see below
      "game_seed":  17              # the game that produced the row (for splits and replays)
    }

`gold` by task (extra keys are kept and ignored; a row missing these is skipped as bad_gold):

- ask:    `memory_facts` (list of fact strings, or `{"text", "block"}` dicts: what the memory
          holds, the gold fact among distractors), `gold_node_text` (the fact to retrieve),
          optional `gold_key`.
- write:  `ops`: the engram ops the observation should produce, either canonical action text
          (`"<engram>\\nadd semantic 0.90: ...\\n</engram>"`) or a list of
          `{"op": "add"|"update"|"link"|"forget", "text": "...", "block": "semantic"}` dicts
          (a link's text is `"A -> B"`). An empty list means "nothing worth storing".
- answer: `answer` (the correct option: its label such as "B", or its text), optional
          `options` (list of option texts, labelled A, B, C, ... in order).

`load_jsonl(path, task)` never raises on a bad row: it skips it and counts why in a
`SkipReport` (reasons: bad_json, not_an_object, missing:FIELD, bad_type:FIELD, bad_value:task,
bad_gold:TASK, other_task). `to_dataset(rows, "sft"|"grpo")` builds the `datasets.Dataset` a trainer takes
(for GRPO `gold` travels as a JSON string, because rows of different tasks have different gold
keys and Arrow wants one schema; the rewards accept a dict or its JSON).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mags_lib.atomic import write_text
from mags_lib.errors import MagsError

log = logging.getLogger(__name__)

Task = Literal["ask", "write", "answer"]
TASKS: tuple[str, ...] = ("ask", "write", "answer")
TASK_KIND = {"ask": "recall", "write": "engram", "answer": "answer"}
"""The output kind each task's completion is parsed as (`parse_actions(kind=...)` or answers)."""

REQUIRED = ("prompt", "completion", "task", "gold", "game_seed")
_EXAMPLES_KEPT = 5  # (line, reason) pairs a SkipReport quotes


@dataclass
class SkipReport:
    """What `load_jsonl` read, kept and skipped (with a count per reason)."""

    path: str
    read: int = 0
    kept: int = 0
    reasons: Counter = field(default_factory=Counter)
    examples: list[tuple[int, str]] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return sum(self.reasons.values())

    def add(self, line_no: int, reason: str) -> None:
        self.reasons[reason] += 1
        if len(self.examples) < _EXAMPLES_KEPT:
            self.examples.append((line_no, reason))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "read": self.read, "kept": self.kept, "skipped": self.skipped,
                "reasons": dict(self.reasons), "examples": self.examples}

    def __str__(self) -> str:
        if not self.skipped:
            return f"{self.path}: kept all {self.kept} rows"
        why = ", ".join(f"{r}: {n}" for r, n in self.reasons.most_common())
        first = "; ".join(f"line {i}: {r}" for i, r in self.examples)
        return (f"{self.path}: kept {self.kept} of {self.read} rows, skipped {self.skipped} "
                f"({why}); first: {first}")


def _is_messages(value: Any) -> bool:
    return (isinstance(value, list) and len(value) > 0 and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in value))


def _gold_ok(task: str, gold: dict) -> bool:
    """The keys the rewards of `task` read are there, with the right types."""
    if task == "ask":
        facts = gold.get("memory_facts")
        return (isinstance(facts, list) and len(facts) > 0
                and isinstance(gold.get("gold_node_text"), str))
    if task == "write":
        return isinstance(gold.get("ops"), (str, list))
    return isinstance(gold.get("answer"), str)


def row_problem(row: Any, task: str | None = None) -> str | None:
    """Why `row` is not a valid training row (a short reason), or None if it is."""
    if not isinstance(row, dict):
        return "not_an_object"
    for key in REQUIRED:
        if key not in row:
            return f"missing:{key}"
    if not _is_messages(row["prompt"]):
        return "bad_type:prompt"
    completion = row["completion"]
    if not _is_messages(completion) or completion[-1]["role"] != "assistant":
        return "bad_type:completion"
    if row["task"] not in TASKS:
        return "bad_value:task"
    if not isinstance(row["gold"], dict):
        return "bad_type:gold"
    if not _gold_ok(row["task"], row["gold"]):
        return f"bad_gold:{row['task']}"
    seed = row["game_seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        return "bad_type:game_seed"
    if task is not None and row["task"] != task:
        return "other_task"
    return None


def load_jsonl(path: str | Path, task: str | None = None) -> tuple[list[dict], SkipReport]:
    """Valid rows of `task` (all tasks if None) from a JSONL file, and what was skipped.

    Raises `MagsError` only when the file does not exist; bad rows are counted, not fatal.
    """
    path = Path(path)
    if task is not None and task not in TASKS:
        raise MagsError(f"unknown task {task!r}", f"use one of {', '.join(TASKS)} or None")
    if not path.is_file():
        raise MagsError(f"training data file not found: {path}",
                        "run notebook 01 (data generation) first, or point the config at an "
                        "existing .jsonl file")
    report, rows = SkipReport(path=str(path)), []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            report.read += 1
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                report.add(line_no, "bad_json")
                continue
            problem = row_problem(row, task)
            if problem:
                report.add(line_no, problem)
                continue
            rows.append(row)
    report.kept = len(rows)
    if report.skipped:
        log.warning("%s", report)
    return rows, report


def write_jsonl(path: str | Path, rows: list[dict]) -> Path:
    """Write rows as JSONL atomically (temp file, then rename)."""
    return write_text(path, "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
                                    for row in rows))


ROW_SOURCES: tuple[str, ...] = ("game", "persona", "locomo")
"""What rows are made from: the senseless game, a person's facts, LoCoMo's conversations."""


def row_source(row: dict) -> str:
    """What a row was made from: its gold's `source` ('persona', 'locomo'), else 'game'.

    >>> row_source({"gold": {"source": "persona"}}), row_source({"gold": {"op": "add"}})
    ('persona', 'game')
    """
    return str((row.get("gold") or {}).get("source") or "game")


def data_hash(rows: list[dict]) -> str:
    """A short, order-sensitive content hash of rows (for manifests)."""
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def gold_of(value: Any) -> dict:
    """A row's gold as a dict, whether it arrives as a dict or as its JSON string."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            out = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return out if isinstance(out, dict) else {}
    return {}


def batch_column(value: Any, n: int, default: Any = None) -> list:
    """A dataset column as a reward receives it (TRL passes each column as a keyword list
    aligned with the `n` completions): the list, or `[default] * n` when it is missing or not
    aligned.

    >>> batch_column(["ask", "write"], 2), batch_column(None, 2, "any")
    (['ask', 'write'], ['any', 'any'])
    """
    return list(value) if isinstance(value, (list, tuple)) and len(value) == n else [default] * n


def _plain(messages: list[dict]) -> list[dict[str, str]]:
    """Messages reduced to role + content, so every row has the same Arrow schema."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def to_dataset(rows: list[dict], stage: Literal["sft", "grpo"]):
    """A `datasets.Dataset` for a trainer: SFT gets prompt + completion; GRPO gets prompt plus
    the columns the rewards read (`task`, `gold` as JSON, `game_seed`)."""
    from datasets import Dataset

    if stage == "sft":
        return Dataset.from_list([{"prompt": _plain(r["prompt"]), "completion": _plain(r["completion"])}
                                  for r in rows])
    return Dataset.from_list([{"prompt": _plain(r["prompt"]), "task": r["task"],
                               "gold": json.dumps(r["gold"], sort_keys=True),
                               "game_seed": r["game_seed"]} for r in rows])
