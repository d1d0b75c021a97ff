"""mags_lib.synth: chain rows, seeds, expansion with fake LLMs, diversity, dedupe, a whole run."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import numpy as np
import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.game import generate_episode
from mags_lib.game.senseless import parse_rule
from mags_lib.llm import Completion
from mags_lib.objectives.data import TASKS, load_jsonl, row_problem
from mags_lib.objectives.rewards import answer_reward, engram_reward, format_reward, recall_reward
from mags_lib.synth import SPLITS, SynthConfig, chains, diversity, expand, surface, synthesize
from mags_lib.synth.chains import NOTHING_TO_STORE, episode_rows, game_config
from mags_lib.synth.expand import PARAPHRASE_SYSTEM, expand_task, load_seed_rows

_QUESTION = re.compile(r"It is an? (?P<w>[a-z]+) turn\. The (?P<c>[a-z]+ [a-z]+) is offered")
REWARD = {"ask": recall_reward, "write": engram_reward, "answer": answer_reward}


class FakeLLM:
    """Answers every chat with `reply(messages)`; records the calls."""

    def __init__(self, reply, name: str = "fake"):
        self.reply, self.name, self.calls = reply, name, []

    def chat(self, messages, **kw):
        self.calls.append((messages, kw))
        return Completion(text=self.reply(messages))


def good_reply(messages) -> str:
    """A valid paraphrase (entities kept) or a valid recall block in other words."""
    user = messages[-1]["content"]
    if messages[0]["content"] == PARAPHRASE_SYSTEM:
        return "Listen closely. " + user
    m = _QUESTION.search(user)
    return f"<recall>\nquery: {m['c']} during {m['w']} weather\n</recall>" if m else "?"


GARBAGE = ["", "lorem ipsum", "<recall>\nquery:", "<recall>\nfly: away\n</recall>",
           "<engram>\nadd semantic 7: x\n</engram>", "\x00\x01<<>>", "<recall>" * 50]


def garbage_reply(messages) -> str:
    return random.Random(len(str(messages))).choice(GARBAGE)


def boom(messages) -> str:
    raise RuntimeError("backend died")


@pytest.fixture(scope="module")
def episode_rows_small():
    cfg = SynthConfig(surfaces=["fixed"],  # the fake LLM above reads the fixed question
                      imperfect_memory_share=0.3)  # the rows' imperfect-memory variant tested
    return episode_rows(generate_episode(game_config(cfg, 12_345, 1)), cfg)[0], cfg


TINY = dict(smoke=True, n_train_games=2, episode_length=60, n_expansions=4,
            max_rows={"ask": 12, "write": 12, "answer": 12}, max_eval_rows=6,
            sources=["game", "persona"], n_persona_train=2, n_persona_val=1,
            max_conversation_rows={"ask": 8, "write": 8})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    cfg = SynthConfig(**TINY)
    return synthesize(cfg, llm=FakeLLM(good_reply), out_dir=out), cfg, out


# ----- chains ------------------------------------------------------------------------------


def test_chain_rows_are_valid_and_gold_completions_score_one(episode_rows_small):
    rows, cfg = episode_rows_small
    for task in TASKS:
        assert len(rows[task]) > 5, task
        assert [row_problem(r, task) for r in rows[task]] == [None] * len(rows[task])
        comps, golds = [r["completion"] for r in rows[task]], [r["gold"] for r in rows[task]]
        assert REWARD[task](comps, gold=golds) == [1.0] * len(comps), task
        assert format_reward(comps, task=[task] * len(comps)) == [1.0] * len(comps)


def test_chain_rows_cover_every_op_and_memory_condition(episode_rows_small):
    rows, _ = episode_rows_small
    assert {r["gold"]["op"] for r in rows["write"]} == {"add", "update", "none"}
    assert {r["gold"]["memory"] for r in rows["answer"]} == {"gold", "stale", "none"}
    assert {r["gold"]["prompt_format"] for r in rows["answer"]} == {"completion", "chat"}
    stale = [r for r in rows["ask"] if r["gold"]["n_stale"]]
    assert stale, "no ask row with superseded versions of the gold rule"
    for r in stale:  # older versions share the gold key and come before the gold fact
        key = r["gold"]["gold_key"]
        keyed = [f["text"] for f in r["gold"]["memory_facts"] if f.get("key") == key]
        assert keyed[-1] == r["gold"]["gold_node_text"] and len(keyed) == r["gold"]["n_stale"] + 1
    for r in rows["write"]:
        assert (r["completion"][0]["content"] == NOTHING_TO_STORE) == (r["gold"]["ops"] == [])


def test_answer_rows_use_the_agents_decision_prompt(episode_rows_small):
    from mags_lib.agents.prompt import chat_messages, completion_prompt

    rows, _ = episode_rows_small
    for r in rows["answer"]:
        content = r["prompt"][-1]["content"]
        question = r["gold"]["observation"]
        if r["gold"]["prompt_format"] == "chat":
            lines = content.split("Notes:\n", 1)[1].split("\n\n", 1)[0]
            lines = [] if lines == "(no notes)" else lines.split("\n")
            assert r["prompt"] == chat_messages(lines, question)
        else:
            lines = content.split("\n")[:-2]
            assert r["prompt"] == [{"role": "user", "content": completion_prompt(lines, question)}]
        assert r["gold"]["answer"] in r["gold"]["options"]
        creature, condition = r["gold"]["rule_key"].split("|")
        rule = f"On {condition} turns, the {creature} eats only the {r['gold']['answer']}."
        assert (rule in content) == (r["gold"]["memory"] != "none") == r["gold"]["answerable"]


def test_phrasing_varies_with_the_seed_and_stays_within_the_grammar(episode_rows_small):
    rows, _ = episode_rows_small
    systems = {r["prompt"][0]["content"] for r in rows["ask"]}
    completions = {r["completion"][0]["content"] for r in rows["ask"]}
    assert len(systems) >= 3 and len(completions) >= len(rows["ask"]) // 2
    from mags_lib.actions import parse_actions

    for r in rows["ask"] + [r for r in rows["write"] if r["gold"]["ops"]]:
        kind = "recall" if r["task"] == "ask" else "engram"
        actions = parse_actions(r["completion"][0]["content"], kind).actions
        assert surface.actions_fit_grammar(actions)


def test_seed_files_are_valid_and_self_consistent():
    for task in TASKS:
        rows, report = load_seed_rows(task)
        assert report.skipped == 0 and len(rows) >= 8, task
        assert all(r["game_seed"] == chains.HAND_WRITTEN_SEED for r in rows)
        golds = [r["gold"] for r in rows]
        assert REWARD[task]([r["completion"] for r in rows], gold=golds) == [1.0] * len(rows)
    assert len(expand.paraphrase_seeds(load_seed_rows("ask")[0])) >= 5


# ----- diversity ---------------------------------------------------------------------------


def test_distinct_n_and_nearest_cosines():
    assert diversity.distinct_n(["a b", "a b"], 2) == 0.5
    assert diversity.distinct_n(["a"], 2) == 0.0
    v = np.eye(3, dtype=np.float32)
    assert diversity.nearest_cosines(v).tolist() == [0.0, 0.0, 0.0]
    assert diversity.nearest_cosines(v[:1]).tolist() == [-1.0]


def test_dedupe_removes_planted_near_duplicates_and_keeps_first():
    rng = random.Random(0)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.sample(words, 30)) for _ in range(40)]
    planted = [t + " extra" for t in base[:10]]  # one word more: cosine ~0.98
    texts = base + planted
    order = list(range(len(texts)))
    rng.shuffle(order)
    texts = [texts[i] for i in order]
    vecs = HashingEmbedder(dim=1024).encode(texts)
    kept = diversity.dedupe(texts, vecs, 0.95)
    assert len(kept) == 40
    for t in base[:10]:  # of each pair the earlier one survives
        pair = [t, t + " extra"]
        first = min(pair, key=texts.index)
        assert first in kept and (set(pair) - {first}) & set(kept) == set()
    assert diversity.near_dup_rate(vecs, 0.95) == pytest.approx(20 / 50)
    assert diversity.near_dup_rate(HashingEmbedder(dim=1024).encode(kept), 0.95) == 0.0


def test_dedupe_against_a_reference_drops_leaks():
    vecs = np.array([[1, 0], [0, 1]], dtype=np.float32)
    assert diversity.dedupe_indices(vecs, 0.9, reference=vecs[:1]) == [1]


# ----- expansion ---------------------------------------------------------------------------


def _seeds():
    return {t: load_seed_rows(t)[0] for t in TASKS}


@pytest.mark.parametrize("task", ["ask", "write", "answer"])
def test_expansion_of_garbage_keeps_nothing_and_says_why(episode_rows_small, task):
    rows, _ = episode_rows_small
    modes = ["completion"] if task == "answer" else ["completion", "observation"]
    for reply in (garbage_reply, boom):
        kept, report = expand_task(task, rows[task], _seeds()[task], FakeLLM(reply), n=8, seed=1,
                                   modes=modes)
        assert kept == [] and report.kept == 0
        assert report.tried == 8 and report.rejected == 8
        assert sum(report.reasons.values()) == 8 and "kept" not in report.reasons
    assert report.reasons == {"llm_error": 8}
    assert json.dumps(report.to_dict())  # serialisable for metrics.json
    _, report = expand_task("answer", rows["answer"], _seeds()["answer"], FakeLLM(boom), n=2,
                            seed=1, modes=["observation"])
    assert report.reasons == {"no_candidates_or_seeds": 2}  # answer prompts are never rewritten


def test_expansion_keeps_valid_rewrites_that_agree_with_the_truth(episode_rows_small):
    rows, _ = episode_rows_small
    kept, report = expand_task("ask", rows["ask"], _seeds()["ask"], FakeLLM(good_reply), n=6,
                               seed=0)
    assert report.kept == 6 == len(kept) and not report.reasons
    modes = [r["gold"]["expansion_mode"] for r in kept]
    assert modes.count("completion") == modes.count("observation") == 3
    for r in kept:
        assert row_problem(r, "ask") is None and r["gold"]["origin"] == "expanded"
        assert recall_reward([r["completion"]], gold=[r["gold"]])[0] == 1.0
        if r["gold"]["expansion_mode"] == "observation":
            assert r["prompt"][-1]["content"].count("Listen closely.") == 1
    kept_w, report_w = expand_task("write", rows["write"], _seeds()["write"],
                                   FakeLLM(good_reply), n=4, seed=0, modes=["observation"])
    assert report_w.kept == 4 and all(r["gold"]["entities"] for r in kept_w)
    assert all(r["completion"] == row["completion"] for r in kept_w for row in rows["write"]
               if expand.base_id(row) == r["gold"]["base"])


def test_expansion_rejects_a_wrong_but_wellformed_action(episode_rows_small):
    rows, _ = episode_rows_small
    wrong = FakeLLM(lambda m: "<recall>\nquery: the weather in kashtiro\n</recall>")
    kept, report = expand_task("ask", rows["ask"], _seeds()["ask"], wrong, n=3, seed=0,
                               modes=["completion"])
    assert kept == [] and report.reasons == {"missing_subject": 3}
    lost = FakeLLM(lambda m: "A completely different sentence.")
    _, report = expand_task("write", rows["write"], _seeds()["write"], lost, n=2, seed=0,
                            modes=["observation"])
    assert report.reasons == {"lost_entities": 2}
    gold_fact = "On rainy turns, the purple glarb eats only the stone."
    row = {"prompt": [{"role": "user", "content": "q"}], "task": "ask", "game_seed": 0,
           "completion": [{"role": "assistant", "content": "<recall>\nquery: x\n</recall>"}],
           "gold": {"memory_facts": [gold_fact,
                                     "On sunny turns, the purple glarb eats only the copper."],
                    "gold_node_text": gold_fact, "entities": ["purple glarb", "rainy"]}}
    sunny = "<recall>\nquery: purple glarb copper\n</recall>"
    assert expand.check_completion("ask", sunny, row, recall_k=1) == (None, "recall_miss")
    rainy = "<recall>\nquery: purple glarb when rainy\n</recall>"
    assert expand.check_completion("ask", rainy, row, recall_k=1)[1] is None
    stray = "<recall>\nquery: purple glarb when rainy\nquery: dappled snoorb rainy\n</recall>"
    assert expand.check_completion("ask", stray, row) == (None, "missing_subject")
    foggy = "<recall>\nquery: purple glarb when rainy\nquery: purple glarb foggy\n</recall>"
    assert expand.check_completion("ask", foggy, row) == (None, "wrong_condition")
    update = "<engram>\nupdate semantic 0.9: " + gold_fact + "\n</engram>"
    add_row = {**row, "task": "write", "gold": {"ops": [{"op": "add", "text": gold_fact}]}}
    assert expand.check_completion("write", update, add_row) == (None, "ops_mismatch")


def test_expansion_is_deterministic_and_seeds_each_call(episode_rows_small):
    rows, _ = episode_rows_small
    llm_a, llm_b = FakeLLM(good_reply), FakeLLM(good_reply)
    a, _ = expand_task("ask", rows["ask"], _seeds()["ask"], llm_a, n=4, seed=3)
    b, _ = expand_task("ask", rows["ask"], _seeds()["ask"], llm_b, n=4, seed=3)
    assert a == b and llm_a.calls == llm_b.calls
    assert len({kw["seed"] for _, kw in llm_a.calls}) == 4
    assert all(kw["temperature"] > 0 for _, kw in llm_a.calls)


# ----- the whole run -----------------------------------------------------------------------


def test_synthesize_writes_valid_disjoint_splits(built):
    result, cfg, out = built
    seeds = {}
    for task in TASKS:
        for split in SPLITS:
            rows, report = load_jsonl(out / task / f"{split}.jsonl", task)
            assert rows and report.skipped == 0, (task, split)
            assert len(rows) == result.counts[task][split]
            seeds[(task, split)] = {(r["gold"].get("source", "game"), r["game_seed"])
                                    for r in rows}
        assert not seeds[(task, "train")] & seeds[(task, "val")]
        assert not seeds[(task, "train")] & seeds[(task, "test")]
        assert not seeds[(task, "val")] & seeds[(task, "test")]
        games = {s for src, s in seeds[(task, "val")] if src == "game"}
        assert games <= set(cfg.resolved().split_seeds()["val"])
        if task != "answer":  # one model for every task: the persona rows are in
            assert {src for src, _ in seeds[(task, "train")]} == {"game", "persona"}
            assert {src for src, _ in seeds[(task, "test")]} == {"game"}
    origins = {r["gold"]["origin"] for r in result.rows["ask"]["train"]}
    assert origins == {"chain", "expanded", "seed", "conversation"}
    assert result.expansion.kept > 0
    assert json.dumps(result.metrics())


def test_synthesize_is_deterministic(built, tmp_path):
    result, cfg, _ = built
    again = synthesize(cfg, llm=FakeLLM(good_reply), out_dir=tmp_path)
    assert again.hashes == result.hashes
    other = synthesize(SynthConfig(**{**TINY, "seed": 1}), llm=FakeLLM(good_reply),
                       out_dir=tmp_path)
    assert other.hashes["ask"]["train"] != result.hashes["ask"]["train"]


def test_config_smoke_shrinks_sizes_only():
    cfg = SynthConfig(smoke=True)
    small = cfg.resolved()
    assert small.n_train_games <= 3 and small.n_expansions <= 1
    assert (small.embedder, small.expansion_llm, small.seed) == (cfg.embedder, cfg.expansion_llm,
                                                                 cfg.seed)
    assert SynthConfig().resolved() == SynthConfig()
    seeds = SynthConfig().split_seeds()
    assert len(set(seeds["train"]) | set(seeds["val"]) | set(seeds["test"])) == sum(
        map(len, seeds.values()))
    assert max(seeds["test"]) < 20_000 and min(seeds["train"]) >= 1000  # away from eval seeds
    with pytest.raises(Exception, match="unknown expand"):
        SynthConfig(expand_tasks=["dance"])
    with pytest.raises(Exception, match="write_facts_first"):
        SynthConfig(write_facts_first=["game"])


def test_facts_first_keeps_a_source_s_fact_rows_ahead_of_the_caps():
    from mags_lib.synth.build import _cap_none, facts_first

    rows = [{"gold": {"source": src, "ops": [1] if fact else []}, "n": i}
            for i, (src, fact) in enumerate([("persona", True), ("locomo", False)] * 6
                                            + [("locomo", True)] * 3)]
    head = facts_first(rows, ["locomo"])
    assert [r["n"] for r in head[:3]] == [12, 13, 14]  # LoCoMo's facts first, in order
    assert sorted(r["n"] for r in head) == list(range(15))  # nothing lost, nothing repeated
    assert facts_first(rows, []) == rows
    kept = _cap_none(head, 0.5, Counter(), cap=8)[:8]
    assert sum(r["gold"]["source"] == "locomo" and bool(r["gold"]["ops"]) for r in kept) == 3


@pytest.mark.slow
def test_expansion_with_the_embedded_llm_never_raises(embedded_llm, episode_rows_small):
    rows, _ = episode_rows_small
    kept, report = expand_task("ask", rows["ask"], _seeds()["ask"], embedded_llm, n=1, seed=0,
                               max_tokens=48)
    assert report.tried == 1 == report.kept + report.rejected
    assert all(row_problem(r, "ask") is None for r in kept)


def test_write_rows_carry_the_outcome_rewards_memory_and_probes(episode_rows_small):
    """memory_before is what a perfect memory held before the turn; the probes ask about every
    rule known after it (the turn's own first), in training phrasings only, and name the item
    the memory should give and the items of older versions."""
    from mags_lib.game.phrasing import DECISIONS
    from mags_lib.game.senseless import parse_rule

    rows, _ = episode_rows_small
    heldout = [re.compile(re.sub(r"\\{[a-zA-Z]+\\}", ".+", re.escape(t)) + "$")
               for t in DECISIONS["heldout"]]
    for r in rows["write"]:
        g = r["gold"]
        assert {f["block"] for f in g["memory_before"]} <= {"semantic", "episodic"}
        assert g["probes"], g["observation"]
        for p in g["probes"]:
            assert p["creature"] in p["question"] and p["condition"] in p["question"].lower()
            assert p["item"] not in p["stale"]
            assert not any(h.match(p["question"]) for h in heldout), p["question"]
        if g["op"] in ("add", "update"):  # the turn's own rule is asked first, with its item
            rule = parse_rule(g["ops"][0]["text"]) if g["ops"] else None
            if rule is not None:
                assert (g["probes"][0]["creature"], g["probes"][0]["item"]) == (rule.creature,
                                                                                rule.item)
        if g["op"] == "update" and g["key"] and g["imperfect"] != "garbled":
            creature, condition = g["key"].split("|")
            own = [p for p in g["probes"] if (p["creature"], p["condition"]) == (creature,
                                                                                 condition)]
            assert own and own[0]["stale"], "a changed rule's probe names its old item"


def test_write_rows_show_the_look_alike_rules_the_loops_recall_would(episode_rows_small):
    """A first sight is an `add` even when memory already shows the same creature's rule for
    another condition: the write rows must show such look-alikes as the loop's recall does
    (otherwise a model learns 'a similar line is shown, so update', which superseded the wrong
    rule in play). Also: SynthConfig rejects a share outside [0, 1]."""
    from mags_lib.game.senseless import parse_rule

    rows, cfg = episode_rows_small
    adds = [r for r in rows["write"] if r["gold"]["op"] == "add" and r["gold"]["key"]]
    shown_alike = tried = 0
    for r in adds:
        creature, condition = r["gold"]["key"].split("|")
        lines = [ln[2:] for ln in r["prompt"][-1]["content"].splitlines() if ln.startswith("- ")]
        known = [parse_rule(f["text"]) for f in r["gold"]["memory_before"]]
        alike = [k for k in known if k is not None and (k.creature == creature
                                                         or k.condition == condition)]
        if not alike:
            continue
        tried += 1
        rules = [parse_rule(ln) for ln in lines]
        shown_alike += any(k is not None and (k.creature == creature or k.condition == condition)
                           for k in rules)
        assert all(k is None or (k.creature, k.condition) != (creature, condition)
                   for k in rules), "a first sight must not show the rule itself"
    assert tried >= 5 and shown_alike / tried >= 0.7, (shown_alike, tried)
    with pytest.raises(Exception, match="write_context_nearest"):
        SynthConfig(write_context_nearest=1.5)


def test_heldout_write_rows_are_in_heldout_phrasings_with_the_loops_own_prompt():
    """Notebook 03 judges the write model on rows it builds from held-out phrasings: every op
    present, at most n per op, the loop's play messages, and a held-out sentence in most
    rule-bearing observations (distractors and bare verdicts have no phrasing)."""
    from mags_lib.agents.role_prompts import play_write_messages
    from mags_lib.game import phrasing as ph
    from mags_lib.synth.chains import heldout_write_rows

    pattern = [re.compile(".+?".join(re.escape(p) for p in re.split(r"\{[a-zA-Z_]+\}", t)))
               for t in ph.all_templates("heldout")]
    cfg = SynthConfig(episode_length=120)
    rows = heldout_write_rows([20_001, 20_002], cfg, n_per_op=6)
    ops = [r["gold"]["op"] for r in rows]
    assert sorted(set(ops)) == ["add", "none", "update"] and max(map(ops.count, set(ops))) <= 6
    for r in rows:
        g = r["gold"]
        assert r["prompt"] == play_write_messages(g["observation"], g["memory_shown"])
        assert g["phrasings"] == "heldout"
    ruled = [r for r in rows if r["gold"]["op"] != "none"]
    held = [r for r in ruled if any(p.search(r["gold"]["observation"]) for p in pattern)]
    assert len(held) >= 0.8 * len(ruled), [r["gold"]["observation"] for r in ruled][:5]
    assert rows == heldout_write_rows([20_001, 20_002], cfg, n_per_op=6)  # deterministic


def test_imperfect_memory_rows_ask_the_writer_to_repair_what_memory_holds(episode_rows_small):
    """A share of write rows about a known rule show it missing (gold add, the rule absent from
    the prompt), stale or garbled (gold update, the wrong version shown in place of the right
    one); the outcome reward's memory holds the same imperfection; share 0 gives none."""
    from mags_lib.synth.chains import garble

    rows, cfg = episode_rows_small
    seen = {}
    for r in rows["write"]:
        g = r["gold"]
        if not g["imperfect"]:
            continue
        seen[g["imperfect"]] = seen.get(g["imperfect"], 0) + 1
        right = g["ops"][0]["text"]
        texts = [f["text"] for f in g["memory_before"]]
        assert right not in g["memory_shown"] and right not in texts, g
        if g["imperfect"] == "missing":
            assert g["op"] == "add" and g["memory_edit"]["add"] == []
        else:
            assert g["op"] == "update"
            wrong = g["memory_edit"]["add"]
            assert len(wrong) == 1 and wrong[0] in g["memory_shown"] and wrong[0] in texts
    assert set(seen) == {"missing", "stale", "garbled"}, seen
    assert garble("no rule here", random.Random(0)) is None
    plain = SynthConfig(surfaces=["fixed"], imperfect_memory_share=0.0)
    rows0 = episode_rows(generate_episode(game_config(plain, 12_345, 1)), plain)[0]
    assert not any(r["gold"]["imperfect"] for r in rows0["write"])
    with pytest.raises(Exception, match="imperfect_memory_share"):
        SynthConfig(imperfect_memory_share=-0.1)


@pytest.mark.parametrize("surface", ["fixed", "varied"])
def test_reframed_rule_changes_must_be_read_from_memory(surface):
    """reframe_update_share re-frames announced rule changes as first sights or added rules of
    the training bank: the op stays update, the rule sentence is kept, no change frame is left,
    the old version is still among the memory lines shown, and share 0 leaves every row as it
    was. Held-out games are never re-framed (their rows judge the writer)."""
    from mags_lib.game import phrasing
    from mags_lib.synth.chains import heldout_write_rows

    on = SynthConfig(surfaces=[surface], reframe_update_share=1.0, writer_frame_share=0.0)
    off = SynthConfig(surfaces=[surface], writer_frame_share=0.0)
    episode = generate_episode(game_config(on, 4_242, 0))
    rows_on = episode_rows(episode, on)[0]["write"]
    rows_off = episode_rows(episode, off)[0]["write"]
    assert [r["gold"]["op"] for r in rows_on] == [r["gold"]["op"] for r in rows_off]
    changed = 0
    for a, b in zip(rows_on, rows_off, strict=True):
        ga, gb = a["gold"], b["gold"]
        assert not gb["reframed"]
        if not ga["reframed"]:
            assert a == b
            continue
        changed += 1
        assert ga["op"] == "update" and ga["kind"] == "announce", ga
        assert phrasing.unframe(gb["observation"], "change", "train") is not None
        assert phrasing.unframe(ga["observation"], "change", "train") is None, ga["observation"]
        rule = phrasing.unframe(gb["observation"], "change", "train")
        assert rule in ga["observation"] and ga["ops"] == gb["ops"]
        new = parse_rule(ga["ops"][0]["text"])
        old = [r for r in map(parse_rule, ga["memory_shown"]) if r is not None
               and (r.creature, r.condition) == (new.creature, new.condition)]
        assert [r.item for r in old] != [] and new.item not in [r.item for r in old], ga
    n_updates = sum(r["gold"]["op"] == "update" and r["gold"]["kind"] == "announce"
                    for r in rows_off)
    assert n_updates >= 3 and changed == n_updates, (changed, n_updates)
    held = heldout_write_rows([20_001], on, n_per_op=6)
    assert held and not any(r["gold"]["reframed"] for r in held)
    with pytest.raises(Exception, match="reframe_update_share"):
        SynthConfig(reframe_update_share=1.5)


def _paired_write_rows(on: SynthConfig, off: SynthConfig, seed: int) -> list[tuple[dict, dict]]:
    """The write rows of one training game under two configs, paired; its ask and answer rows
    must be the same under both."""
    episode = generate_episode(game_config(on, seed, 0))
    rows_on, rows_off = episode_rows(episode, on)[0], episode_rows(episode, off)[0]
    for task in ("ask", "answer"):
        assert rows_on[task] == rows_off[task]
    return list(zip(rows_on["write"], rows_off["write"], strict=True))


def test_writer_frames_keep_each_rows_kind_op_and_rule_and_change_nothing_else():
    """writer_frame_share puts a training game's announcements, in the write rows only, in a
    frame of the same kind from phrasing.WRITER_FRAMES: the op, the rule sentence, the memory's
    old version and every other row (ask and answer included) stay as they were; a change
    that names its old item names the right one; the fixed surface and held-out games are never
    re-framed; share 0 is the game's text."""
    from mags_lib.game import phrasing
    from mags_lib.synth.chains import FRAMES_OF_OP, heldout_write_rows

    on = SynthConfig(surfaces=["varied"], writer_frame_share=1.0)
    off = SynthConfig(surfaces=["varied"], writer_frame_share=0.0)
    framed = Counter()
    for a, b in _paired_write_rows(on, off, 4_242):
        ga, gb = a["gold"], b["gold"]
        assert not gb["writer_frame"] and ga["ops"] == gb["ops"] and ga["op"] == gb["op"]
        if not ga["writer_frame"]:
            assert a == b
            continue
        framed[ga["op"]] += 1
        assert ga["kind"] == "announce" and ga["observation"] != gb["observation"]
        hows = FRAMES_OF_OP[ga["op"]]
        rule = next(r for h in hows if (r := phrasing.unframe(gb["observation"], h, "train")))
        assert rule in ga["observation"]
        matches = [m for h in hows for f in phrasing.WRITER_FRAMES[h]
                   if (m := re.fullmatch(re.escape(f).replace(re.escape("{rule}"), ".+")
                                         .replace(re.escape("{old}"), "(?P<old>[a-z]+)"),
                                         ga["observation"]))]
        assert matches, ga["observation"]
        if ga["op"] == "update":
            new = parse_rule(ga["ops"][0]["text"])
            old = [r for r in map(parse_rule, ga["memory_shown"]) if r is not None
                   and (r.creature, r.condition) == (new.creature, new.condition)]
            assert old and new.item not in [r.item for r in old], ga
            named = [m["old"] for m in matches if "old" in m.groupdict()]
            assert all(n == old[0].item for n in named), (named, ga["observation"])
            framed["names the old item"] += bool(named)
    assert framed["update"] >= 3 and framed["add"] >= 3 and framed["names the old item"], framed
    fixed = SynthConfig(surfaces=["fixed"], writer_frame_share=1.0)
    rows = episode_rows(generate_episode(game_config(fixed, 4_242, 0)), fixed)[0]["write"]
    assert rows and not any(r["gold"]["writer_frame"] for r in rows)
    held = heldout_write_rows([20_001], on, n_per_op=6)
    assert held and not any(r["gold"]["writer_frame"] for r in held)
    with pytest.raises(Exception, match="writer_frame_share"):
        SynthConfig(writer_frame_share=-0.5)


def test_writer_contrast_adds_a_lookalike_and_keeps_the_gold_and_every_other_row():
    """writer_contrast_share puts a look-alike (phrasing.WRITER_LOOKALIKES: an invented creature
    no rule is about, the rule's condition, its item or the item it replaces) beside a training
    game's announcements, before or after the game's text, and in place of its distractors;
    the gold (ops, op, kind) and every ask and answer row stay as they were; a held-out game and
    share 0 are never contrasted; a share outside [0, 1] is refused."""
    from mags_lib.game import phrasing
    from mags_lib.synth.chains import heldout_write_rows

    on = SynthConfig(surfaces=["varied"], writer_contrast_share=1.0)
    off = SynthConfig(surfaces=["varied"])
    episode = generate_episode(game_config(on, 4_242, 0))
    game_nouns = {c.split()[-1] for c in episode.world.creatures}
    patterns = [re.compile(re.escape(t).replace(re.escape("{d}"), r"(?P<d>[a-z]+ [a-z]+)")
                           .replace(re.escape("{w}"), "(?P<w>[a-z]+)")
                           .replace(re.escape("{i}"), "(?P<i>[a-z]+)"))
                for t in phrasing.WRITER_LOOKALIKES]
    seen = Counter()
    pairs = _paired_write_rows(on, off, 4_242)
    for a, b in pairs:
        ga, gb = a["gold"], b["gold"]
        assert "contrast" not in gb  # off: no key, the rows as they were before the option
        assert (ga["ops"], ga["op"], ga["kind"], a["completion"]) == \
            (gb["ops"], gb["op"], gb["kind"], b["completion"])
        if not ga["contrast"]:
            assert ga["observation"] == gb["observation"]
            continue
        seen[ga["kind"]] += 1
        obs = ga["observation"]
        if ga["kind"] == "announce":
            assert obs.startswith(gb["observation"] + " ") or obs.endswith(" " + gb["observation"])
            rest = obs.replace(gb["observation"], "").strip()
            rule = parse_rule(ga["ops"][0]["text"]) if ga["ops"] else None
            seen["before" if obs.endswith(gb["observation"]) else "after"] += 1
        else:
            assert ga["kind"] == "distractor" and ga["op"] == "none"
            rest, rule = obs, None
        m = next((m for p in patterns if (m := p.fullmatch(rest))), None)
        assert m, rest
        assert m["d"].split()[-1] not in game_nouns, m["d"]
        if rule is not None:
            assert m["w"] == rule.condition
    assert seen["announce"] >= 10 and seen["distractor"] >= 5, seen
    assert seen["before"] and seen["after"], seen
    held = heldout_write_rows([20_001], on, n_per_op=6)
    assert held and not any(r["gold"].get("contrast") for r in held)
    assert not any("contrast" in b["gold"] for _, b in pairs)
    with pytest.raises(Exception, match="writer_contrast_share"):
        SynthConfig(writer_contrast_share=1.5)


def test_write_splits_keep_at_most_the_none_share(built):
    """The 'nothing to store' cap holds among the rows kept, not only in the candidate pool
    (whose head, which selection keeps, ran to 46% none)."""
    _, cfg, out = built
    for split in SPLITS:
        rows, _ = load_jsonl(out / "write" / f"{split}.jsonl", "write")
        chain = [r for r in rows if r["gold"]["origin"] == "chain"]
        none = sum(not r["gold"]["ops"] for r in chain)
        assert chain and none <= cfg.max_none_share * len(chain) + 1, (split, none, len(chain))


def test_the_outcome_reward_pays_the_gold_repair_of_an_imperfect_memory(episode_rows_small):
    """On rows whose memory is missing, stale or garbled, the outcome reward (which applies the
    write to the row's own imperfect memory) pays the gold add / update more than writing
    nothing, on average per imperfection: a reward that preferred the empty block there would
    teach the writer to leave the memory broken."""
    from mags_lib.objectives.outcome import write_outcome_reward

    rows, _ = episode_rows_small
    by_mode: dict[str, list[tuple[float, float]]] = {}
    for r in rows["write"]:
        g = r["gold"]
        if g["imperfect"]:
            gold, empty = write_outcome_reward([r["completion"][0]["content"], NOTHING_TO_STORE],
                                               gold=[g, g], embedder="hashing")
            by_mode.setdefault(g["imperfect"], []).append((gold, empty))
    assert set(by_mode) == {"missing", "stale", "garbled"}
    for mode, pairs in by_mode.items():
        gold = sum(p[0] for p in pairs) / len(pairs)
        empty = sum(p[1] for p in pairs) / len(pairs)
        assert gold > empty, (mode, gold, empty)
