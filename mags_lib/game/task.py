"""The games as tasks (`mags_lib.tasks.registry`): `game` and `textworld` give `Env`s.

    from mags_lib.tasks.registry import get_task
    envs = get_task("game", turns=200).episodes("dev", 3)   # 3 seeded games, held-out phrasings
    obs = envs[0].reset(envs[0].config.seed)

`game`: the senseless game on the varied surface; a split names its phrasing bank (`train`:
the phrasings datasets are made of, `dev`: the held-out bank that steered development,
`test`: the bank written once and scored once) and its seeds (`SEEDS`). Its episodes carry
their seed in `env.config.seed`. `textworld`: tw-make games (`pip install textworld`), split
by seed range, one challenge kind and level per task.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mags_lib.tasks.base import SPLITS
from mags_lib.tasks.registry import check_split

PHRASINGS = {"train": "train", "dev": "heldout", "test": "test"}
"""The varied surface's phrasing bank of each split (`GameConfig.phrasings`)."""
SEEDS = {"train": range(10_000, 1_000_000), "dev": range(0, 1000), "test": range(0, 1000)}
"""Game seeds of each split. The evaluation has always played seeds 0, 1, 2 on the held-out
phrasings, so dev and test share seeds and differ by their phrasings (and distractors): a test
game has the rules, changes and questions of the development game of the same seed."""


class SenselessTask:
    """The senseless game with rule drift; `options` are `GameConfig` fields (turns: its
    `episode_length`)."""

    name = "game"
    interactive = True
    splits = SPLITS

    def __init__(self, turns: int = 200, **options: Any):
        from mags_lib.game.senseless import GameConfig

        self.config = GameConfig(episode_length=turns, **{"surface": "varied", **options})

    def config_for(self, split: str, seed: int) -> Any:
        check_split(self, split)
        if seed not in SEEDS[split]:
            raise ValueError(f"seed {seed} is not a {split} game seed ({SEEDS[split]})")
        return replace(self.config, seed=seed, phrasings=PHRASINGS[split])

    def episodes(self, split: str, n: int | None = None, offset: int = 0) -> list[Any]:
        """`n` games (3 when None) of `split`, its seeds in order after `offset`."""
        from mags_lib.game.senseless import SenselessGame

        check_split(self, split)
        return [SenselessGame(self.config_for(split, SEEDS[split][offset + i]))
                for i in range(3 if n is None else n)]


class TextWorldTask:
    """tw-make games of one challenge (`kind`, `level`); seeds split by range."""

    name = "textworld"
    interactive = True
    splits = SPLITS
    SEEDS = {"train": range(1000, 100_000), "dev": range(0, 100), "test": range(100, 200)}

    def __init__(self, kind: str = "coin_collector", level: int = 5, max_steps: int = 100):
        self.kind, self.level, self.max_steps = kind, level, max_steps

    def episodes(self, split: str, n: int | None = None, offset: int = 0) -> list[Any]:
        """`n` games (3 when None) of `split`; textworld is imported when a game is made."""
        from mags_lib.game.textworld_env import TextWorldConfig, TextWorldEnv

        check_split(self, split)
        seeds = self.SEEDS[split]
        return [TextWorldEnv(TextWorldConfig(kind=self.kind, level=self.level,
                                             seed=seeds[offset + i], max_steps=self.max_steps))
                for i in range(3 if n is None else n)]
