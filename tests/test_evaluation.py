"""Evaluation: games kept line by line, resume, failures that name their place, pure metrics."""

from __future__ import annotations

import json

import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation import (
    EvalConfig,
    GameRecord,
    accuracy,
    adaptability,
    efficiency,
    read_jsonl,
    recovery_turns,
    rule_flags,
    run_eval,
    summarize,
    update_fidelity,
    wilson_interval,
)
from mags_lib.evaluation.metrics import ablation_markdown, oracle_vs_bare, stale_recall_rate
from mags_lib.game import GameConfig
from mags_lib.game.rule_reader import RuleReaderLLM
from mags_lib.llm import LLMConfig

SHORT = GameConfig(episode_length=50, drift_every=12)


def config(**kw) -> EvalConfig:
    base = {"agents": ["bare", "oracle", "mags_scripted"], "seeds": [0, 1], "game": SHORT,
            "embedder": "hashing", "verbose": False}
    return EvalConfig(**{**base, **kw})


def test_config_id_follows_a_loop_agents_own_defaults(monkeypatch):
    """A changed default of a closed-loop agent (registry.loop_settings) replays its games
    under resume; runs without a loop agent keep their ids."""
    import mags_lib.evaluation.config as evaluation_config

    loop = config(agents=["bare", "mags"], models={"ask": "embedded", "write": "embedded"})
    plain = config()
    ids = (loop.config_id(), plain.config_id())
    real = evaluation_config.loop_settings
    monkeypatch.setattr(evaluation_config, "loop_settings",
                        lambda name, over=None: {**real(name, over), "recall_observation": False})
    assert loop.config_id() != ids[0]
    assert plain.config_id() == ids[1]


def test_config_id_follows_the_loop_and_memory_defaults(monkeypatch):
    """A changed field default of LoopConfig or MemoryConfig replays every game under resume."""
    import mags_lib.evaluation.config as evaluation_config

    first = config().config_id()
    real = evaluation_config.config_defaults()
    assert real["loop"]["past_versions"] == 1 and "max_visited" in str(real["memory"])
    monkeypatch.setattr(evaluation_config, "config_defaults",
                        lambda: {**real, "loop": {**real["loop"], "versions": 2}})
    assert config().config_id() != first


def test_config_id_follows_a_model_files_content_not_its_name(tmp_path):
    from mags_lib.llm import LLMConfig

    model = tmp_path / "answer-grpo-q8_0.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)
    first = config(llm=LLMConfig(model=str(model))).config_id()
    assert config(llm=LLMConfig(model=str(model))).config_id() == first
    retrained = tmp_path / "new.gguf"
    retrained.write_bytes(b"GGUF" + b"\1" * 64)
    retrained.replace(model)  # re-exported as notebook 04 does: same name, same size
    assert config(llm=LLMConfig(model=str(model))).config_id() != first
    # "embedded" and other non-file names add no digest, so the ids of earlier runs hold
    from mags_lib.evaluation.config import _model_file_digest

    assert _model_file_digest("embedded") is None
    assert _model_file_digest("Qwen/Qwen2.5-0.5B-Instruct") is None
    assert _model_file_digest(str(model)) is not None


def evaluate(tmp_path, llm=None, **kw):
    return run_eval(config(**kw), llm=llm or RuleReaderLLM(), embedder=HashingEmbedder(),
                    out_dir=tmp_path)


# ----- run_eval --------------------------------------------------------------------------------
def test_run_eval_writes_games_explanations_and_a_verdict_first(tmp_path):
    result = evaluate(tmp_path)
    rows = read_jsonl(tmp_path / "games.jsonl")
    assert {(r["agent"], r["seed"]) for r in rows} == {(a, s) for a in ("bare", "oracle", "mags_scripted")
                                                       for s in (0, 1)}
    explain = read_jsonl(tmp_path / "explain" / "mags_scripted_1.jsonl")
    assert explain and {"prompt", "recalled", "chosen", "correct"} <= set(explain[0])
    assert all("path" in r for e in explain for r in e["recalled"])
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert list(metrics)[:2] == ["oracle_vs_bare_gap", "evaluation_valid"]
    assert metrics["evaluation_valid"] is True and metrics["oracle_vs_bare_gap"] > 0.3
    assert result.summary["agents"]["oracle"]["accuracy"] == 1.0
    assert (tmp_path / "config.json").exists()


