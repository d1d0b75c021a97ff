"""Games that MAGS agents play: one `GameEnv` interface, the senseless game, a TextWorld adapter.

    from mags_lib.game import GameConfig, SenselessGame, generate_episode, play, oracle_policy

    env = SenselessGame(GameConfig(seed=0, episode_length=1000, silent_fraction=0.2))
    stats = play(env, oracle_policy(env))          # accuracy 1.0 by construction

`TextWorldEnv` (in `mags_lib.game.textworld_env`) needs `pip install textworld`; it is imported
here by name only, and textworld itself loads when a game is made or started.
"""

from mags_lib.game.base import GameEnv, Observation, StepResult, StepTruth, match_action
from mags_lib.game.play import (
    PlayStats,
    answer_from_rules,
    memory_policy,
    oracle_policy,
    play,
    random_policy,
)
from mags_lib.game.senseless import (
    RULE_TEMPLATE,
    Episode,
    GameConfig,
    Rule,
    RuleEvent,
    SenselessGame,
    generate_episode,
    parse_rule,
    rule_key,
)
from mags_lib.game.textworld_env import TextWorldConfig, TextWorldEnv, make_game

__all__ = [
    "RULE_TEMPLATE", "Episode", "GameConfig", "GameEnv", "Observation", "PlayStats", "Rule",
    "RuleEvent", "SenselessGame", "StepResult", "StepTruth", "TextWorldConfig", "TextWorldEnv",
    "answer_from_rules", "generate_episode", "make_game", "match_action", "memory_policy", "oracle_policy",
    "parse_rule", "play", "random_policy", "rule_key",
]
