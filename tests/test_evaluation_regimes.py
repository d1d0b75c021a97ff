"""Named regimes: valid games that differ from the default where they claim to, and clear
errors for invalid overrides."""

from __future__ import annotations

import pytest

from mags_lib.errors import MagsError
from mags_lib.evaluation.regimes import REGIMES, regime_game, regime_memory
from mags_lib.game import GameConfig, generate_episode


@pytest.mark.parametrize("name", list(REGIMES))
def test_every_regime_is_a_playable_game_with_a_checked_budget(name):
    game = regime_game(name, seed=3)
    assert isinstance(game, GameConfig) and game.seed == 3
    regime_memory(name)  # checked by MemoryConfig
    smoke = regime_game(name, seed=3, smoke=True)
    assert smoke.episode_length <= REGIMES[name].smoke_length
    ep = generate_episode(smoke)
    assert sum(o.kind == "decide" for o in ep.observations) >= 4


def test_regimes_are_what_they_claim():
    scale = regime_game("scale")
    assert 64 <= scale.n_rules <= 256 and scale.episode_length >= 2000
    assert regime_memory("scale")["max_nodes"] < 400  # a capacity budget that binds
    assert regime_game("multi_hop").alias_share > 0
    assert regime_game("silent_drift").silent_fraction == 1.0
    assert regime_game("recurrence").focus_size > 0
    assert regime_game("present") == GameConfig(episode_length=300)


@pytest.mark.parametrize("overrides, field_name", [
    ({"n_rules": 300}, "n_rules"),            # more rules than creature-condition pairs
    ({"n_creatures": 99}, "n_creatures"),     # more creatures than the vocabulary allows
    ({"episode_length": -1}, "episode_length"),
    ({"n_rulez": 3}, "n_rulez"),
    ({"focus_size": 500}, "focus_size"),
])
def test_invalid_regime_overrides_name_the_field(overrides, field_name):
    with pytest.raises(MagsError) as err:
        regime_game("scale", overrides=overrides)
    assert field_name in str(err.value) and err.value.fix


def test_invalid_memory_budget_and_unknown_regime_are_clear_errors():
    with pytest.raises(MagsError, match="max_nodes"):
        regime_memory("scale", {"max_nodes": 0})
    with pytest.raises(MagsError, match="max_nodez"):
        regime_memory("scale", {"max_nodez": 10})
    with pytest.raises(MagsError, match="unknown regime") as err:
        regime_game("tiny")
    assert "multi_hop" in err.value.fix
