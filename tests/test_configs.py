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
    with pytest.raises(ConfigError, match=r"DynamicsConfig.maintenance_every = True is a bool"):
        MemoryConfig.from_dict({"maintenance_every": True})
    with pytest.raises(ConfigError, match=r"block_weights.episodic = 'x' is a str"):
        MemoryConfig.from_dict({"block_weights": {"episodic": "x"}})
    cfg = MemoryConfig.from_dict({"merge_threshold": 1, "block_weights": {"semantic": 1}})
    assert isinstance(cfg.engram.merge_threshold, float)
    assert cfg.recall.block_weights == {"semantic": 1.0}
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


def test_memory_config_groups_read_nested_and_flat_keys():
    """Nested dicts (as `to_dict` writes them), flat ones (saves from before the groups, and
    overrides) and a mix read the same; a group given as a non-dict is refused."""
    nested = MemoryConfig.from_dict({"recall": {"lexical_weight": 0.5}, "index": {"seed": 3}})
    flat = MemoryConfig.from_dict({"lexical_weight": 0.5, "seed": 3})
    assert nested == flat == MemoryConfig().replaced(lexical_weight=0.5, seed=3)
    assert nested.recall.lexical_weight == 0.5 and nested.index.seed == 3
    assert MemoryConfig.from_dict(nested.to_dict()) == nested
    assert MemoryConfig.from_dict(nested.flat()) == nested
    assert len(nested.flat()) == sum(len(v) for v in nested.to_dict().values())
    with pytest.raises(ConfigError, match="unknown RecallConfig keys"):
        MemoryConfig.from_dict({"recall": {"decay_rate": 0.1}})
    with pytest.raises(ConfigError, match="MemoryConfig.recall = 3 is not an object"):
        MemoryConfig.from_dict({"recall": 3})
    with pytest.raises(ValueError, match="lexical_weight must be in"):
        MemoryConfig().replaced(lexical_weight=2.0)