def test_resume_skips_finished_games(tmp_path):
    evaluate(tmp_path, agents=["bare", "oracle"])
    llm = RuleReaderLLM()
    result = evaluate(tmp_path, llm=llm, agents=["bare", "oracle"])
    assert llm.calls == 0 and len(result.games) == 4
    llm = RuleReaderLLM()
    result = evaluate(tmp_path, llm=llm, agents=["bare", "oracle", "mags_scripted"])
    mags_decisions = sum(len(g.decisions) for g in result.games if g.agent == "mags_scripted")
    # only the new agent played: one scoring call per order of its two options (debias_order)
    assert llm.calls == 2 * mags_decisions
    assert len(read_jsonl(tmp_path / "games.jsonl")) == 6


def test_a_new_config_or_no_resume_starts_afresh(tmp_path):
    evaluate(tmp_path, agents=["bare"])
    llm = RuleReaderLLM()
    evaluate(tmp_path, llm=llm, agents=["bare"], k=2)  # another config_id
    assert llm.calls > 0
    assert {r["config_id"] for r in read_jsonl(tmp_path / "games.jsonl")} == {
        config(k=2).config_id()}
    llm = RuleReaderLLM()
    evaluate(tmp_path, llm=llm, agents=["bare"], k=2, resume=False)
    assert llm.calls > 0 and len(read_jsonl(tmp_path / "games.jsonl")) == 2


def test_a_failing_backend_names_agent_seed_turn_and_keeps_finished_games(tmp_path):
    probe = RuleReaderLLM()
    evaluate(tmp_path / "probe", llm=probe, agents=["bare"], seeds=[0])
    n = probe.calls  # the backend's calls in bare's game (two a decision: debias_order)
    with pytest.raises(MagsError) as err:
        evaluate(tmp_path, llm=RuleReaderLLM(fail_after=n + 2), agents=["bare", "oracle"],
                 seeds=[0])
    message = str(err.value)
    assert "'oracle'" in message and "seed 0" in message and "turn " in message
    assert "ConnectionError" in message and "resume=True" in message
    rows = read_jsonl(tmp_path / "games.jsonl")
    assert [(r["agent"], r["seed"]) for r in rows] == [("bare", 0)]


def test_malformed_configs_raise_the_games_error():
    with pytest.raises(MagsError, match="episode_length"):
        EvalConfig(game={"episode_length": 0})
    with pytest.raises(MagsError, match="unknown GameConfig keys"):
        EvalConfig(game={"episode_lenght": 100})
    with pytest.raises(MagsError, match="known agents"):
        EvalConfig(agents=["bare", "psychic"])
    with pytest.raises(MagsError, match="n_ctx"):
        EvalConfig(context_window=4096)


def test_smoke_shrinks_sizes_only():
    cfg = EvalConfig(smoke=True, seeds=[0, 1, 2])
    small = cfg.resolved()
    assert small.seeds == [0, 1] and small.game.episode_length == cfg.smoke_episode_length
    assert small.agents == cfg.agents and small.k == cfg.k
    assert small.game.drift_every == cfg.game.drift_every


