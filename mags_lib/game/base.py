"""The games' side of the task interface (`mags_lib.tasks.base`): per-turn ground truth.

An agent loop looks the same for every game:

    obs = env.reset(seed=0)
    done = False
    while not done:
        action = policy(obs) if obs.legal_actions else None   # None on information turns
        result = env.step(action)
        obs, done = result.observation, result.done

`current_rules()` is the oracle's view (the rules in force now, as sentences) and
`ground_truth()` says what the current turn is about (the governing rule, the right action, what
a memory should write); agents never see either, evaluations and dataset builders do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from mags_lib.tasks.base import Observation, StepResult, match_action

__all__ = ["KINDS", "GameEnv", "Observation", "StepResult", "StepTruth", "match_action"]

KINDS = ("announce", "distractor", "decide", "feedback", "end")


@dataclass
class StepTruth:
    """What one turn is about, for evaluation and engram training data (never shown to agents).

    `engram_ops` holds (op, text, key) with op in "add" (a rule seen for the first time),
    "update" (a new value for a known rule: supersedes `supersedes`) and "none" (nothing new to
    store: a repeat or an irrelevant fact). `gold_queries` are the queries a perfect ask model
    would send for this turn. `answerable` is False when even a perfect memory of everything
    shown so far would answer wrongly (a silent rule change not yet revealed).
    """

    turn: int
    kind: str
    rule_key: str | None = None
    rule_text: str | None = None
    correct_action: str | None = None
    engram_ops: list[tuple[str, str, str | None]] = field(default_factory=list)
    supersedes: str | None = None
    gold_queries: list[str] = field(default_factory=list)
    turns_since_change: int | None = None
    recently_changed: bool = False
    n_changes: int = 0
    old_value: str | None = None
    answerable: bool = True

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["engram_ops"] = [list(op) for op in self.engram_ops]
        return data


@runtime_checkable
class GameEnv(Protocol):
    """A turn-based text game. `step(None)` on a turn without legal actions."""

    def reset(self, seed: int | None = None) -> Observation: ...

    def step(self, action: str | None) -> StepResult: ...

    def current_rules(self) -> list[str]: ...

    def ground_truth(self) -> StepTruth | None: ...
