"""The mechanism study: paired effects, the plan, the files, and that it detects an effect."""

from __future__ import annotations

import json

import pytest

from mags_lib.agents import MECHANISMS, make_agent
from mags_lib.errors import MagsError
from mags_lib.evaluation.mechanisms import (
    MechanismStudyConfig,
    markdown,
    paired_effect,
    plan,
    run_mechanism_study,
)
from mags_lib.game.rule_reader import RuleReaderLLM


def test_paired_effect_pairs_by_turn_and_flags_separation():
    full = {s: [[t, 1] for t in range(100)] for s in range(3)}
    off = {s: [[t, int(t % 2)] for t in range(100)] for s in range(3)}
    e = paired_effect(full, off)
    assert e["effect"] == pytest.approx(0.5) and e["n_seeds"] == 3 and e["n_decisions"] == 300
    assert e["ci_low"] < 0.5 < e["ci_high"] and e["separated"] and e["p_mcnemar"] < 1e-6
    assert e["discordant"] == [150, 0]
    same = paired_effect(full, full)
    assert same["effect"] == 0 and not same["separated"] and same["p_mcnemar"] == 1.0
    # turns missing on one side are not paired
    e = paired_effect({0: [[1, 1], [2, 1]]}, {0: [[2, 0], [3, 0]]})
    assert e["n_decisions"] == 1 and e["effect"] == 1


def test_plan_plays_every_mechanism_once_per_regime_and_seed_and_the_loop_on_a_subset():
    cfg = MechanismStudyConfig(regimes=["present", "multi_hop"], seeds=[0, 1],
                               mechanisms=["hebbian", "decay"], agents=["mags_scripted", "mags"],
                               loop_regimes=["multi_hop"], loop_seeds=[0],
                               loop_mechanisms=["traversal"])
    games = plan(cfg)
    scripted = [g for g in games if g["agent"] == "mags_scripted"]
    assert len(scripted) == 2 * 2 * 3
    loop = [g for g in games if g["agent"] == "mags"]
    assert [(g["regime"], g["seed"], g["mechanism"]) for g in loop] == [
        ("multi_hop", 0, None), ("multi_hop", 0, "traversal")]
    assert sum(g["agent"] == "oracle" for g in games) == 4


def test_bad_study_configs_are_clear_errors():
    with pytest.raises(MagsError, match="mechanisms"):
        MechanismStudyConfig(mechanisms=["telepathy"])
    with pytest.raises(MagsError, match="regimes"):
        MechanismStudyConfig(regimes=["tiny"])
    with pytest.raises(MagsError, match="loop_turns"):
        MechanismStudyConfig(loop_turns=0)


def test_ablate_switches_one_mechanism_off_in_any_memory_agent():
    agent = make_agent("mags_scripted", RuleReaderLLM(), ablate="decay")
    assert agent.memory_config.dynamics.decay_rate == 0.0
    assert make_agent("mags_scripted", RuleReaderLLM()).memory_config.dynamics.decay_rate > 0
    off = make_agent("mags_scripted", RuleReaderLLM(), ablate="contradiction")
    assert not off.supersede and not off.use_keys
    fake = RuleReaderLLM()
    loop = make_agent("mags", fake, roles={"ask": fake, "write": fake}, ablate="contradiction")
    assert not loop.supersede
    loop = make_agent("mags", fake, roles={"ask": fake, "write": fake}, ablate="traversal")
    assert loop.memory_config.recall.max_visited == 1
    with pytest.raises(MagsError, match="telepathy"):
        make_agent("mags_scripted", fake, ablate="telepathy")
    with pytest.raises(MagsError, match="bare"):
        make_agent("bare", fake, ablate="decay")
    assert set(MECHANISMS) >= {"hebbian", "decay", "traversal", "contradiction", "reward",
                               "solidification", "kcore", "forgetting", "recency"}


