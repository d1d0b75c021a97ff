"""Agents: one interface, one prompt, memories that differ. A fake LLM reads the rules."""

from __future__ import annotations

import pytest

from mags_lib.agents import (
    AGENT_NAMES,
    AgentConfig,
    MemoEmbedder,
    make_agent,
    options_grammar,
    oracle_rules,
)
from mags_lib.agents.fake import RuleReaderLLM
from mags_lib.agents.prompt import answer_stem, count_tokens, decide
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation import run_game
from mags_lib.evaluation.metrics import recall_accuracy, stale_recall_rate
from mags_lib.game import GameConfig, SenselessGame

DRIFTY = GameConfig(episode_length=160, drift_every=15, change_fraction=1.0, recent_share=0.8)


def play(name: str, game: GameConfig = DRIFTY, seed: int = 0, **cfg):
    env = SenselessGame(game)
    agent = make_agent(name, RuleReaderLLM(), embedder=HashingEmbedder(), **cfg)
    return agent, run_game(agent, env, seed, name=name)


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_every_agent_plays_a_short_game(name):
    agent, game = play(name, GameConfig(episode_length=40))
    assert game.n_turns == 40 and game.decisions
    for d in game.decisions:
        assert d["chosen"] in d["options"]  # the grammar makes every answer legal
        assert d["prompt_tokens"] > 0 and d["seconds"] >= 0
        for r in d["recalled"]:
            assert {"id", "text", "score", "sources", "path"} <= set(r)
    assert agent.name == name


def test_oracle_reads_the_rules_and_bare_guesses():
    _, oracle = play("oracle")
    _, bare = play("bare")
    assert oracle.accuracy == 1.0
    assert 0.3 < bare.accuracy < 0.7
    assert all(d["n_lines"] == 0 for d in bare.decisions)


def test_static_rag_recalls_stale_versions_and_mags_does_not():
    _, rag = play("static_rag")
    _, mags = play("mags")
    assert stale_recall_rate(rag.decisions) > 0.5  # both versions match the question
    assert stale_recall_rate(mags.decisions) == 0.0  # superseded versions are invalid
    assert recall_accuracy(mags.decisions) >= 0.9
    assert mags.accuracy > rag.accuracy
    assert mags.update_fidelity == 1.0 and rag.update_fidelity == 0.0


def test_no_contradiction_ablation_keeps_old_versions_valid():
    agent, game = play("mags_no_contradiction")
    nodes = agent.memory_nodes()
    for key, texts in game.versions.items():
        if len(texts) > 1:
            valid = {n["text"] for n in nodes if n["valid"]}
            assert set(texts) <= valid, key
    assert stale_recall_rate(game.decisions) > 0.3


def test_ablations_change_one_mechanism_each():
    llm = RuleReaderLLM()
    full = make_agent("mags", llm).memory_config
    assert make_agent("mags_flat", llm).memory_config.max_visited == 1
    assert make_agent("mags_no_hebbian", llm).memory_config.hebbian_rate == 0.0
    no_decay = make_agent("mags_no_decay", llm).memory_config
    assert no_decay.decay_rate == 0.0 and no_decay.prune_threshold == 0.0
    assert full.decay_rate > 0 and full.max_visited > 1
    no_contra = make_agent("mags_no_contradiction", llm)
    assert not no_contra.use_keys and not no_contra.supersede
    with pytest.raises(MagsError, match="memory config"):
        make_agent("mags", llm, memory={"decay_rate": -1.0})


def test_mags_lines_put_the_most_relevant_last():
    _, game = play("mags")
    for d in game.decisions:
        scores = [r["score"] for r in d["recalled"]]
        assert scores == sorted(scores)
        assert d["n_lines"] <= 3


def test_full_context_is_cut_to_the_window():
    window = 160
    agent, game = play("full_context", context_window=window)
    llm = RuleReaderLLM()
    late = [d for d in game.decisions if d["turn"] > 60]
    assert late
    for d in late:
        texts = [r["text"] for r in d["recalled"]]
        assert count_tokens(llm, "\n".join(texts)) <= window
        turns = [r["sources"][0] for r in d["recalled"]]
        assert turns == list(range(d["turn"] - len(turns), d["turn"]))  # the latest turns
    assert agent.memory_size() == game.n_turns


