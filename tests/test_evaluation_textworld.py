"""The TextWorld evaluation: config errors, the summary's intervals, a real smoke game."""

from __future__ import annotations

import importlib.util

import pytest

from mags_lib.errors import MagsError
from mags_lib.evaluation.textworld_eval import (
    TextWorldEvalConfig,
    run_textworld_eval,
    summarize_textworld,
    textworld_markdown,
)


def test_unknown_agent_and_empty_sizes_are_clear_errors():
    with pytest.raises(MagsError, match="mags_scripted"):
        TextWorldEvalConfig(agents=["mags_scripted"])
    with pytest.raises(MagsError, match="max_steps"):
        TextWorldEvalConfig(max_steps=0)
    with pytest.raises(MagsError, match="temperature"):
        TextWorldEvalConfig(temperature=-0.5)


def test_summary_pools_seeds_with_an_interval():
    games = [{"kind": "coin_collector", "level": 1, "agent": "bare", "seed": s,
              "normalized_score": x, "won": x == 1.0, "steps": 10} for s, x in
             enumerate([1.0, 0.0, 0.5])]
    row, pooled = summarize_textworld(games)
    assert row["score"] == pytest.approx(0.5) and row["wins"] == 1 and row["n_seeds"] == 3
    assert 0.0 <= row["ci_low"] < 0.5 < row["ci_high"] <= 1.0
    assert row["steps"] == 10 and row["steps_ci_low"] == row["steps_ci_high"] == 10
    # one game kind here, so the pooled row over all of bare's games is the same numbers
    assert (pooled["kind"], pooled["level"]) == ("all", None)
    assert {k: pooled[k] for k in ("score", "wins", "n_seeds", "ci_low")} == \
        {k: row[k] for k in ("score", "wins", "n_seeds", "ci_low")}
    table = textworld_markdown([row, pooled])
    assert "coin_collector" in table and "| **all games** | – | bare |" in table


@pytest.mark.skipif(importlib.util.find_spec("textworld") is None, reason="textworld missing")
def test_smoke_run_plays_every_agent_on_a_generated_game():
    from mags_lib.game.rule_reader import RuleReaderLLM

    fake = RuleReaderLLM()
    result = run_textworld_eval(
        TextWorldEvalConfig(smoke=True, embedder="hashing",
                            agents=["bare", "static_rag", "mags", "oracle"]),
        llm=fake, roles={"ask": fake, "write": fake})
    assert {g["agent"] for g in result["games"]} == {"bare", "static_rag", "mags", "oracle"}
    for g in result["games"]:
        assert 0.0 <= g["normalized_score"] <= 1.0 and 1 <= g["steps"] <= 8
    assert fake.calls > 0
    # every TextWorld turn informs: the loop's write model runs before ask + answer
    (mags,) = [g for g in result["games"] if g["agent"] == "mags"]
    assert mags["loop"]["routes"] == {"decide": {"write+ask+answer": mags["steps"]}}
    assert mags["loop"]["write_calls"] == mags["steps"]
