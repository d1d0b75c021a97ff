"""The write model's outcome reward (mags_lib.objectives.outcome): what the memory it leaves lets
recall answer, tested on hand-made rows with the hashing embedder (fast, lexical)."""

from __future__ import annotations

import pytest

from mags_lib.objectives.outcome import combine, outcome_terms, write_outcome_reward
from mags_lib.objectives.rewards import REWARDS, build_rewards

RAINY = "On rainy turns, the purple glarb eats only the stone."
SUNNY = "On sunny turns, the purple glarb eats only the pear."
FOX = "On foggy turns, the red zwoorp eats only the ladle."


def probe(creature, condition, item, stale=()):
    return {"question": f"It is a {condition} turn. The {creature} is offered the {item} and "
                        "the cup. Which does it eat?",
            "creature": creature, "condition": condition, "item": item, "stale": list(stale)}


CHANGE = {"op": "update", "memory_before": [{"text": t, "block": "semantic"}
                                            for t in (RAINY, SUNNY, FOX)],
          "probes": [probe("purple glarb", "rainy", "copper", ["stone"]),
                     probe("purple glarb", "sunny", "pear"), probe("red zwoorp", "foggy", "ladle")]}
NOTHING = {**CHANGE, "op": "none", "probes": [probe("purple glarb", "rainy", "stone"),
                                               probe("purple glarb", "sunny", "pear"),
                                               probe("red zwoorp", "foggy", "ladle")]}


def block(*lines):
    return "<engram>\n" + "".join(f"{line}\n" for line in lines) + "</engram>"


def reward(text, gold):
    return write_outcome_reward([text], gold=[gold], embedder="hashing")[0]


def test_the_right_update_beats_no_write_and_an_update_of_the_wrong_rule():
    right = reward(block("update semantic 0.9: On rainy turns, the purple glarb eats only the "
                         "copper."), CHANGE)
    nothing = reward(block(), CHANGE)
    wrong = reward(block("update semantic 0.9: On sunny turns, the purple glarb eats only the "
                         "copper."), CHANGE)
    assert right == pytest.approx(1.0)
    assert nothing == pytest.approx(2 / 3 - 0.5 / 3)  # the rainy rule stale, and recalled
    assert wrong < nothing < right  # the sunny rule superseded, the rainy one still stale
    # an add of the changed rule is superseded by the memory's own detector, as in play
    add = reward(block("add semantic 0.9: On rainy turns, the purple glarb eats only the "
                       "copper."), CHANGE)
    assert add == pytest.approx(right)


def test_a_spurious_write_on_a_turn_with_nothing_new_costs_reward():
    assert reward(block(), NOTHING) == pytest.approx(1.0)
    extra = reward(block("add semantic 0.9: The wind is loud today."), NOTHING)
    assert extra == pytest.approx(0.9)  # one node beyond need


def test_malformed_output_gets_the_format_penalty_and_rows_without_probes_none():
    assert reward("I will remember that.", CHANGE) == -1.0
    assert write_outcome_reward(["<engram>\n</engram>"], gold=[{"op": "none"}]) == [None]
    assert combine(None, format_penalty=-0.5) == -0.5


def test_scoring_leaves_the_cached_memory_as_it_was():
    """Each completion is applied to the same memory and rolled back: the order of completions
    does not change any reward."""
    texts = [block("update semantic 0.9: On sunny turns, the purple glarb eats only the "
                   "copper."), block(), block("add semantic 0.9: " + RAINY)]
    forward = write_outcome_reward(texts, gold=[CHANGE] * 3, embedder="hashing")
    backward = write_outcome_reward(texts[::-1], gold=[CHANGE] * 3, embedder="hashing")
    assert forward == backward[::-1]
    terms = outcome_terms(texts[0], CHANGE, embedder="hashing")
    assert set(terms) == {"held", "stale", "extra", "skipped"}


def test_the_reward_is_registered_and_takes_json_gold_as_trl_passes_it():
    import json

    assert "write_outcome_reward" in REWARDS
    (fn,) = build_rewards(["write_outcome_reward"], {"write_outcome_reward":
                                                     {"embedder": "hashing", "mu": 1.0}})
    assert fn([block()], gold=[json.dumps(CHANGE)]) == [pytest.approx(2 / 3 - 1 / 3)]


def test_a_bad_row_or_an_action_on_nothing_never_stops_training_and_is_counted():
    """Issue 20's bad input: a row whose memory cannot be built scores 0 and an action naming
    no node at most 0, each reason counted for the training log; the batch's other rows keep
    their rewards."""
    from mags_lib.objectives.reward_guard import take_reward_issues

    take_reward_issues()
    guarded, = build_rewards(["write_outcome_reward"],
                             {"write_outcome_reward": {"embedder": "hashing"}})
    update = block("update semantic 0.9: On rainy turns, the purple glarb eats only the copper.")
    broken = {**CHANGE, "memory_before": [{"block": "semantic"}]}  # a snapshot without text
    got = guarded([update, update, block("forget: xyzzy qwerty"), update],
                  gold=[CHANGE, broken, NOTHING, "{not json"])
    issues = take_reward_issues()
    assert got[0] == reward(update, CHANGE) > 0.9 and got[1] == 0.0
    # at most 0, and never above the honest empty block (a flat 0 could pay it more)
    assert got[2] == 0.0 < reward(block(), NOTHING)
    assert reward(block("forget: xyzzy qwerty"), CHANGE) == 0.0 < reward(block(), CHANGE)
    assert got[3] == 0.0
    assert issues.pop("write_outcome_reward: an action names no node in memory") == 1
    assert issues.pop("write_outcome_reward: gold is not a JSON object") == 1
    assert list(issues.values()) == [1] and next(iter(issues)).startswith(
        "write_outcome_reward: ")  # the snapshot without text, by GuardedReward
    # a row counted before the batch failed is counted once, not again row by row
    take_reward_issues()
    guarded([block("forget: xyzzy qwerty"), update], gold=[NOTHING, broken])
    assert take_reward_issues()["write_outcome_reward: an action names no node in memory"] == 1
    assert take_reward_issues() == {}
    with pytest.raises(KeyError):  # the bare function still raises, so a bug shows in tests
        REWARDS["write_outcome_reward"]([update], gold=[broken], embedder="hashing")
