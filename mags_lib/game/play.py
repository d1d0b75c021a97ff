"""Play a `GameEnv` to the end with a policy and score it; the oracle and random baselines.

A policy is any callable `policy(observation) -> str | None`. `play` shows it every observation
(so a policy with memory can read the information turns) and sends its answer only on turns with
legal actions, None on the others.

    >>> from mags_lib.game.senseless import GameConfig, SenselessGame
    >>> env = SenselessGame(GameConfig(seed=0, episode_length=100))
    >>> play(env, oracle_policy(env)).accuracy
    1.0

`PlayStats.accuracy_recent` is the accuracy on decisions about rules changed within the game's
`recent_window` (adaptability); `accuracy_answerable` leaves out decisions that no memory of the
turns shown so far could answer (a silent change not yet revealed).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from mags_lib.game.base import GameEnv, Observation
from mags_lib.game.senseless import DECIDE_PATTERN, parse_rule

Policy = Callable[[Observation], "str | None"]


@dataclass
class PlayStats:
    turns: int = 0
    decisions: int = 0
    correct: int = 0
    total_reward: float = 0.0
    recent_decisions: int = 0
    recent_correct: int = 0
    answerable_decisions: int = 0
    answerable_correct: int = 0

    @property
    def accuracy(self) -> float:
        return self.correct / self.decisions if self.decisions else 0.0

    @property
    def accuracy_recent(self) -> float:
        return self.recent_correct / self.recent_decisions if self.recent_decisions else 0.0

    @property
    def accuracy_answerable(self) -> float:
        n = self.answerable_decisions
        return self.answerable_correct / n if n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "accuracy": self.accuracy, "accuracy_recent": self.accuracy_recent,
                "accuracy_answerable": self.accuracy_answerable}


def play(env: GameEnv, policy: Policy, seed: int | None = None,
         max_turns: int | None = None) -> PlayStats:
    """Reset `env` (with `seed` if given) and play until done or `max_turns`."""
    stats = PlayStats()
    obs = env.reset(seed)
    done = False
    while not done and (max_turns is None or stats.turns < max_turns):
        truth = env.ground_truth()
        answer = policy(obs)
        action = answer if obs.legal_actions else None
        result = env.step(action)
        stats.turns += 1
        stats.total_reward += result.reward
        if obs.kind == "decide":
            right = int(result.reward >= 1.0)
            stats.decisions += 1
            stats.correct += right
            if truth is not None and truth.recently_changed:
                stats.recent_decisions += 1
                stats.recent_correct += right
            if truth is None or truth.answerable:
                stats.answerable_decisions += 1
                stats.answerable_correct += right
        obs, done = result.observation, result.done
    return stats


def answer_from_rules(obs: Observation, rules: list[str]) -> str | None:
    """The option the first rule in `rules` about this decision's creature and condition
    names, or None (no such rule, or its item is not offered)."""
    m = DECIDE_PATTERN.search(obs.text)
    if m is None:
        return None
    for text in rules:
        rule = parse_rule(text)
        if rule and rule.creature == m["creature"] and rule.condition == m["condition"]:
            return rule.item if rule.item in obs.legal_actions else None
    return None


def memory_policy() -> Policy:
    """Remembers the latest version of every rule sentence it has read (announcements and
    feedback) and answers from them: a perfect memory of the observations, no more. It scores
    100% unless rules change silently; its `accuracy_answerable` is always 1.0."""
    latest: dict[str, str] = {}

    def policy(obs: Observation) -> str | None:
        rule = parse_rule(obs.text)
        if rule is not None:
            latest[rule.key] = rule.text
        return answer_from_rules(obs, list(latest.values())) if obs.legal_actions else None

    return policy


def oracle_policy(env: GameEnv) -> Policy:
    """Answers from `env.current_rules()`: the upper bound of any memory."""
    return lambda obs: answer_from_rules(obs, env.current_rules())


def random_policy(seed: int = 0) -> Policy:
    """Picks a legal action uniformly at random (seeded): the floor, 1 / n_items."""
    rng = random.Random(seed)
    return lambda obs: rng.choice(obs.legal_actions) if obs.legal_actions else None
