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
from mags_lib.agents.prompt import count_tokens, decide
from mags_lib.agents.registry import TRAINED_LOOP_AGENTS
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.evaluation import run_game
from mags_lib.evaluation.metrics import recall_accuracy, stale_recall_rate
from mags_lib.game import GameConfig, SenselessGame
from mags_lib.game.rule_reader import RuleReaderLLM, RuleReaderRoleLLM
from mags_lib.tasks.base import Observation

DRIFTY = GameConfig(episode_length=160, drift_every=15, change_fraction=1.0, recent_share=0.8)


def play(name: str, game: GameConfig = DRIFTY, seed: int = 0, **cfg):
    """One game of `name`; the closed loop's roles are perfect stand-ins unless given."""
    env = SenselessGame(game)
    if name in TRAINED_LOOP_AGENTS:
        cfg.setdefault("roles", {"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM()})
    agent = make_agent(name, RuleReaderRoleLLM(), embedder=HashingEmbedder(), **cfg)
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
    _, mags = play("mags_scripted")
    assert stale_recall_rate(rag.decisions) > 0.5  # both versions match the question
    assert stale_recall_rate(mags.decisions) == 0.0  # superseded versions are invalid
    assert recall_accuracy(mags.decisions) >= 0.9
    assert mags.accuracy > rag.accuracy
    assert mags.update_fidelity == 1.0 and rag.update_fidelity == 0.0


def test_no_contradiction_ablation_keeps_old_versions_valid():
    agent, game = play("mags_scripted_no_contradiction")
    nodes = agent.memory_nodes()
    for key, texts in game.versions.items():
        if len(texts) > 1:
            valid = {n["text"] for n in nodes if n["valid"]}
            assert set(texts) <= valid, key
    assert stale_recall_rate(game.decisions) > 0.3


def test_ablations_change_one_mechanism_each():
    llm = RuleReaderLLM()
    full = make_agent("mags_scripted", llm).memory_config
    assert make_agent("mags_scripted_flat", llm).memory_config.recall.max_visited == 1
    assert make_agent("mags_scripted_no_hebbian", llm).memory_config.recall.hebbian_rate == 0.0
    no_decay = make_agent("mags_scripted_no_decay", llm).memory_config
    assert no_decay.dynamics.decay_rate == 0.0 and no_decay.dynamics.prune_threshold == 0.0
    assert full.dynamics.decay_rate > 0 and full.recall.max_visited > 1
    no_contra = make_agent("mags_scripted_no_contradiction", llm)
    assert not no_contra.use_keys and not no_contra.supersede
    with pytest.raises(MagsError, match="memory config"):
        make_agent("mags_scripted", llm, memory={"decay_rate": -1.0})


@pytest.mark.parametrize("name", ["mags_scripted", "mags"])
def test_mags_lines_put_the_most_relevant_last(name):
    _, game = play(name)
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
        make_agent("bare", RuleReaderLLM(), top_p=0.9)


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
    rules = ["On rainy turns, the red quax eats only the slate.",
             "On sunny turns, the red quax eats only the iron.",
             "On sunny turns, the teal breep eats only the felt."]
    q = "It is a sunny turn. The red quax is offered the iron and the felt. Which does it eat?"
    assert oracle_rules(rules, rules[1], q, 3)[-1] == rules[1]
    assert oracle_rules(rules, rules[2], q, 3)[-1] == rules[2]  # ground truth, not the words
    assert oracle_rules(rules, rules[1], q, 0) == []
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


# ----- the closed loop -------------------------------------------------------------------------
def test_the_closed_loop_with_perfect_role_models_writes_and_finds_the_rules():
    """Perfect stand-in models, so what is lost here is lost by the memory itself: without
    keys, its lexical detector takes one creature's rules under two conditions with the same
    item for two versions of one fact (on this game the rule's current version is held valid
    at 34 of 51 decisions, and 7 decisions are lost)."""
    agent, game = play("mags")
    loop = game.loop
    assert loop["write_validity"] == 1.0 and loop["ask_validity"] == 1.0
    assert loop["op_add"] > 0 and loop["op_none"] > 0
    assert game.accuracy >= 0.8 and stale_recall_rate(game.decisions) == 0.0
    assert all(d["held_valid"] is not None for d in game.decisions)
    assert sum(d["held_valid"] for d in game.decisions) / len(game.decisions) >= 0.6
    # the router: every decision went to ask + answer, every other turn to write
    assert loop["routes"]["decide"] == {"ask+answer": len(game.decisions)}
    assert set(loop["routes"]["announce"]) == {"write"}
    assert game.update_fidelity >= 0.8
    # every sentence it stored on a rule's turn names that rule (scored by the runner)
    assert loop["rule_stores"] == loop["rule_stores_exact"] == loop["op_add"] + loop["op_update"]


def test_a_writer_that_garbles_the_rule_is_scored_as_garbling():
    """Valid blocks, but the creature's name replaced by the item: write validity stays 1.0,
    the runner's score of the stored sentence (`rule_stores_exact`) drops to 0."""
    from mags_lib.evaluation.metrics import loop_summary
    from mags_lib.game.senseless import parse_rule

    class Garbler(RuleReaderRoleLLM):
        def chat(self, messages, **kw):
            out = super().chat(messages, **kw)
            rule = parse_rule(out.text)
            if rule is None or "<engram>" not in out.text:
                return out
            return self._completion(messages[-1]["content"],
                                    out.text.replace(rule.creature, rule.item))

    roles = {"ask": RuleReaderRoleLLM(), "write": Garbler()}
    _, game = play("mags", roles=roles)
    assert game.loop["write_validity"] == 1.0 and game.loop["rule_stores"] > 0
    assert game.loop["rule_stores_exact"] == 0
    _, clean = play("mags")
    summary = loop_summary([game, clean])
    assert summary["write_fidelity"] == pytest.approx(
        clean.loop["rule_stores"] / (game.loop["rule_stores"] + clean.loop["rule_stores"]))


def test_the_consolidated_variant_answers_from_merged_contexts():
    """`mags_consolidated`: each query's recall_context items (connected hits merged into one
    line) instead of single hits; the same writes, so the same memory."""
    agent, game = play("mags_consolidated")
    hits_agent, hits_game = play("mags")
    assert agent.loop.context == "consolidated" and hits_agent.loop.context == "hits"
    assert game.loop["op_add"] == hits_game.loop["op_add"]
    # accuracy is not compared: the stand-in answer model reads one rule sentence per line
    assert all(d["recalled"] for d in game.decisions)
    merged = [r for d in game.decisions for r in d["recalled"] if len(r["path"]) > 1]
    assert merged, "no context merged two or more connected hits"
    for r in merged:
        assert r["sources"] == [f"node:{n}" for n in r["path"]]
    with pytest.raises(MagsError, match="unknown loop context"):
        make_agent("mags", RuleReaderLLM(), roles={"ask": RuleReaderRoleLLM(),
                                                   "write": RuleReaderRoleLLM()},
                   loop={"context": "everything"})


def test_malformed_role_outputs_change_nothing_and_the_agent_still_answers():
    garbage = {"ask": RuleReaderRoleLLM(garbage=True), "write": RuleReaderRoleLLM(garbage=True)}
    agent, game = play("mags", roles=garbage)
    loop = game.loop
    assert loop["write_malformed"] == loop["write_calls"] > 0
    assert loop["ask_malformed"] == loop["ask_calls"] == len(game.decisions)
    assert agent.memory_size() == 0  # nothing that did not parse was written
    assert all(d["chosen"] in d["options"] for d in game.decisions)
    assert 0.2 < game.accuracy < 0.8  # it guesses: no memory


def test_the_working_memory_block_is_read_and_stores_nothing_unless_asked():
    """Every information turn enters the working block; with working_lines the answer prompt
    shows recent turns similar to the ask queries (here the only memory a garbage writer leaves,
    so some decisions are answered from it); items leave unstored unless consolidate_working
    lets the memory's consolidation rule store them as episodic nodes."""
    garbage = {"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM(garbage=True)}
    agent, game = play("mags", roles=garbage, loop={"working_lines": 1})
    assert agent.memory_size() == 0 and game.loop["working_shown"] > 0
    shown = [r for d in game.decisions for r in d["recalled"]]
    assert shown and all(r["sources"] == ["working"] and r["id"] is None for r in shown)
    assert all(len(d["recalled"]) <= agent.config.k for d in game.decisions)
    _, blind = play("mags", roles=garbage)
    assert blind.loop.get("working_shown", 0) == 0 and game.accuracy > blind.accuracy
    stored, _ = play("mags", roles=garbage, loop={"consolidate_working": True})
    blocks = {d["block"] for _, d in stored.memory.graph.nodes(data=True)}
    assert stored.memory_size() > 0 and blocks == {"episodic"}
    with pytest.raises(MagsError, match="working_lines"):
        make_agent("mags", RuleReaderLLM(), roles=garbage, loop={"working_lines": -1})


def test_mags_needs_its_trained_models_and_says_so():
    with pytest.raises(MagsError, match="trained ask and write"):
        make_agent("mags", RuleReaderLLM())
    with pytest.raises(MagsError, match="loop config"):
        make_agent("mags_prompted", RuleReaderLLM(), loop={"temperature": 1.0})


def test_mags_prompted_uses_the_decision_llm_in_every_role_with_examples():
    llm = RuleReaderRoleLLM()
    agent = make_agent("mags_prompted", llm, embedder=HashingEmbedder())
    assert agent.ask_llm is llm and agent.write_llm is llm and agent.loop.few_shot
    assert agent.memory_config.engram.contradiction_max_diff == 1  # the loop's detector setting


def test_static_rag_retrieves_by_meaning_as_well_as_words():
    import numpy as np

    from mags_lib.game import Observation

    class Synonyms:  # "feline" and "cat" share a vector, nothing else does
        dim = 3

        def encode(self, texts):
            def vec(t):
                t = t.lower()
                return [1.0, 0, 0] if ("cat" in t or "feline" in t) else (
                    [0, 1.0, 0] if "dog" in t else [0, 0, 1.0])
            return np.array([vec(t) for t in texts], dtype=np.float32)

    hybrid = make_agent("static_rag", RuleReaderLLM(), embedder=Synonyms(), k=1)
    lexical = make_agent("static_rag_bm25", RuleReaderLLM(), k=1)
    question = Observation("Where does the feline sleep?", ("sofa", "mat"), 3, "decide")
    for agent in (hybrid, lexical):
        agent.reset(0)
        agent.observe(Observation("A dog barks at the mat.", (), 0, "distractor"))
        agent.observe(Observation("The cat sleeps on the sofa.", (), 1, "announce"))
        agent.observe(Observation("A dog guards the sofa.", (), 2, "distractor"))
    assert hybrid.memory_lines(question)[0]["text"] == "The cat sleeps on the sofa."
    lines = [r["text"] for r in lexical.memory_lines(question)]
    assert "The cat sleeps on the sofa." not in lines[-1:]


def test_the_text_only_router_learns_from_observations_and_refuses_misuse():
    """TextRouter: fit on observations labelled by their legal actions, it routes by the text
    alone; used before fit, or fit on one kind, it says what to do."""
    from mags_lib.agents.router import TextRouter, text_only_routers
    from mags_lib.embed import HashingEmbedder
    from mags_lib.errors import MagsError
    from mags_lib.game.senseless import game_observations

    train = game_observations([1, 2, 4, 5], 120, surface="varied", phrasings="train")
    test = game_observations([3], 120, surface="varied", phrasings="train")
    out = text_only_routers(train, test, HashingEmbedder())
    assert out["text_router"]["accuracy"] >= 0.95 and out["question_rule"]["n"] == len(test)
    with pytest.raises(MagsError, match="before fit"):
        TextRouter(HashingEmbedder())(test[0])
    with pytest.raises(MagsError, match="all of one kind"):
        TextRouter(HashingEmbedder()).fit([o for o in train if not o.legal_actions])


def test_a_sampled_decision_passes_its_temperature_and_a_seed_per_turn():
    """With temperature > 0 the decision of turn t samples with seed + t (a greedy choice made
    in a room the agent came back to would repeat itself forever); greedy keeps one seed."""
    from mags_lib.game.base import Observation
    from mags_lib.llm import Completion

    class Recorder:
        def __init__(self):
            self.calls = []

        def complete(self, prompt, **kw):
            self.calls.append(kw)
            return Completion(text=" look", usage={"prompt_tokens": 5}, seconds=0.0)

    obs = [Observation("-= Cellar =-", ("go east", "look"), turn=t, kind="decide")
           for t in (3, 4)]
    sampled, greedy = Recorder(), Recorder()
    for llm, temperature in ((sampled, 0.7), (greedy, 0.0)):
        agent = make_agent("bare", llm, temperature=temperature, seed=10)
        agent.reset(0)
        assert [agent.act(o).action for o in obs] == ["look", "look"]
    assert [(c["temperature"], c["seed"]) for c in sampled.calls] == [(0.7, 13), (0.7, 14)]
    assert [(c["temperature"], c["seed"]) for c in greedy.calls] == [(0.0, 10), (0.0, 10)]
    with pytest.raises(MagsError, match="temperature"):
        AgentConfig(temperature=-0.1)


def test_the_loop_writes_a_decision_turn_only_when_questions_are_remembered():
    """TextWorld's turns are all decisions that also inform (the room, the objective): with
    remember_questions the loop runs its write model on a decision turn before ask + answer."""
    from mags_lib.game.base import Observation

    roles = {"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM()}
    turn = Observation("On rainy turns, the red quax eats only the slate. It is a rainy turn. "
                       "The red quax is offered the slate and the felt. Which does it eat?",
                       ("slate", "felt"), turn=0, kind="decide")
    for remember, routes, writes in ((True, ("write", "ask", "answer"), 1),
                                     (False, ("ask", "answer"), 0)):
        agent = make_agent("mags", RuleReaderRoleLLM(), embedder=HashingEmbedder(),
                           roles=roles, remember_questions=remember)
        agent.reset(0)
        agent.observe(turn)
        assert agent.routes[-1][2] == routes
        assert agent.counts["write_calls"] == writes
        agent.act(turn)


def test_mags_verbatim_stores_every_information_turn_as_it_came_without_a_write_model():
    """The write-path ablation: no write model is called (one that raises is never reached),
    each information turn becomes one `add` of its own text, and the memory's detector alone
    supersedes; the trained ask model still reads."""
    class NoWriter(RuleReaderRoleLLM):
        def chat(self, messages, **kw):
            raise AssertionError("mags_verbatim called a write model")

    agent, game = play("mags_verbatim", roles={"ask": RuleReaderRoleLLM(), "write": NoWriter()})
    loop = game.loop
    informative = sum(n for kind, routes in loop["routes"].items() if kind != "decide"
                      for n in routes.values())
    assert loop["write_calls"] == loop["op_add"] == loop["write_parsed"] == informative > 0
    assert loop.get("op_update", 0) == 0 and loop.get("write_malformed", 0) == 0
    texts = {d["text"] for _, d in agent.memory.graph.nodes(data=True)}
    assert any(":" in t for t in texts), "a sentence with a colon was stored whole"
    assert loop["nodes_superseded"] > 0  # the detector still replaces versions
    alone = make_agent("mags_verbatim", RuleReaderLLM(), roles={"ask": RuleReaderRoleLLM()})
    assert alone.loop.writer == "verbatim"  # no write model needed
    with pytest.raises(MagsError, match="unknown writer"):
        make_agent("mags", RuleReaderLLM(), roles={"ask": RuleReaderRoleLLM(),
                                                   "write": RuleReaderRoleLLM()},
                   loop={"writer": "oracle"})


def test_mags_episodic_keeps_every_turn_beside_the_written_facts():
    """`keep_turns`: each information turn is also an episodic node of its own text, with its
    turn as source; the write model is shown semantic facts only, so its prompts are those of
    `mags`; recall reads both blocks."""
    roles = {"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM()}
    agent, game = play("mags_episodic", roles=roles)
    plain, _ = play("mags", roles={"ask": RuleReaderRoleLLM(), "write": RuleReaderRoleLLM()})
    nodes = [d for _, d in agent.memory.graph.nodes(data=True)]
    episodic = [d for d in nodes if d["block"] == "episodic"]
    assert episodic and all(str(s).startswith("turn:") for d in episodic for s in d["sources"])
    semantic = sorted(d["text"] for d in nodes if d["block"] == "semantic")
    assert semantic == sorted(d["text"] for _, d in plain.memory.graph.nodes(data=True)
                              if d["block"] == "semantic")  # the same writes as mags
    assert agent.loop.keep_turns and not plain.loop.keep_turns


def test_recall_observation_adds_the_observation_to_the_ask_models_queries():
    from mags_lib.llm import Completion

    class OneQuery:
        name = "one-query"

        def chat(self, messages, **kw):
            return Completion("<recall>\nquery: red quax diet\n</recall>", finish_reason="stop")

    roles = {"ask": OneQuery(), "write": RuleReaderRoleLLM()}
    asked = Observation("On rainy turns, which does the red quax eat: slate or felt?",
                        ("slate", "felt"), turn=3, kind="decide")
    for on in (False, True):
        agent = make_agent("mags", RuleReaderRoleLLM(), embedder=HashingEmbedder(),
                           roles=roles, loop={"recall_observation": on})
        agent.reset(0)
        seen = []
        recall = agent.memory.recall
        agent.memory.recall = (lambda q, *a, seen=seen, recall=recall, **kw:
                               seen.append(q) or recall(q, *a, **kw))
        agent.memory_lines(asked)
        assert (asked.text in seen) == on and "red quax diet" in seen
        assert agent.last_ask["queries"] == ["red quax diet"]  # what the ask model said


def test_rrf_merge_ranks_by_fused_rank_not_by_one_querys_score():
    from types import SimpleNamespace

    from mags_lib.agents.loop import LoopConfig, merged_hits

    def hit(node, score):
        return SimpleNamespace(node_id=node, score=score, valid=True)

    ranked = {"a": [hit(1, 0.99), hit(2, 0.98), hit(3, 0.97)],  # one query, high scores
              "b": [hit(3, 0.40), hit(4, 0.30)], "c": [hit(3, 0.35), hit(5, 0.20)]}
    memory = SimpleNamespace(recall=lambda q, k, block=None: ranked[q][:k])
    by_score = [h.node_id for h in merged_hits(memory, ["a", "b", "c"], 3, 2)]
    by_rank = [h.node_id for h in merged_hits(memory, ["a", "b", "c"], 3, 2, merge="rrf")]
    assert by_score == [1, 2] and by_rank[0] == 3  # found by every query: first when fused
    with pytest.raises(MagsError, match="unknown merge"):
        LoopConfig(merge="max")


def test_interleave_merge_gives_each_query_a_share_and_the_observation_leads():
    from types import SimpleNamespace

    from mags_lib.agents.loop import merged_hits

    def hit(node, score, valid=True):
        return SimpleNamespace(node_id=node, score=score, valid=valid)

    ranked = {"q": [hit(1, 0.99), hit(2, 0.98), hit(3, 0.97)],  # one query, high scores
              "obs": [hit(7, 0.40), hit(9, 0.1, valid=False), hit(2, 0.30), hit(8, 0.2)]}
    memory = SimpleNamespace(recall=lambda q, k, block=None: ranked[q][:k])
    by_score = [h.node_id for h in merged_hits(memory, ["q", "obs"], 4, 4)]
    mixed = [h.node_id for h in merged_hits(memory, ["obs", "q"], 4, 4, merge="interleave")]
    assert by_score == [1, 2, 3, 7]
    assert mixed == [7, 1, 2, 8]  # round robin, each node once, invalid hits dropped


def test_grounding_refuses_a_written_fact_that_names_what_the_turn_never_said():
    """A write model that invents a day ("On Wednesdays") or a place changes nothing under
    LoopConfig.grounding and is counted; a fact whose names the turn has, or an earlier speaker
    ("you" is Gina), is stored; with grounding off the invention is stored."""
    class Inventor(RuleReaderRoleLLM):
        def chat(self, messages, **kw):
            user = messages[-1]["content"]
            if "Thanks" in user:  # before "sushi": the stored lines shown may hold it
                text = "<engram>\nadd semantic 0.9: Jon thanks Gina for her help.\n</engram>"
            elif "sushi" in user:
                text = ("<engram>\nadd semantic 0.9: On Wednesdays, Lena eats sushi.\n"
                        "add semantic 0.9: Lena likes sushi.\n</engram>")
            else:
                text = "<engram>\n</engram>"
            return self._completion(user, text)

    turns = ["[1 May 2023] Gina: Hi Jon!", "[1 May 2023] Lena: It's sushi for me now.",
             "[2 May 2023] Jon: Thanks for having my back."]
    stored = {}
    for grounding in (True, False):
        agent = make_agent("mags", RuleReaderLLM(), embedder=HashingEmbedder(),
                           roles={"ask": RuleReaderRoleLLM(), "write": Inventor()},
                           loop={"grounding": grounding})
        agent.reset(0)
        for i, text in enumerate(turns):
            agent.observe(Observation(text, turn=i, kind="utterance"))
        stored[grounding] = {d["text"] for _, d in agent.memory.graph.nodes(data=True)}
        assert agent.counts["op_add"] == 3  # the model's ops are counted before the check
        assert agent.counts.get("write_ungrounded", 0) == (1 if grounding else 0)
    assert stored[True] == {"Lena likes sushi.", "Jon thanks Gina for her help."}
    assert stored[False] == stored[True] | {"On Wednesdays, Lena eats sushi."}


def test_grounding_words_refuses_a_fact_written_for_a_turn_that_states_none():
    """Under LoopConfig.grounding_words a fact sharing no content word with the turn (the
    greeting's invented smartwatch) changes nothing and is counted; the turn's real fact and
    the rest of its block are stored; off, the invention is stored."""
    class Inventor(RuleReaderRoleLLM):
        def chat(self, messages, **kw):
            user = messages[-1]["content"]
            if "Hey, it's me" in user:
                text = "<engram>\nadd semantic 0.9: Yara is wearing a smartwatch.\n</engram>"
            elif "Lisbon" in user:
                text = ("<engram>\nadd semantic 0.9: Yara lives in Lisbon.\n"
                        "add semantic 0.9: Yara owns a red bicycle.\n</engram>")
            else:
                text = "<engram>\n</engram>"
            return self._completion(user, text)

    turns = ["[1 May 2023] Yara: Hey, it's me.", "[1 May 2023] Yara: I moved to Lisbon."]
    stored = {}
    for on in (True, False):
        agent = make_agent("mags_episodic", RuleReaderLLM(), embedder=HashingEmbedder(),
                           roles={"ask": RuleReaderRoleLLM(), "write": Inventor()},
                           loop={"grounding_words": on})
        agent.reset(0)
        for i, text in enumerate(turns):
            agent.observe(Observation(text, turn=i, kind="utterance"))
        stored[on] = {d["text"] for _, d in agent.memory.graph.nodes(data=True)
                      if d["block"] == "semantic"}
        assert agent.counts.get("write_ungrounded", 0) == (2 if on else 0)
    assert stored[True] == {"Yara lives in Lisbon."}
    assert stored[False] == {"Yara lives in Lisbon.", "Yara owns a red bicycle.",
                             "Yara is wearing a smartwatch."}


def _episodic_lines(writes: dict[str, str], turns: list[str], query: str, question: str,
                    k: int, **loop) -> tuple[list[str], object]:
    """`mags_episodic` whose write model writes `writes[turn]` for each turn (nothing for the
    others) and whose ask model asks `query`: the lines it shows for `question`, and the agent."""
    from mags_lib.llm import Completion

    class Writer:
        name = "writer"

        def chat(self, messages, **kw):
            said = [w for t, w in writes.items() if f"Observation: {t}" in messages[-1]["content"]]
            return Completion("<engram>\n" + "".join(f"{w}\n" for w in said) + "</engram>",
                              finish_reason="stop")

    class Asker:
        name = "asker"

        def chat(self, messages, **kw):
            return Completion(f"<recall>\nquery: {query}\n</recall>", finish_reason="stop")

    agent = make_agent("mags_episodic", RuleReaderRoleLLM(), embedder=HashingEmbedder(), k=k,
                       roles={"ask": Asker(), "write": Writer()}, loop={"query_k": 8, **loop})
    agent.reset(0)
    for turn, text in enumerate(turns):
        agent.observe(Observation(text, (), turn=turn, kind="information"))
    asked = Observation(question, (), turn=len(turns), kind="question")
    return [line["text"] for line in agent.memory_lines(asked)], agent


def test_turn_over_fact_shows_the_turn_in_place_of_an_unchanged_fact_written_from_it():
    """`turn_over_fact`: a fact whose source turn is among the lines shown gives its place to
    the next hit (the turn says it in the speaker's words; the writer gave John's Spanish to
    Tim). That a changed fact stays is `agents.turn_lines`'s doctest."""
    writes = {"John: I'm learning Spanish.": "add semantic 0.9: Tim is learning Spanish.",
              "Tim: I live in Boston.": "add semantic 0.9: Tim lives in Boston.",
              "Tim: I moved to Denver.": "update semantic 0.9: Tim lives in Denver."}

    def lines(on: bool) -> tuple[list[str], object]:
        return _episodic_lines(writes, [*writes, "Tim: I'm learning German now."],
                               "Tim learning language", "Which language is Tim learning?", 4,
                               turn_over_fact=on)

    plain, _ = lines(False)
    shown, agent = lines(True)
    assert "Tim is learning Spanish." in plain  # today's reading shows the false fact
    assert "Tim is learning Spanish." not in shown
    assert "John: I'm learning Spanish." in shown and len(shown) == len(plain) == 4
    assert agent.counts["facts_under_turns"] >= 1


def test_retired_turns_leaves_out_a_turn_whose_facts_were_superseded_for_a_question_about_now():
    """`retired_turns`: once "Ana lives in Lisbon." supersedes "Ana lives in Porto.", the turn
    that said Porto is left out of the lines for "Where does Ana live?" (its fact is not
    recalled either), and still shown for "Where did Ana live before?"."""
    writes = {"Ana: I live in Porto.": "add semantic 0.9: Ana lives in Porto.",
              "Ana: I moved to Lisbon.": "update semantic 0.9: Ana lives in Lisbon."}

    def lines(on: str, question: str) -> tuple[list[str], object]:
        return _episodic_lines(writes, [*writes, "Ana: Hi again!"], "Ana lives", question, 6,
                               retired_turns=on)

    now = "Where does Ana live?"
    plain, agent = lines("off", now)
    assert agent.counts["nodes_superseded"] == 1, "the update replaced Porto"
    assert "Ana: I live in Porto." in plain and "Ana lives in Porto." not in plain
    for way in ("superseded", "updated"):  # the write model's update replaced Porto
        shown, agent = lines(way, now)
        assert "Ana: I live in Porto." not in shown and "Ana: I moved to Lisbon." in shown
        assert "Ana: Hi again!" in shown  # a turn that gave no fact is not retired
        assert agent.counts["retired_turns_left_out"] == 1
        before, _ = lines(way, "Where did Ana live before?")
        assert "Ana: I live in Porto." in before
    writes["Ana: I moved to Lisbon."] = "add semantic 0.9: Ana lives in Lisbon."
    by_add, agent = lines("superseded", now)
    assert agent.counts["nodes_superseded"] == 1  # the memory's detector, on an add
    assert "Ana: I live in Porto." not in by_add
    kept, _ = lines("updated", now)
    assert "Ana: I live in Porto." in kept  # no update from the write model: kept
    with pytest.raises(MagsError, match="unknown retired_turns"):
        lines("on", now)


def test_fact_share_caps_the_facts_shown_and_gives_their_places_to_turns():
    """`fact_share`: with 4 lines and a share of 0.5, at most 2 of them are the write model's
    facts; the freed places go to the next turns, and no fact shows up that the uncapped lines
    lacked. 1.0 (the default) caps nothing; a share outside [0, 1] is refused."""
    writes = {"Tim: I adopted a grey cat last week.": "add semantic 0.9: Tim owns a grey cat.",
              "Tim: My parrot talks all day.": "add semantic 0.9: Tim owns a parrot.",
              "Tim: The goldfish tank needs cleaning.": "add semantic 0.9: Tim owns goldfish.",
              "Tim: We got a puppy called Rex.": "add semantic 0.9: Tim owns a puppy, Rex."}

    def lines(share: float) -> list[str]:
        return _episodic_lines(writes, list(writes), "Tim owns pets", "Which pets does Tim own?",
                               4, fact_share=share)[0]

    def facts(shown: list[str]) -> list[str]:
        return [x for x in shown if not x.startswith("Tim:")]

    plain, capped = lines(1.0), lines(0.5)
    assert len(plain) == len(capped) == 4
    assert len(facts(plain)) > 2 and len(facts(capped)) == 2
    assert set(facts(capped)) <= set(facts(plain))
    assert len(capped) - len(facts(capped)) == 2  # the places went to turns
    with pytest.raises(MagsError, match="fact_share"):
        lines(1.5)


def test_none_margin_stores_nothing_where_an_empty_block_is_close_enough():
    """Under LoopConfig.none_margin a block that adds is dropped where the reply begun
    '<engram>\\n' scores '</engram>' within the margin of 'add' / 'update' (counted as
    `write_none_by_margin`); a turn whose empty block is far behind is stored; margin 0 scores
    nothing; a write model that cannot score is a clear error."""
    class Scorer(RuleReaderRoleLLM):
        def __init__(self):
            super().__init__()
            self.scored = []

        def chat(self, messages, **kw):
            user = messages[-1]["content"]
            fact = "Yara lives in Lisbon." if "Lisbon" in self.chat_prompt(messages) \
                else "Yara likes tea."
            return self._completion(user, f"<engram>\nadd semantic 0.9: {fact}\n</engram>")

        def chat_prompt(self, messages):  # the observation, not the memory lines shown
            return "PROMPT " + messages[-1]["content"].partition("Memory holds:")[0]

        def score(self, prompt, continuations):
            assert prompt.endswith("<engram>\n") and continuations == ["</engram>", "add",
                                                                         "update"]
            self.scored.append(prompt)
            return [-0.5, -1.0, -4.0] if "Lisbon" in prompt else [-3.0, -0.2, -4.0]

    turns = ["[1 May 2023] Yara: I moved to Lisbon.", "[1 May 2023] Yara: I like tea a lot."]
    stored = {}
    for margin in (0.0, 1.0):
        writer = Scorer()
        agent = make_agent("mags", RuleReaderLLM(), embedder=HashingEmbedder(),
                           roles={"ask": RuleReaderRoleLLM(), "write": writer},
                           loop={"none_margin": margin})
        agent.reset(0)
        for i, text in enumerate(turns):
            agent.observe(Observation(text, turn=i, kind="utterance"))
        stored[margin] = {d["text"] for _, d in agent.memory.graph.nodes(data=True)}
        assert len(writer.scored) == (2 if margin else 0)
        assert agent.counts.get("write_none_by_margin", 0) == (1 if margin else 0)
    assert stored[0.0] == {"Yara lives in Lisbon.", "Yara likes tea."}
    assert stored[1.0] == {"Yara likes tea."}  # -0.5 + 1 >= -1.0; -3.0 + 1 < -0.2

    class Blind(RuleReaderRoleLLM):
        def chat(self, messages, **kw):
            return self._completion(messages[-1]["content"],
                                    "<engram>\nadd semantic 0.9: Yara likes tea.\n</engram>")

    agent = make_agent("mags", RuleReaderLLM(), embedder=HashingEmbedder(),
                       roles={"ask": RuleReaderRoleLLM(), "write": Blind()},
                       loop={"none_margin": 1.0})
    agent.reset(0)
    with pytest.raises(MagsError, match="scores text"):
        agent.observe(Observation(turns[1], turn=0, kind="utterance"))
    with pytest.raises(MagsError, match="none_margin"):
        make_agent("mags", RuleReaderLLM(), embedder=HashingEmbedder(),
                   roles={"ask": RuleReaderRoleLLM(), "write": Blind()},
                   loop={"none_margin": -1.0})


def test_write_replies_off_keeps_the_agents_own_turns_from_the_write_model():
    """With LoopConfig.write_replies False a turn of kind REPLY (the agent's own words, in
    the assistant's place) never reaches the write model: the assistant's "Thanks for the
    update." that the writer turns into an update retires nothing; the turn is still kept as
    said (keep_turns) and counted as skipped. On, it is written as before."""
    from mags_lib.tasks.base import REPLY, UTTERANCE

    class ThanksAsUpdate(RuleReaderRoleLLM):
        def __init__(self):
            super().__init__()
            self.prompts = []

        def chat(self, messages, **kw):
            user = messages[-1]["content"]
            self.prompts.append(user)
            if "Thanks for the update" in user:
                text = "<engram>\nupdate semantic 0.9: Ana lives in Porto.\n</engram>"
            elif "Lisbon" in user:
                text = "<engram>\nadd semantic 0.9: Ana lives in Lisbon.\n</engram>"
            else:
                text = "<engram>\n</engram>"
            return self._completion(user, text)

    turns = [("[1 May 2023] Ana: I live in Lisbon.", UTTERANCE),
             ("[1 May 2023] Assistant: Thanks for the update.", REPLY)]
    for on in (True, False):
        writer = ThanksAsUpdate()
        agent = make_agent("mags_episodic", RuleReaderLLM(), embedder=HashingEmbedder(),
                           roles={"ask": RuleReaderRoleLLM(), "write": writer},
                           loop={"write_replies": on})
        agent.reset(0)
        for i, (text, kind) in enumerate(turns):
            agent.observe(Observation(text, turn=i, kind=kind))
        nodes = [d for _, d in agent.memory.graph.nodes(data=True)]
        valid = {d["text"] for d in nodes if d["block"] == "semantic" and d["valid_to"] is None}
        said = {d["text"] for d in nodes if d["block"] == "episodic"}
        assert said == {text for text, _ in turns}  # both kept as said either way
        assert any("Thanks for the update" in p for p in writer.prompts) is on
        assert agent.counts.get("write_skipped_reply", 0) == (0 if on else 1)
        assert agent.counts["write_calls"] == (2 if on else 1)
        assert valid == ({"Ana lives in Porto."} if on else {"Ana lives in Lisbon."})
