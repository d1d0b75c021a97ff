"""The TextWorld adapter: a missing package gives a clear error; a tiny generated game plays."""

from __future__ import annotations

import sys

import pytest

from mags_lib.errors import MagsError
from mags_lib.game import GameEnv, TextWorldConfig, TextWorldEnv, make_game


def test_missing_textworld_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "textworld", None)  # makes `import textworld` fail
    with pytest.raises(MagsError) as err:
        make_game(TextWorldConfig(level=1, out_dir=str(tmp_path)))
    assert "textworld" in err.value.cause and "pip install textworld" in err.value.fix


def test_bad_config_names_the_field():
    with pytest.raises(MagsError, match="kind"):
        TextWorldConfig(kind="zork")
    with pytest.raises(MagsError, match="level"):
        TextWorldConfig(level=0)


def test_missing_game_file(tmp_path):
    pytest.importorskip("textworld")
    with pytest.raises(MagsError, match="does not exist"):
        TextWorldEnv(tmp_path / "nope.z8").reset()


@pytest.fixture(scope="module")
def coin_game(tmp_path_factory):
    """A coin collector game two rooms deep, built once (tw-make takes a few seconds)."""
    pytest.importorskip("textworld")
    cfg = TextWorldConfig(kind="coin_collector", level=2, seed=1,
                          out_dir=str(tmp_path_factory.mktemp("tw")))
    return cfg, make_game(cfg)


def test_make_game_caches(coin_game):
    cfg, path = coin_game
    assert path.exists() and path.name == "coin_collector-l2-s1.z8"
    mtime = path.stat().st_mtime_ns
    assert make_game(cfg) == path and path.stat().st_mtime_ns == mtime
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".build-")]


def test_walkthrough_wins_with_score_delta_rewards(coin_game):
    cfg, path = coin_game
    env = TextWorldEnv(cfg)
    assert isinstance(env, GameEnv)
    obs = env.reset()
    assert obs.kind == "decide" and obs.legal_actions == tuple(sorted(obs.legal_actions))
    assert "coin" in env.current_rules()[0].lower()
    walkthrough = env.walkthrough()
    assert len(walkthrough) >= 2
    total, result = 0.0, None
    for command in walkthrough:
        assert env.ground_truth().correct_action == command  # the oracle agrees
        assert command in obs.legal_actions
        result = env.step(command)
        total += result.reward
        obs = result.observation
    assert result.done and result.info["won"] and total == result.info["max_score"] >= 1
    assert obs.kind == "end" and env.ground_truth() is None
    with pytest.raises(MagsError):
        env.step("look")
    env.close()


def test_max_steps_ends_the_episode(coin_game):
    _, path = coin_game
    env = TextWorldEnv(path, max_steps=2)
    env.reset()
    first = env.step(None)  # None sends "look"
    assert not first.done and first.reward == 0.0 and first.info["command"] == "look"
    assert env.step("inventory").done
    env.close()


@pytest.mark.parametrize("name", ["bare", "oracle", "mags_scripted", "mags_prompted",
                                  "static_rag", "full_context"])
def test_every_agent_plays_a_textworld_game_through_the_same_interface(coin_game, name):
    from mags_lib.agents import make_agent
    from mags_lib.agents.prompt import completion_prompt
    from mags_lib.embed import HashingEmbedder
    from mags_lib.evaluation import run_game
    from mags_lib.game.rule_reader import RuleReaderLLM

    cfg, _ = coin_game
    env = TextWorldEnv(cfg)
    agent = make_agent(name, RuleReaderLLM(), embedder=HashingEmbedder(), env=env)
    game = run_game(agent, env, cfg.seed, name=name)
    assert game.decisions and game.n_turns <= cfg.max_steps
    for d in game.decisions:
        assert d["chosen"] in d["options"]  # a legal command every turn
    assert completion_prompt([], "-= Kitchen =- You are in a kitchen.").endswith("\nAnswer:")


def test_observations_are_cleaned_and_end_with_the_commands(coin_game):
    """No z-machine prompt or status line ("> ... -= Cellar =-0/2"), one blank line at most,
    the admissible commands last (unless show_commands is off); the oracle's governing line is
    the winning-commands line, which it puts last, nearest the answer."""
    from mags_lib.agents.baselines import oracle_rules
    from mags_lib.game.textworld_env import clean_text

    assert clean_text("You are carrying nothing.\n\n\n\n>    -= Cellar =-0/3") == \
        "You are carrying nothing."
    cfg, path = coin_game
    env = TextWorldEnv(cfg)
    obs = env.reset()
    step = env.step("inventory").observation
    for o in (obs, step):
        assert o.text.splitlines()[-1] == f"Commands: {', '.join(o.legal_actions)}."
        assert "\n>" not in o.text and "=-0/" not in o.text and "\n\n\n" not in o.text
    truth = env.ground_truth()
    assert truth.rule_text.startswith("Winning commands from here: ")
    assert truth.correct_action in truth.rule_text
    rules = env.current_rules()
    assert oracle_rules(rules, truth.rule_text, step.text, 3)[-1] == truth.rule_text
    env.close()
    plain = TextWorldEnv(path, show_commands=False)
    assert "Commands:" not in plain.reset().text
    plain.close()