def test_full_context_grows_then_stays_flat():
    _, game = play("full_context", context_window=400)
    tokens = [d["prompt_tokens"] for d in game.decisions]
    assert tokens[0] < tokens[-1] <= 400


def test_unknown_agent_names_the_known_ones():
    with pytest.raises(MagsError) as err:
        make_agent("clairvoyant", RuleReaderLLM())
    for name in AGENT_NAMES:
        assert name in str(err.value)
    with pytest.raises(MagsError, match="unknown keywords"):
        make_agent("bare", RuleReaderLLM(), temperature=0.7)


def test_oracle_without_env_is_a_clear_error():
    from mags_lib.game import Observation

    agent = make_agent("oracle", RuleReaderLLM())
    agent.reset(0)
    obs = Observation("It is a rainy turn. The red quax is offered the iron and the slate. "
                      "Which does it eat?", ("iron", "slate"), 3, "decide")
    with pytest.raises(MagsError, match="no env"):
        agent.act(obs)


def test_act_on_an_information_turn_is_an_error():
    from mags_lib.game import Observation

    agent = make_agent("bare", RuleReaderLLM())
    with pytest.raises(MagsError, match="no legal actions"):
        agent.act(Observation("A scroll reads: ...", (), 0, "announce"))


def test_prompt_pieces():
    assert options_grammar(("a", 'b"c'), leading_space=False) == 'root ::= "a" | "b\\"c"'
    assert answer_stem("It is a sunny turn. The red quax is offered the iron.").endswith(
        "the red quax eats only the")
    rules = ["On rainy turns, the red quax eats only the slate.",
             "On sunny turns, the red quax eats only the iron.",
             "On sunny turns, the teal breep eats only the felt."]
    q = "It is a sunny turn. The red quax is offered the iron and the felt. Which does it eat?"
    assert oracle_rules(rules, q, 3)[-1] == rules[1]
    assert oracle_rules(rules, q, 0) == []
    for fmt in ("completion", "chat"):
        choice = decide(RuleReaderLLM(), rules, q, ("iron", "felt"), prompt_format=fmt)
        assert choice.action == "iron" and q in choice.prompt
    with pytest.raises(MagsError, match="prompt format"):
        AgentConfig(prompt_format="poem")


def test_memo_embedder_encodes_each_text_once():
    class Counting(HashingEmbedder):
        calls = 0

        def encode(self, texts):
            Counting.calls += len(texts)
            return super().encode(texts)

    memo = MemoEmbedder(Counting(dim=32))
    first = memo.encode(["a b", "c d", "a b"])
    again = memo.encode(["c d"])
    assert Counting.calls == 2
    assert (first[1] == again[0]).all() and first.shape == (3, 32)


def test_tagged_answers_use_the_answer_models_format():
    grammar = options_grammar(("iron", "felt"), leading_space=True, tagged=True)
    assert grammar == 'root ::= "<answer>" ( "iron" | "felt" ) "</answer>"'

    class Tagged:  # answers like the answer model of notebook 02
        def __init__(self):
            self.grammars = []

        def complete(self, prompt, *, grammar=None, **_):
            from mags_lib.llm import Completion

            self.grammars.append(grammar)
            return Completion(text="<answer>felt</answer>", usage={"prompt_tokens": 9},
                              seconds=0.0)

    llm = Tagged()
    q = "It is a sunny turn. The red quax is offered the iron and the felt. Which does it eat?"
    choice = decide(llm, [], q, ("iron", "felt"), answer_tags=True)
    assert choice.action == "felt" and llm.grammars == [grammar]
    agent, game = play("oracle", GameConfig(episode_length=30), answer_tags=True)
    assert agent.config.answer_tags and game.decisions


@pytest.mark.slow
def test_the_tagged_grammar_constrains_the_embedded_model(embedded_llm):
    q = "It is a sunny turn. The red quax is offered the iron and the felt. Which does it eat?"
    for fmt in ("completion", "chat"):
        choice = decide(embedded_llm, ["On sunny turns, the red quax eats only the felt."], q,
                        ("iron", "felt"), prompt_format=fmt, answer_tags=True)
        assert choice.text.startswith("<answer>") and choice.text.endswith("</answer>")
        assert choice.action in ("iron", "felt")