def test_smoke_study_writes_its_tables_and_detects_contradiction_handling(tmp_path):
    cfg = MechanismStudyConfig(regimes=["present"], seeds=[0, 1],
                               mechanisms=["contradiction", "reward"], embedder="hashing")
    study = run_mechanism_study(cfg, out_dir=tmp_path)
    rows = json.loads((tmp_path / "mechanisms.json").read_text())
    assert {r["mechanism"] for r in rows} == {"contradiction", "reward"}
    for r in rows:
        assert {"regime", "mechanism", "agent", "effect", "ci_low", "ci_high",
                "n_seeds"} <= set(r)
        assert r["n_seeds"] == 2 and r["agent"] == "mags_scripted"
    contradiction = next(r for r in rows if r["mechanism"] == "contradiction")
    assert contradiction["effect"] > 0.05 and contradiction["ci_low"] > 0  # stale rules hurt
    base = {b["agent"]: b for b in study.baselines}
    assert base["oracle"]["ci_low"] > base["bare"]["ci_high"]  # the regime separates
    assert (tmp_path / "cost.json").exists() and (tmp_path / "baselines.json").exists()
    text = markdown(study.rows, study.baselines, study.cost)
    assert "upper bound" in text and "contradiction" in text
    # a second run resumes every game; a run with one more mechanism plays only its games
    again = run_mechanism_study(cfg, out_dir=tmp_path)
    assert len(again.games) == len(study.games)
    more = run_mechanism_study(MechanismStudyConfig(
        regimes=["present"], seeds=[0, 1], mechanisms=["contradiction", "reward", "hebbian"],
        embedder="hashing"), out_dir=tmp_path)
    assert len(more.games) == len(study.games) + 2


def test_resume_replays_the_loops_games_when_its_models_or_defaults_change(tmp_path,
                                                                            monkeypatch):
    """The closed loop's games hold the loop's fingerprint (models, `mags`'s loop settings):
    a run with other role models replays them and keeps the scripted games."""
    from mags_lib.game.rule_reader import RuleReaderRoleLLM

    class Renamed(RuleReaderRoleLLM):
        name = "another-writer"

    cfg = MechanismStudyConfig(regimes=["present"], seeds=[0], mechanisms=["contradiction"],
                               agents=["mags_scripted", "mags"], loop_regimes=["present"],
                               loop_seeds=[0], loop_mechanisms=["contradiction"], loop_turns=30,
                               baselines=[], embedder="hashing")
    roles = {"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM()}
    first = run_mechanism_study(cfg, out_dir=tmp_path, roles=roles)
    played = []
    import mags_lib.evaluation.mechanisms as mechanisms

    real = mechanisms.play
    monkeypatch.setattr(mechanisms, "play",
                        lambda spec, *a, **kw: played.append(spec["agent"]) or real(spec, *a, **kw))
    run_mechanism_study(cfg, out_dir=tmp_path, roles=roles)
    assert played == []  # everything resumed
    again = run_mechanism_study(cfg, out_dir=tmp_path, roles={**roles, "write": Renamed()})
    assert played == ["mags", "mags"] and len(again.games) == len(first.games)


def test_the_contradiction_ablation_stops_updates_superseding_in_the_loop():
    from mags_lib.actions import parse_actions
    from mags_lib.embed import HashingEmbedder

    def block(op, item):
        return parse_actions(f"<engram>\n{op} semantic 0.9: On rainy turns, the red quax eats "
                             f"only the {item}.\n</engram>", "engram").actions

    fake = RuleReaderLLM()
    superseded = {}
    for ablate in (None, "contradiction"):
        agent = make_agent("mags", fake, roles={"ask": fake, "write": fake}, ablate=ablate,
                           embedder=HashingEmbedder())
        agent.reset(0)
        agent.memory.apply(block("add", "slate"))
        superseded[ablate] = len(agent.memory.apply(block("update", "iron")).superseded)
    assert superseded == {None: 1, "contradiction": 0}
