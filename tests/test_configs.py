"""One strict way to read configs from dicts (mags_lib/configs.py), shared by the game, the
memory and the evaluation."""

from __future__ import annotations

import pytest

from mags_lib.configs import strict_from_dict
from mags_lib.errors import ConfigError, MagsError
from mags_lib.evaluation.config import EvalConfig
from mags_lib.game import GameConfig
from mags_lib.memory import MemoryConfig


@pytest.mark.parametrize("cls", [GameConfig, MemoryConfig, EvalConfig])
def test_every_config_reads_the_same_way(cls):
    with pytest.raises(ConfigError) as err:
        cls.from_dict({"no_such_key": 1})
    assert f"unknown {cls.__name__} keys ['no_such_key']" in err.value.cause
    assert "use only these keys" in err.value.fix
    with pytest.raises(ConfigError, match="must be read from an object"):
        cls.from_dict(["not", "a", "dict"])
    assert cls.from_dict({}) == cls()


def test_types_are_checked_against_the_defaults_and_numbers_become_floats():
    with pytest.raises(ConfigError, match=r"MemoryConfig.maintenance_every = True is a bool"):
        MemoryConfig.from_dict({"maintenance_every": True})
    with pytest.raises(ConfigError, match=r"block_weights.episodic = 'x' is a str"):
        MemoryConfig.from_dict({"block_weights": {"episodic": "x"}})
    cfg = MemoryConfig.from_dict({"merge_threshold": 1, "block_weights": {"semantic": 1}})
    assert isinstance(cfg.merge_threshold, float) and cfg.block_weights == {"semantic": 1.0}
    ev = EvalConfig.from_dict({"seeds": [5], "game": {"seed": 5, "n_items": 3},
                               "llm": {"model": "embedded", "n_ctx": 512}})
    assert ev.game.n_items == 3 and ev.llm.n_ctx == 512
    with pytest.raises(ConfigError, match="GameConfig.n_items = '3' is a str"):
        EvalConfig.from_dict({"game": {"n_items": "3"}})


def test_config_errors_are_value_errors_and_mags_errors():
    """Callers that caught ValueError from MemoryConfig (before the shared helper) still do."""
    for kind in (ValueError, MagsError):
        with pytest.raises(kind):
            strict_from_dict(MemoryConfig, {"max_nodes": "many"})