def test_figures_draw(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from mags_lib.evaluation import figures

    result = evaluate(tmp_path, agents=["bare", "oracle", "mags_scripted", "static_rag", "mags_scripted_flat"])
    for fig in (figures.accuracy_over_time(result.games), figures.accuracy_bars(result.summary),
                figures.cost_per_decision(result.games), figures.ablation_figure(result.summary)):
        assert fig.axes
    assert "| mags_scripted_flat |" in ablation_markdown(result.summary["ablation"])


# ----- metrics on hand-made records ---------------------------------------------------------------
def d(turn, correct, key="a", n_changes=0, since=None, hit=False, stale=False, tokens=10):
    return {"turn": turn, "correct": correct, "key": key, "n_changes": n_changes,
            "turns_since_change": since if since is not None else turn, "recall_hit": hit,
            "stale_hit": stale, "prompt_tokens": tokens, "seconds": 0.1}


def test_wilson_interval_bounds():
    for k, n in [(0, 10), (10, 10), (7, 20), (1, 1)]:
        lo, hi = wilson_interval(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    narrow, wide = wilson_interval(500, 1000), wilson_interval(5, 10)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]
    a = accuracy([d(0, True), d(1, True), d(2, False)])
    assert a["n"] == 3 and a["ci_low"] < 2 / 3 < a["ci_high"]


def test_recovery_turns_count_decisions_to_the_first_correct_one():
    records = [d(3, True, "a"),                                   # never changed: ignored
               d(10, False, "a", 1, 2), d(14, False, "a", 1, 6), d(20, True, "a", 1, 12),
               d(12, True, "b", 1, 1),
               d(30, False, "a", 2, 1)]                           # second change: never right
    assert recovery_turns(records) == [3, 1, None]


def test_adaptability_splits_recent_settled_and_stable():
    records = [d(1, True), d(5, False, n_changes=1, since=3), d(50, True, n_changes=1, since=40)]
    out = adaptability(records, window=20)
    assert out["stable_accuracy"] == 1.0 and out["recent_accuracy"] == 0.0
    assert out["settled_accuracy"] == 1.0 and out["recent_n"] == 1


def test_stale_rate_and_rule_flags():
    key = "red quax|rainy"
    cur = "On rainy turns, the red quax eats only the iron."
    old = "A scroll reads: On rainy turns, the red quax eats only the slate."
    other = "On sunny turns, the red quax eats only the slate."
    assert rule_flags([old, cur], key, "iron", "slate") == (True, True)
    assert rule_flags([other, "Right! The scroll says: " + cur], key, "iron", "slate") == (
        True, False)
    # any wording counts, a line naming both items states the current version
    varied = "Only the iron is eaten by the red quax whenever the turn is rainy."
    assert rule_flags([varied], key, "iron", "slate") == (True, False)
    both = "Rule change: the red quax now eats only iron on rainy turns, never slate."
    assert rule_flags([both], key, "iron", "slate") == (True, False)
    assert rule_flags(["The red quax eats irons."], key, "iron", None) == (False, False)
    assert rule_flags([], None, None, None) == (False, False)
    records = [d(1, True, n_changes=1, stale=True), d(2, True, n_changes=1), d(3, True, stale=True)]
    assert stale_recall_rate(records) == 0.5


def test_update_fidelity():
    def rule(c, w, i):
        return f"On {w} turns, the {c} eats only the {i}."

    a, b, c = "red quax|rainy", "teal breep|sunny", "pale grilb|foggy"
    versions = {a: [rule("red quax", "rainy", "iron"), rule("red quax", "rainy", "felt")],
                b: [rule("teal breep", "sunny", x) for x in ("slate", "cello", "awl")],
                c: [rule("pale grilb", "foggy", "tin")]}
    good = [{"text": "The red quax eats felt when it is rainy.", "valid": True},
            {"text": versions[b][-1], "valid": True}, {"text": versions[a][0], "valid": False}]
    assert update_fidelity(good, versions) == 1.0
    half = [*good, {"text": versions[b][0], "valid": True}]
    assert update_fidelity(half, versions) == 0.5
    assert update_fidelity(good, {c: versions[c]}) is None


def test_efficiency_spans_show_growth():
    records = [d(t, True, tokens=10 + t) for t in range(0, 90, 3)]
    out = efficiency(records, n_bins=3)
    first, _, last = out["tokens_by_span"]
    assert first < last and out["tokens_per_decision"] > 10


def test_an_oracle_no_better_than_bare_makes_the_evaluation_invalid():
    def game(agent, seed, correct):
        return GameRecord(agent, seed, "x", [d(i, c) for i, c in enumerate(correct)], 10, 1.0)

    coin = [True, False] * 20
    games = [game("bare", 0, coin), game("oracle", 0, coin[1:] + [True])]
    summary = summarize(games)
    assert list(summary)[:2] == ["oracle_vs_bare_gap", "evaluation_valid"]
    assert summary["evaluation_valid"] is False
    assert "NOT VALID" in summary["validity"]["note"]
    assert oracle_vs_bare({"bare": summary["agents"]["bare"]})["valid"] is None
    strong = summarize([game("bare", 0, coin), game("oracle", 0, [True] * 40)])
    assert strong["evaluation_valid"] is True and strong["oracle_vs_bare_gap"] == 0.5


# ----- the real embedded model ------------------------------------------------------------------
@pytest.mark.slow
def test_a_tiny_eval_with_the_embedded_model_runs_end_to_end(tmp_path, embedded_llm):
    cfg = config(agents=["bare", "oracle"], seeds=[0], game=GameConfig(episode_length=40))
    result = run_eval(cfg, llm=embedded_llm, out_dir=tmp_path)
    games = {g.agent: g for g in result.games}
    assert set(games) == {"bare", "oracle"} and games["bare"].decisions
    for g in games.values():
        assert all(d["chosen"] in d["options"] for d in g.decisions)
        assert all(d["prompt_tokens"] > 0 and d["llm_seconds"] > 0 for d in g.decisions)
    # the oracle's prompts carry the rules. Whether they help is not asserted here: the base
    # model does not use them under the generic "Answer:" stem (docs/journal.md, 2026-11-25);
    # the trained answer model does, which notebook 06 measures.
    def mean_tokens(g):
        return sum(d["prompt_tokens"] for d in g.decisions) / len(g.decisions)

    assert mean_tokens(games["oracle"]) > mean_tokens(games["bare"]) + 10
    assert (tmp_path / "metrics.json").exists()


def test_answer_model_study_compares_settings_and_finds_exported_files(tmp_path):
    from mags_lib.embed import HashingEmbedder
    from mags_lib.evaluation.answer_model import (
        answer_model_settings,
        answer_model_study,
        find_gguf,
    )
    from mags_lib.game.rule_reader import RuleReaderLLM

    gguf_dir = tmp_path / "gguf"
    gguf_dir.mkdir()
    assert find_gguf("answer-grpo", gguf_dir) is None
    for q in ("f16", "q8_0"):
        (gguf_dir / f"answer-grpo-{q}.gguf").write_bytes(b"GGUF")
    trained = find_gguf("answer-grpo", gguf_dir)
    assert trained.name == "answer-grpo-q8_0.gguf"
    with pytest.raises(MagsError, match="run notebooks 02 and 04"):
        answer_model_settings(tmp_path / "missing.gguf")
    settings = answer_model_settings(trained)
    assert [s.label for s in settings] == ["base-completion", "base-chat", "trained-completion",
                                           "trained-chat"]
    assert [s.answer_tags for s in settings] == [False, False, True, True]
    cfg = EvalConfig(seeds=[0], game=GameConfig(episode_length=40), embedder="hashing")
    seen = []

    def load(setting):
        seen.append(setting.label)
        return RuleReaderLLM()

    study = answer_model_study(cfg, settings, agents=("bare", "oracle"), load_llm=load,
                               embedder=HashingEmbedder(), out_dir=tmp_path / "study")
    assert seen == [s.label for s in settings]
    assert len(study.table) == 8 and len(study.gaps) == 4
    for gap in study.gaps:  # the fake reads rules in either format, tagged or not
        assert gap["oracle_minus_bare"] > 0
    assert all(r["accuracy"] == 1.0 for r in study.table if r["agent"] == "oracle")
    assert (tmp_path / "study" / "trained-chat" / "games.jsonl").exists()


def test_an_unreachable_role_server_names_the_backend_and_keeps_finished_games(tmp_path):
    """The closed loop's write model behind an OpenAI-compatible URL where nothing listens."""
    from mags_lib.game.rule_reader import RuleReaderRoleLLM
    from mags_lib.llm import LLMConfig, load_llm

    dead = load_llm(LLMConfig(backend="openai", model="write", base_url="http://127.0.0.1:9/v1",
                              timeout_s=2.0, cache=False))
    with pytest.raises(MagsError) as err:
        run_eval(config(agents=["bare", "mags"], seeds=[0]), llm=RuleReaderRoleLLM(),
                 embedder=HashingEmbedder(), out_dir=tmp_path,
                 roles={"ask": RuleReaderRoleLLM(), "write": dead})
    message = str(err.value)
    assert "'mags'" in message and "cannot reach the LLM server at http://127.0.0.1:9/v1" in message
    assert "start the server" in message
    assert [(r["agent"], r["seed"]) for r in read_jsonl(tmp_path / "games.jsonl")] == [("bare", 0)]


def test_the_prompted_baselines_get_the_base_model_never_the_decision_model(monkeypatch):
    """`mem0` and `mags_prompted` write with `prompted_model` (the untrained base model); the
    game runner once gave it to `mags_prompted` only, so `mem0` wrote with the decision model."""
    import mags_lib.llm as llm_module
    from mags_lib.evaluation.runner import load_role_llms

    loaded = []
    monkeypatch.setattr(llm_module, "load_llm", lambda cfg: loaded.append(cfg.model) or cfg.model)
    for agents in (["bare", "mem0"], ["mags_prompted"]):
        loaded.clear()
        cfg = EvalConfig(agents=agents, llm=LLMConfig(model="models/gguf/answer.gguf"))
        assert load_role_llms(cfg) == {"prompted": "embedded"} and loaded == ["embedded"]
    assert load_role_llms(EvalConfig(agents=["bare", "static_rag"])) == {}
    ids = {a: EvalConfig(agents=["bare", a]).config_id() for a in ("mem0", "static_rag")}
    assert EvalConfig(agents=["bare", "mem0"], prompted_model="other.gguf").config_id() \
        != ids["mem0"], "the prompted model is part of a run's identity"
