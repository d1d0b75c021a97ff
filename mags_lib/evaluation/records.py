"""What an evaluation keeps: one `GameRecord` per (agent, seed), one dict per decision.

Games are appended to `games.jsonl` one JSON line each as soon as they finish, so a run that
stops midway keeps its finished games and can resume (`finished_games`). Decision records are
plain dicts (see `decision_record`), the input of every function in `metrics.py`.

`rule_flags` says whether the memory lines held the governing rule's current version
(`recall_hit`) and whether they held a superseded version of it (`stale_hit`). A line states a
version when it names the rule's creature, its condition and the version's item, in any
wording (`states_rule`): memory lines are raw observations for some agents, texts a write
model wrote for others, and on the varied surface no template matches them all. Scoring may
read the ground truth (the rule key, its items); agents never do.

    >>> rule_flags(["A scroll reads: On rainy turns, the red quax eats only the slate."],
    ...            "red quax|rainy", "iron", "slate")
    (False, True)
    >>> states_rule("Only the iron is eaten by the red quax whenever the turn is rainy.",
    ...             "red quax|rainy", "iron")
    True
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mags_lib.atomic import write_text


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
    loop: dict[str, Any] = field(default_factory=dict)  # closed-loop counts and routes

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


def _words(text: str) -> str:
    """`text` lower-cased, punctuation to spaces, single-spaced and padded: " a b c "."""
    return " " + " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split()) + " "


def _names(words: str, phrase: str) -> bool:
    """Whether padded `words` hold `phrase` (or its plural) as whole words."""
    w = " ".join(phrase.lower().split())
    return f" {w} " in words or f" {w}s " in words


def states_rule(text: str, key: str | None, item: str | None) -> bool:
    """Whether `text` names the creature and condition of rule `key` ("creature|condition")
    and `item`."""
    if not key or not item or "|" not in key:
        return False
    creature, condition = key.split("|", 1)
    words = _words(text)
    return _names(words, creature) and _names(words, condition) and _names(words, item)


def rule_flags(texts: list[str], key: str | None, item: str | None,
               old_item: str | None) -> tuple[bool, bool]:
    """(current version among `texts`, the previous version among `texts`): a text states
    the previous version when it names `old_item` and not the current `item`."""
    hit = any(states_rule(t, key, item) for t in texts)
    stale = bool(old_item) and any(states_rule(t, key, old_item)
                                   and not states_rule(t, key, item) for t in texts)
    return hit, stale


def decision_record(truth: Any, decision: Any, chosen: str | None, correct: bool,
                    options: tuple[str, ...], memory_size: int,
                    nodes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The per-decision record kept in `GameRecord.decisions` (prompt text excluded: it goes
    to the explain files). `nodes` (the agent's stored texts with validity, or None) give the
    memory's state at decision time: whether a valid node holds the governing rule's current
    version (`held_valid`) and whether one still holds its previous version (`held_stale`)."""
    texts = [r["text"] for r in decision.recalled]
    key = truth.rule_key if truth else None
    item = truth.correct_action if truth else None
    old = truth.old_value if truth else None
    hit, stale = rule_flags(texts, key, item, old)
    held = held_stale = None
    if nodes is not None:
        held, held_stale = rule_flags([n["text"] for n in nodes if n["valid"]], key, item, old)
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
        "held_valid": held,
        "held_stale": held_stale,
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
    write_text(path, "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n"
                             for row in rows))


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
