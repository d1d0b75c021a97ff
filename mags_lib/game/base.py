"""The environment interface every MAGS game speaks: observations, step results, ground truth.

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

KINDS = ("announce", "distractor", "decide", "feedback", "end")


@dataclass(frozen=True)
class Observation:
    """What the agent reads at one turn. `legal_actions` is empty on a pure information turn;
    `when` is the day the task dates the turn with ("8 May 2023", a conversation's session
    day), None where the task has no calendar (the games)."""

    text: str
    legal_actions: tuple[str, ...] = ()
    turn: int = 0
    kind: str = "announce"
    when: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"text": self.text, "legal_actions": list(self.legal_actions), "turn": self.turn,
               "kind": self.kind}
        return {**out, "when": self.when} if self.when is not None else out


@dataclass
class StepResult:
    """The next observation, the reward earned by the action just taken, and whether play ended."""

    observation: Observation
    reward: float = 0.0
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


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


def match_action(action: str | None, legal_actions: tuple[str, ...]) -> str | None:
    """The legal action an agent's answer names, or None: exact match first, then the same words
    with case, punctuation and a leading article ignored, then the one legal action named as a
    whole word inside a longer answer ("It eats the carrot." -> "carrot").

    >>> match_action("The Carrot.", ("stone", "carrot"))
    'carrot'
    >>> match_action("stone or carrot", ("stone", "carrot")) is None
    True
    """
    if action is None:
        return None
    if action in legal_actions:
        return action
    norm = _normalise(action)
    by_norm = {_normalise(a): a for a in legal_actions}
    if norm in by_norm:
        return by_norm[norm]
    words = f" {norm} "
    named = [a for n, a in by_norm.items() if n and f" {n} " in words]
    return named[0] if len(named) == 1 else None


def _normalise(text: str) -> str:
    words = "".join(c if c.isalnum() or c.isspace() else " " for c in text.lower()).split()
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)
