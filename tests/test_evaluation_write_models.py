"""Write models compared in the closed loop: the game sets, and the per-group means."""

from __future__ import annotations

import pytest

from mags_lib.errors import MagsError
from mags_lib.evaluation import write_models as wm


def _writer(after: float, acc: float = 0.8) -> dict:
    def pooled(x: float) -> dict:
        return {"accuracy": x, "ci_low": x - 0.1, "ci_high": x + 0.1, "n": 50}

    return {"accuracy": pooled(acc), "after_drift": pooled(after),
            "per_game": [{"seed": 0, "accuracy": acc, "after_drift": after, "rule_stores": 9,
                          "rule_stores_exact": 7, "ops": {}}]}


def test_by_default_the_games_are_notebook_06s_varied_held_out_games():
    ev = wm.WriterLoopConfig().eval_config("w", "x.gguf")
    assert ev.seeds == [0, 1, 2] and ev.game.phrasings == "heldout"
    assert ev.game.surface == "varied" and ev.models["write"] == "x.gguf"
    assert ev.game.episode_length == 200 and ev.output == "writers_in_loop/w"
    val = wm.WriterLoopConfig(seeds=[7], phrasings="train").eval_config("w", "x.gguf")
    assert val.game.phrasings == "train" and val.seeds == [7]
    with pytest.raises(MagsError, match="unknown phrasings"):
        wm.WriterLoopConfig(phrasings="test")
    with pytest.raises(MagsError, match="positive number of turns"):
        wm.WriterLoopConfig(turns=0)


def test_ask_models_play_in_the_ask_role_beside_the_default_writer():
    ev = wm.WriterLoopConfig(role="ask").eval_config("f1-s0", "ask.gguf")
    assert ev.models == {"ask": "ask.gguf", "write": "auto"}
    with pytest.raises(MagsError, match="unknown role"):
        wm.WriterLoopConfig(role="answer")
    text = wm.markdown({"role": "ask", "phrasings": "heldout", "seeds": [0], "turns": 10,
                        "writers": {"f1-s0": _writer(0.8)}})
    assert "| ask model | accuracy" in text and "1 games an ask model" in text


def test_groups_average_over_their_writers_and_pair_seeds_against_the_reference():
    played = {"phrasings": "heldout", "seeds": [0], "turns": 10, "writers": {
        "f1-s0": _writer(0.80), "f1-s1": _writer(0.70), "f1-s2": _writer(0.90),
        "out-s0": _writer(0.85), "out-s1": _writer(0.80), "out-s2": _writer(0.95),
        "ref": _writer(0.5)}}
    groups = wm.compare_groups(played, {"f1-s0": "f1", "f1-s1": "f1", "f1-s2": "f1",
                                        "out-s0": "outcome", "out-s1": "outcome",
                                        "out-s2": "outcome"}, reference="f1")
    assert groups["f1"]["after_drift"]["mean"] == pytest.approx(0.80)
    assert groups["f1"]["after_drift"]["ci_low"] < 0.80 < groups["f1"]["after_drift"]["ci_high"]
    diff = groups["outcome"]["after_drift_minus_reference"]
    assert diff["mean"] == pytest.approx(0.0667, abs=1e-3)  # +0.05, +0.10, +0.05
    assert diff["ci_low"] < diff["mean"] < diff["ci_high"]
    assert "after_drift_minus_reference" not in groups["f1"]
    table = wm.markdown(played, groups)
    assert "| outcome | 3 |" in table and "+0.067" in table
    with pytest.raises(MagsError, match="was not played"):
        wm.compare_groups(played, {"missing": "f1"})


def test_a_short_game_without_drift_leaves_the_difference_out_instead_of_failing():
    played = {"phrasings": "heldout", "seeds": [0], "turns": 10, "writers": {
        "a": _writer(0.0), "b": _writer(0.0)}}
    for w in played["writers"].values():
        w["after_drift"] = {"accuracy": None, "ci_low": None, "ci_high": None, "n": 0}
    groups = wm.compare_groups(played, {"a": "f1", "b": "outcome"}, reference="f1")
    assert groups["outcome"]["after_drift"]["mean"] is None
    assert "after_drift_minus_reference" not in groups["outcome"]
    assert "| outcome | 1 |" in wm.markdown(played, groups)
