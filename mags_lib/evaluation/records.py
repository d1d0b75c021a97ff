"""What an evaluation keeps: one `GameRecord` per (agent, seed), one dict per decision.

Games are appended to `games.jsonl` one JSON line each as soon as they finish, so a run that
stops midway keeps its finished games and can resume (`finished_games`). Decision records are
plain dicts (see `decision_record`), the input of every function in `metrics.py`.

`rule_flags` says whether the memory lines held the governing rule's current text
(`recall_hit`) and whether they held a superseded version of it (`stale_hit`):

    >>> rule_flags(["A scroll reads: On rainy turns, the red quax eats only the slate."],
    ...            "On rainy turns, the red quax eats only the iron.")
    (False, True)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class GameRecord:
    """One finished game: who played, the decisions, the rule changes, the memory at the end.

    `changes` are (turn, key) of the rule changes and additions; `versions` maps each rule key
    to the texts it was shown with, oldest first; `update_fidelity` is None for agents without
    a notion of valid and superseded texts."""

    agent: str
    seed: int
    config_id: str
    decisions: list[dict[str, Any]]
    n_turns: int
    seconds: float
    changes: list[tuple[int, str]] = field(default_factory=list)
    versions: dict[str, list[str]] = field(default_factory=dict)
    update_fidelity: float | None = None
    memory: dict[str, Any] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return sum(d["correct"] for d in self.decisions) / max(len(self.decisions), 1)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["changes"] = [list(c) for c in self.changes]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        data = dict(data)
        data["changes"] = [(int(t), str(k)) for t, k in data.get("changes", [])]
        return cls(**data)


def rule_flags(texts: list[str], current_text: str | None) -> tuple[bool, bool]:
    """(current version among `texts`, a superseded version among `texts`) for the rule whose
    current text is `current_text` (same key, another item = superseded)."""
    from mags_lib.game import parse_rule

    if not current_text:
        return False, False
    current = parse_rule(current_text)
    hit = any(current_text in t for t in texts)
    stale = False
    if current is not None:
        for t in texts:
            rule = parse_rule(t)
            if rule is not None and rule.key == current.key and rule.item != current.item:
                stale = True
    return hit, stale


def decision_record(truth: Any, decision: Any, chosen: str | None, correct: bool,
                    options: tuple[str, ...], memory_size: int) -> dict[str, Any]:
    """The per-decision record kept in `GameRecord.decisions` (prompt text excluded: it goes
    to the explain files)."""
    texts = [r["text"] for r in decision.recalled]
    hit, stale = rule_flags(texts, truth.rule_text if truth else None)
    return {
        "turn": truth.turn if truth else None,
        "key": truth.rule_key if truth else None,
        "rule_text": truth.rule_text if truth else None,
        "correct_action": truth.correct_action if truth else None,
        "options": list(options),
        "chosen": chosen,
        "correct": bool(correct),
        "recalled": decision.recalled,
        "n_lines": len(decision.recalled),
        "prompt_tokens": decision.prompt_tokens,
        "seconds": round(decision.seconds, 4),
        "llm_seconds": round(decision.llm_seconds, 4),
        "memory_seconds": round(decision.memory_seconds, 4),
        "cached": decision.cached,
        "recently_changed": bool(truth.recently_changed) if truth else False,
        "turns_since_change": truth.turns_since_change if truth else None,
        "n_changes": truth.n_changes if truth else 0,
        "answerable": bool(truth.answerable) if truth else True,
        "recall_hit": hit,
        "stale_hit": stale,
        "memory_size": memory_size,
    }


def append_jsonl(path: Path, obj: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk (a crash later keeps it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write all rows atomically (temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    os.replace(tmp, path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file; a torn last line (a crash mid-write) is skipped."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def finished_games(path: Path, config_id: str) -> list[GameRecord]:
    """Games in `path` played under `config_id` (the last record of each (agent, seed))."""
    by_pair: dict[tuple[str, int], GameRecord] = {}
    for row in read_jsonl(path):
        if row.get("config_id") == config_id:
            rec = GameRecord.from_dict(row)
            by_pair[(rec.agent, rec.seed)] = rec
    return list(by_pair.values())
