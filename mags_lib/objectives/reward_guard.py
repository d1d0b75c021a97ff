"""Bad input never stops training: `GuardedReward` wraps a reward so that a row that raises
scores 0, and `REWARD_ISSUES` counts why, process-wide, until `take_reward_issues` reads and
resets the count (GRPO logs it and keeps it in the stage's metrics).

Rewards that zero a row themselves (a gold that does not load, a write naming no node, see
`objectives.outcome`) count their reason here too, so one count holds every zeroed reward.

    >>> _ = take_reward_issues()
    >>> REWARD_ISSUES["some_reward: a reason"] += 1
    >>> take_reward_issues(), take_reward_issues()
    ({'some_reward: a reason': 1}, {})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

Reward = Callable[..., list]

REWARD_ISSUES: Counter[str] = Counter()  # rewards set to 0 by `GuardedReward`, by reason


def take_reward_issues() -> dict[str, int]:
    """The rewards set to 0 since the last call, by reason (and the count starts again)."""
    issues = dict(REWARD_ISSUES)
    REWARD_ISSUES.clear()
    return issues


def _reason(name: str, exc: Exception) -> str:
    cause = getattr(exc, "cause", None) or f"{type(exc).__name__}: {exc}"
    return f"{name}: {str(cause).splitlines()[0][:120]}"


class GuardedReward:
    """A registered reward that never stops training: when a batch raises (a row whose gold
    memory cannot be built, a value of the wrong type), each completion is scored alone, and
    one that still raises gets 0.0 with the reason counted in `REWARD_ISSUES` (GRPO logs it
    and keeps it in the stage's metrics). Named like the reward it wraps, as TRL logs it.

    >>> from mags_lib.objectives.outcome import write_outcome_reward
    >>> _ = take_reward_issues()
    >>> bad = GuardedReward("write_outcome_reward", write_outcome_reward)
    >>> bad(["<engram>\\n</engram>"] * 2, gold=[{"memory_before": [{"bogus": 1}],
    ...     "probes": [{"question": "q"}], "op": "none"}, {"op": "none"}])
    [0.0, None]
    >>> take_reward_issues()
    {"write_outcome_reward: KeyError: 'text'": 1}
    """

    def __init__(self, name: str, func: Reward, **params: Any):
        self.__name__ = name
        self.func = partial(func, **params) if params else func

    def __call__(self, completions: list, **kwargs: Any) -> list[float | None]:
        counted = Counter(REWARD_ISSUES)
        try:
            return self.func(completions, **kwargs)
        except Exception:  # noqa: BLE001 - one bad row must not stop training; scored alone below
            REWARD_ISSUES.clear()  # what the failed batch counted is counted again row by row
            REWARD_ISSUES.update(counted)
        n, out = len(completions), []
        for i, completion in enumerate(completions):
            row = {k: [v[i]] if isinstance(v, list) and len(v) == n else v
                   for k, v in kwargs.items()}
            try:
                out.extend(self.func([completion], **row))
            except Exception as exc:  # noqa: BLE001 - counted, and the reward is 0
                REWARD_ISSUES[_reason(self.__name__, exc)] += 1
                out.append(0.0)
        return out
