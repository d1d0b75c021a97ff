"""Named game regimes that each put one hypothesis about the memory's mechanisms to the test
(notebook 09, `evaluation.mechanisms`).

The default game is too easy to tell the mechanisms apart: few rules, short episodes, every
question answered by one fact. A regime is a `GameConfig` (the senseless game) plus the memory
budget it is played under:

* `present`: the default game of notebook 06 (fixed surface), for reference;
* `scale`: 128 rules over 16 x 16 creature-condition pairs, 2,000 turns, 240 distractor facts
  sharing the rules' items and conditions, three options per decision, and a capacity of 200
  nodes (about 470 without one), so decay, pruning and forgetting must choose what to keep;
* `multi_hop`: every creature has an alias stated once in a while ("The purple glarb is also
  known as the teal zib."); most decisions name the alias only, so the answer needs the alias
  statement and the rule together (traversal along edges, initial edges);
* `silent_drift`: every rule change is silent; only the feedback after a wrong answer reveals it,
  and the reward of that answer is the first sign (reward-driven strengthening and weakening);
* `recurrence`: decisions come in bursts about a few rules at a time, then those rules idle for
  hundreds of turns and are asked again, under a capacity of 50 nodes (about 80 without one),
  and a node idle for 300 turns is forgotten unless the k-core or solid edges protect it (decay
  with recency correction, solidification, forgetting, importance).

    >>> game = regime_game("multi_hop", seed=2)
    >>> game.alias_share, game.seed
    (1.0, 2)
    >>> try:
    ...     regime_game("scale", overrides={"n_rules": 999})
    ... except MagsError as exc:
    ...     print(str(exc).splitlines()[1])
      fix: set n_rules between 1 and n_creatures * n_conditions = 256
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.game import GameConfig


@dataclass(frozen=True)
class Regime:
    """One regime: the game, the memory budget, and what it is meant to show."""

    name: str
    hypothesis: str
    game: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    smoke_length: int = 150

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "hypothesis": self.hypothesis, "game": dict(self.game),
                "memory": dict(self.memory)}


REGIMES: dict[str, Regime] = {r.name: r for r in (
    Regime("present", "the default game of notebook 06: a reference point where only "
           "contradiction handling is expected to matter",
           game={"episode_length": 300}),
    Regime("scale", "many rules, long episodes and look-alike distractors under a capacity "
           "budget: decay, pruning, forgetting and the k-core decide what survives",
           game={"n_creatures": 16, "n_conditions": 16, "n_rules": 128, "item_pool": 40,
                 "n_items": 3, "n_distractors": 240, "n_distractor_creatures": 16,
                 "distractor_ratio": 0.35, "announce_ratio": 0.1, "drift_every": 20,
                 "episode_length": 2000, "min_gap": 20},
           memory={"max_nodes": 200}, smoke_length=300),
    Regime("multi_hop", "questions name a creature by an alias stated elsewhere: only the "
           "alias statement and the rule together answer, so traversal along edges matters",
           game={"n_creatures": 8, "n_conditions": 4, "n_rules": 24, "item_pool": 24,
                 "alias_share": 1.0, "alias_questions": 0.9, "announce_ratio": 0.15,
                 "episode_length": 600}),
    Regime("silent_drift", "rules change without announcement; the wrong answer's reward and "
           "its feedback are the only signals, so reward-driven weakening must do the work",
           game={"n_rules": 12, "silent_fraction": 1.0, "drift_every": 15,
                 "recent_share": 0.7, "episode_length": 600}),
    Regime("recurrence", "rules are asked in bursts, idle for hundreds of turns, then asked "
           "again: decay with recency correction, solidification and forgetting of idle nodes",
           game={"n_creatures": 6, "n_conditions": 6, "n_rules": 24, "focus_size": 3,
                 "focus_every": 150, "announce_ratio": 0.04, "drift_every": 60,
                 "episode_length": 2000},
           memory={"inactive_after": 300, "max_nodes": 50}, smoke_length=400),
)}


def regime(name: str) -> Regime:
    if name not in REGIMES:
        raise MagsError(f"unknown regime {name!r}", f"use one of {', '.join(REGIMES)}")
    return REGIMES[name]


def regime_game(name: str, seed: int = 0, overrides: dict[str, Any] | None = None,
                smoke: bool = False) -> GameConfig:
    """The regime's `GameConfig` for `seed`, with `overrides` (checked: unknown keys and
    values out of range raise MagsError naming the field and the valid range); SMOKE cuts the
    episode to the regime's `smoke_length`."""
    r = regime(name)
    game = GameConfig.from_dict({**r.game, **(overrides or {}), "seed": seed})
    if smoke:
        game = replace(game, episode_length=min(game.episode_length, r.smoke_length))
    return game


def regime_memory(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The regime's `MemoryConfig` overrides (its budget) with `overrides` on top, checked."""
    from mags_lib.memory import MemoryConfig

    merged = {**regime(name).memory, **(overrides or {})}
    try:
        MemoryConfig.from_dict(merged)
    except (ValueError, TypeError) as exc:
        raise MagsError(f"regime {name!r}: bad memory override: {exc}",
                        "use MemoryConfig field names with values in range "
                        "(docs/design.md, memory/config.py)") from exc
    return merged
