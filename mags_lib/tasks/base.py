"""What a task is: the one interface the agents, the evaluation, synthesis and the chat take.

A **task** (`Task`) gives episodes by split ("train", "dev", "test"). An episode has one of
two shapes, and a consumer picks its path by the shape (`Task.interactive`), never by the
task's name:

* an **environment** (`Env`, interactive): `reset(seed)` gives the first `Observation`,
  `step(action)` the next with the reward the action earned; a turn with `legal_actions` is a
  decision, any other turn is information. `ground_truth()` says what the turn is about (the
  rule that governs it, the right action, the gold writes, the gold queries) where the task
  knows it. The senseless game and TextWorld (`mags_lib.game`).
* a **dialogue** (`Dialogue`, recorded): `stream()` gives its turns in order as dated
  `Observation`s (kind `UTTERANCE`, or `REPLY` for the agent's own turns where it stands in
  a speaker's place), `stream_ids()` the id each is cited by ('D<session>:<turn>'); `qa`
  holds the questions asked after them, each with its gold answer, the ids of the turns it
  rests on (the gold evidence) and what it asks; `gold_facts` the facts a perfect writer
  would store, with add / update and what each replaces. The persona conversations and LoCoMo
  (`mags_lib.conversations`).

Agents import this module and nothing of any task: they read `Observation`s and answer with
text (`match_action` finds the legal action a text names). Ground truth scores agents and
makes training data; it never feeds an agent. Tasks are found by name in
`mags_lib.tasks.registry`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

SPLITS = ("train", "dev", "test")
"""Every task's splits: `train` may enter a dataset; `dev` steers choices (a held-out set
whose scores were looked at); `test` is scored once, for a frozen configuration."""


UTTERANCE = "utterance"
"""`Observation.kind` of a dialogue's turn that someone else said."""
REPLY = "reply"
"""`Observation.kind` of a dialogue's turn that the agent itself said, in the place of the
speaker it stands for (the persona's assistant): its own words, not news about the world."""


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


@runtime_checkable
class Env(Protocol):
    """An interactive episode. `step(None)` on a turn without legal actions."""

    def reset(self, seed: int | None = None) -> Observation: ...

    def step(self, action: str | None) -> StepResult: ...

    def ground_truth(self) -> Any: ...


@runtime_checkable
class Dialogue(Protocol):
    """A recorded episode: its turns as a stream, then questions with their gold."""

    sample_id: str
    qa: list[Any]
    gold_facts: list[Any]

    def stream(self) -> list[Observation]: ...

    def stream_ids(self) -> list[str]: ...


@runtime_checkable
class Task(Protocol):
    """A source of episodes. `interactive` says their shape: `Env`s (True) or `Dialogue`s."""

    name: str
    interactive: bool
    splits: tuple[str, ...]

    def episodes(self, split: str, n: int | None = None) -> Sequence[Any]: ...


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
