"""mags_lib.train without a model: rows and JSONL, rewards, configs, the router, scoring."""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mags_lib.agents import router
from mags_lib.errors import MagsError
from mags_lib.objectives import data, rewards
from mags_lib.objectives.data import data_hash, load_jsonl, to_dataset, write_jsonl
from mags_lib.objectives.rewards import (
    REWARDS,
    answer_reward,
    budget_penalty,
    build_rewards,
    engram_reward,
    format_reward,
    guardrail_reward,
    ops_f1,
    recall_precision_reward,
    recall_reward,
)
from mags_lib.train import (
    backend,
    compare,
    evaluate,
    mining,
    roles,
    sft_loss,
)
from mags_lib.train.config import GRPOStageConfig, SFTStageConfig, TrainConfig

RECALL = "<recall>\nquery: what does the purple glarb eat on rainy turns\n</recall>"
ENGRAM = "<engram>\nupdate semantic 0.90: On rainy turns, the purple glarb eats only the stone.\n</engram>"
FACTS = ["On rainy turns, the purple glarb eats only the stone.",
         "The red fox sleeps at noon.", "Kashtiro lies by the sea.", "The blue moth fears lamps."]


def row(task="ask", **overrides) -> dict:
    completion = {"ask": RECALL, "write": ENGRAM, "answer": "<answer>B</answer>"}[task]
    gold = {"ask": {"memory_facts": FACTS, "gold_node_text": FACTS[0]},
            "write": {"ops": ENGRAM},
            "answer": {"answer": "B", "options": ["wait", "feed the stone"]}}[task]
    out = {"prompt": [{"role": "system", "content": "You keep a memory."},
                      {"role": "user", "content": "It rains. The purple glarb is hungry."}],
           "completion": [{"role": "assistant", "content": completion}],
           "task": task, "gold": gold, "game_seed": 3}
    out.update(overrides)
    return out


def as_messages(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


# ----- data --------------------------------------------------------------------------------


def test_load_jsonl_skips_and_reports_malformed_rows(tmp_path):
    good = [row("ask"), row("write"), row("answer")]
    bad_lines = [
        "{not json",
        json.dumps([1, 2]),
        json.dumps({k: v for k, v in row().items() if k != "gold"}),
        json.dumps(row(prompt="just a string")),
        json.dumps(row(completion=[{"role": "user", "content": "x"}])),
        json.dumps({**row(), "task": "dance"}),
        json.dumps(row(game_seed="7")),
        json.dumps(row(game_seed=True)),
        json.dumps(row(gold=["not", "a", "dict"])),
        json.dumps(row("ask", gold={"gold_node_text": "x"})),
        json.dumps(row("write", gold={"ops": None})),
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([json.dumps(good[0]), *bad_lines, "", json.dumps(good[1]),
                               json.dumps(good[2])]) + "\n")
    rows, report = load_jsonl(path)
    assert rows == good
    assert (report.read, report.kept, report.skipped) == (14, 3, 11)
    assert report.reasons == {"bad_json": 1, "not_an_object": 1, "missing:gold": 1,
                              "bad_type:prompt": 1, "bad_type:completion": 1,
                              "bad_value:task": 1, "bad_type:game_seed": 2, "bad_type:gold": 1,
                              "bad_gold:ask": 1, "bad_gold:write": 1}
    text = str(report)
    assert "skipped 11" in text and "bad_json: 1" in text and "line 2" in text
    ask_rows, ask_report = load_jsonl(path, task="ask")
    assert ask_rows == [good[0]] and ask_report.reasons["other_task"] == 2


def test_load_jsonl_missing_file_names_path_and_fix(tmp_path):
    with pytest.raises(MagsError) as err:
        load_jsonl(tmp_path / "nope.jsonl", task="ask")
    assert "nope.jsonl" in err.value.cause and "notebook 01" in err.value.fix


def test_write_jsonl_round_trips_atomically_and_hash_is_content_based(tmp_path):
    rows = [row("ask"), row("write")]
    path = write_jsonl(tmp_path / "sub" / "rows.jsonl", rows)
    assert load_jsonl(path)[0] == rows
    assert [p.name for p in path.parent.iterdir()] == ["rows.jsonl"]  # no temporary left
    assert data_hash(rows) == data_hash(json.loads(json.dumps(rows)))
    assert data_hash(rows) != data_hash(rows[::-1])


def test_to_dataset_has_one_schema_for_mixed_tasks():
    rows = [row("ask"), row("write"), row("answer")]
    grpo = to_dataset(rows, "grpo")
    assert grpo.column_names == ["prompt", "task", "gold", "game_seed"]
    assert [data.gold_of(g) for g in grpo["gold"]] == [r["gold"] for r in rows]
    assert to_dataset(rows, "sft").column_names == ["prompt", "completion"]


# ----- rewards -----------------------------------------------------------------------------


def test_every_reward_takes_strings_and_message_lists_alike():
    rows = [row("ask"), row("write"), row("answer")]
    texts = [r["completion"][0]["content"] for r in rows]
    kwargs = {"task": [r["task"] for r in rows], "gold": [json.dumps(r["gold"]) for r in rows],
              "game_seed": [3, 3, 3], "prompts": [r["prompt"] for r in rows]}
    for name, fn in REWARDS.items():
        plain, chat = fn(texts, **kwargs), fn([as_messages(t) for t in texts], **kwargs)
        assert plain == chat and len(plain) == 3, name


def test_format_reward_full_partial_and_none():
    half = "<recall>\nquery: glarb\nfetch: everything\n</recall>"
    unclosed = "<recall>\nquery: glarb\nquery: rain"
    scores = format_reward([RECALL, half, unclosed, "I will think.", ENGRAM], task=["ask"] * 5)
    assert scores[0] == 1.0 and scores[3] == 0.0 and scores[4] == 0.0
    assert 0.2 <= scores[2] < scores[1] < 1.0
    assert format_reward([ENGRAM, RECALL]) == [1.0, 1.0]  # no task column: either block
    assert format_reward(["<answer>B", "<answer></answer>"], task=["answer"] * 2) == [0.5, 0.0]


def test_recall_reward_uses_a_real_memory_built_once_per_fact_set():
    gold = row("ask")["gold"]
    off_topic = "<recall>\nquery: where does the fox sleep\n</recall>"
    many = "<recall>\n" + "query: fox\n" * 4 + "query: purple glarb rainy stone\n</recall>"
    scores = recall_reward([RECALL, off_topic, "nothing", many], gold=[gold] * 4, k=1)
    assert scores == [1.0, 0.0, 0.0, 0.0]  # the 5th query of `many` is past max_queries=4
    assert recall_reward([RECALL], gold=[{"ops": []}]) == [None]
    first = rewards.memory_for(FACTS)
    assert rewards.memory_for(list(FACTS)) is first
    before = len(first[0])
    recall_reward([RECALL] * 3, gold=[gold] * 3)
    assert len(first[0]) == before  # scoring never writes to the cached memory


def test_recall_precision_reward_pays_each_query_that_hits():
    gold = row("ask")["gold"]
    hit, miss = "query: purple glarb rainy stone", "query: where does the fox sleep"
    blocks = [f"<recall>\n{hit}\n</recall>", f"<recall>\n{hit}\n{miss}\n</recall>",
              f"<recall>\n{miss}\n{miss}\n{hit}\n{miss}\n</recall>", "no block"]
    precision = recall_precision_reward(blocks, gold=[gold] * 4, k=1)
    assert precision == [1.0, 0.5, 0.25, 0.0]
    # the block-level reward cannot tell the first three apart: that is what this term adds
    assert recall_reward(blocks, gold=[gold] * 4, k=1) == [1.0, 1.0, 1.0, 0.0]
    assert recall_precision_reward(blocks[:1], gold=[{"ops": []}]) == [None]
    assert REWARDS["recall_precision_reward"] is recall_precision_reward


def test_recall_reward_keeps_near_duplicate_distractors_apart_from_the_gold_fact():
    facts = ["On rainy turns the purple glarb eats stones.",
             "On sunny turns the purple glarb eats carrots.",
             "On rainy turns the red glarb eats moss."]
    memory, by_text, _ = rewards.memory_for(facts)
    assert all(memory.is_valid(i) for i in by_text.values()) and len(memory) == 3
    query = "<recall>\nquery: what does the purple glarb eat on rainy turns\n</recall>"
    gold = {"memory_facts": facts, "gold_node_text": facts[0]}
    assert recall_reward([query], gold=[gold], k=1) == [1.0]
    versions = [{"text": "The glarb eats moss.", "key": "diet"},
                {"text": "The glarb eats stones now.", "key": "diet"}, "The fox naps."]
    newest = {"memory_facts": versions, "gold_key": "diet", "gold_node_text": "The glarb eats stones now."}
    stale = {**newest, "gold_node_text": "The glarb eats moss.", "gold_key": None}
    ask = "<recall>\nquery: what does the glarb eat\n</recall>"
    assert recall_reward([ask, ask], gold=[newest, stale], k=3) == [1.0, 0.0]


def test_recall_reward_matches_by_node_id_or_text(monkeypatch):
    from mags_lib.memory.types import Hit

    class FakeMemory:
        def recall(self, query, k=10, learn=True):
            assert learn is False
            return [Hit(node_id=7, text="unrelated", score=1.0, block="semantic")] \
                if "glarb" in query else []

    monkeypatch.setattr(rewards, "memory_for",
                        lambda facts, embedder="hashing": (FakeMemory(), {"gold": 7}, {}))
    gold = {"memory_facts": ["x"], "gold_node_text": "gold"}
    assert recall_reward([RECALL, "<recall>\nquery: fox\n</recall>"], gold=[gold] * 2) == [1.0, 0.0]


def test_engram_reward_credits_ops_and_supersede_choice():
    gold = {"ops": [{"op": "update", "text": "On rainy turns the glarb eats stones."},
                    {"op": "link", "text": "glarb -> stone"}]}
    both = ("<engram>\nupdate semantic 0.9: on rainy turns the glarb eats stones\n"
            "link: glarb -> stone\n</engram>")
    as_add = "<engram>\nadd semantic 0.9: On rainy turns the glarb eats stones.\n</engram>"
    extra = both.replace("</engram>", "forget: the fox\n</engram>")
    got = engram_reward([both, as_add, extra, "<engram>\n</engram>", RECALL], gold=[gold] * 5)
    assert got[0] == 1.0 and got[3] == 0.0 and got[4] == 0.0
    # an add where the gold updates earns nothing: the right text under the wrong op is wrong
    assert got[1] == 0.0 == ops_f1([("add", "x")], [("update", "x"), ("link", "y")])
    assert 0 < got[2] < got[0]
    half = engram_reward([as_add], gold=[gold], swap_credit=0.5)[0]  # the old partial credit
    assert half == pytest.approx(ops_f1([("add", "x")], [("update", "x"), ("link", "y")],
                                        swap_credit=0.5)) and 0 < half < got[2]
    assert engram_reward(["<engram>\n</engram>"], gold=[{"ops": []}]) == [1.0]
    assert engram_reward([ENGRAM], gold=[{"answer": "B"}]) == [None]


def test_budget_guardrail_and_answer_rewards():
    ops = "<engram>\n" + "".join(f"forget: fact {i}\n" for i in range(7)) + "</engram>"
    assert budget_penalty([ops, ENGRAM], max_ops=4, cost=0.5) == [-1.0, 0.0]
    assert guardrail_reward([RECALL, "", "y" * 700]) == [1.0, 0.0, pytest.approx(2 / 3)]
    gold = {"answer": "feed the stone", "options": ["wait", "feed the stone"]}
    got = answer_reward(["<answer>B</answer>", "<answer>b)</answer>", "<answer>A</answer>",
                         "B"], gold=[gold] * 4)
    assert got == [1.0, 1.0, 0.0, 0.0]


def test_build_rewards_binds_params_and_rejects_unknown_names():
    fn = build_rewards(["budget_penalty"], {"budget_penalty": {"max_queries": 0}})[0]
    assert fn([RECALL]) == [-0.25]
    with pytest.raises(MagsError) as err:
        build_rewards(["format_reward", "vibes_reward"])
    assert "vibes_reward" in err.value.cause and "format_reward" in err.value.fix


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["ask", "write", "answer", None]))
def test_rewards_are_bounded_and_never_raise(text, task):
    assert 0.0 <= format_reward([text], task=[task])[0] <= 1.0
    assert 0.0 <= guardrail_reward([text])[0] <= 1.0
    assert -1.0 <= budget_penalty([text])[0] <= 0.0
    score = engram_reward([text], gold=[{"ops": ENGRAM}])[0]
    assert 0.0 <= score <= 1.0


def test_unsloth_choice_falls_back_with_a_warning_only_when_asked_for():
    with pytest.warns(UserWarning, match="Unsloth was asked for"):
        assert backend.choose_backend(True, cuda=False, unsloth_installed=True)[0] == "peft"
    with pytest.warns(UserWarning, match="unsloth not installed"):
        assert backend.choose_backend(True, cuda=True, unsloth_installed=False)[0] == "peft"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert backend.choose_backend("auto", cuda=True, unsloth_installed=False)[0] == "peft"
        assert backend.choose_backend(False, cuda=True, unsloth_installed=True)[0] == "peft"
        assert backend.choose_backend(True, cuda=True, unsloth_installed=True)[0] == "unsloth"


# ----- config, router, scoring -------------------------------------------------------------


def test_smoke_shrinks_sizes_only():
    for cfg in (SFTStageConfig(), GRPOStageConfig()):
        small = replace_smoke(cfg)
        changed = {k for k, v in asdict(small).items() if asdict(cfg)[k] != v}
        assert changed <= {"smoke", "max_steps", "per_device_train_batch_size", "max_train_rows",
                           "max_eval_rows", "eval_max_tokens", "max_length", "num_generations",
                           "max_completion_length", "gradient_accumulation_steps"}
        assert small.max_steps <= 3 and small.max_train_rows <= 16
    grpo = replace_smoke(GRPOStageConfig())
    assert grpo.per_device_train_batch_size % grpo.num_generations == 0
    assert SFTStageConfig().resolved() == SFTStageConfig()
    json.dumps(TrainConfig().to_dict())
    assert len(GRPOStageConfig().reward_names) == len(GRPOStageConfig().reward_weights)
    assert str(SFTStageConfig(name="x").out_dir).endswith("models/x")


def replace_smoke(cfg):
    from dataclasses import replace

    return replace(cfg, smoke=True).resolved()


def test_router_rules_and_learned_hook_with_fallback():
    assert router.route({"kind": "decision"}) == ("ask", "answer")
    assert router.route("information") == ("write",)
    assert router.route({"kind": "weather report"}) == router.DEFAULT_ROUTE

    class FakeLLM:
        def __init__(self, text):
            self.text = text

        def chat(self, messages, **kwargs):
            from mags_lib.llm import Completion

            return Completion(text=self.text)

    obs = {"kind": "information", "text": "The glarb eats stones."}
    assert router.Router(FakeLLM("<route>answer</route>"))(obs) == ("answer",)
    assert router.Router(FakeLLM("<route>ask</route>"))(obs) == ("ask", "answer")
    assert router.Router(FakeLLM("no idea"))(obs) == ("write",)


def test_generate_and_score_with_a_fake_chat_model():
    class Echo:  # answers every prompt with its row's gold completion, or junk
        def __init__(self, outputs):
            self.outputs = iter(outputs)

        def chat(self, messages, grammar=None, **kwargs):
            from mags_lib.llm import Completion

            return Completion(text=next(self.outputs))

    rows = [row("ask")] * 4
    outputs = [RECALL, RECALL, "<recall>\nquery: fox\n</recall>", "garbage"]
    report = evaluate.generate_and_score(Echo(outputs), rows, kind="recall", n_samples=2,
                                         reward_params={"recall_reward": {"k": 1}})
    assert report["n"] == 4 and report["adherence"] == 0.75
    assert report["accuracy_name"] == "recall_hit_rate" and report["accuracy"] == 0.5
    # 4 facts: at depth 5 the fox query finds the glarb rule too; garbage has no query
    assert report["hit_at"] == {1: 0.5, 3: 0.75, 5: 0.75}
    assert report["query_hit_at"] == {1: 2 / 3, 3: 1.0, 5: 1.0}
    assert report["queries_per_row"] == 0.75
    # the depth-1 hits per row, kept for a paired comparison of stages (`compare.py`)
    hits = report["row_hits_at_1"]
    assert len(hits) == 4 and sum(any(h) for h in hits) == 2 and hits[3] == []
    assert len(report["row_games"]) == 4
    assert len(report["samples"]) == 2 and report["samples"][0]["task_score"] == 1.0
    write = evaluate.generate_and_score(Echo([ENGRAM]), [row("write")], kind="write")
    assert write["accuracy"] == 1.0 and write["accuracy_name"] == "engram_f1"
    assert write["n_facts"] == 1 and write["fact_exact"] == 1.0  # the gold sentence itself
    garbled = ENGRAM.replace("glarb", "stone", 1)
    assert garbled != ENGRAM
    write = evaluate.generate_and_score(Echo([garbled]), [row("write")], kind="write")
    assert write["accuracy"] > 0.5 and write["fact_exact"] == 0.0  # F1 pays; exact does not
    with pytest.raises(ValueError):
        evaluate.generate_and_score(Echo([]), rows, kind="poetry")


def test_mining_puts_the_rows_the_model_gets_wrong_first():
    class Scripted:  # greedy output per prompt, keyed by the user message
        def chat(self, messages, grammar=None, **kwargs):
            from mags_lib.llm import Completion

            return Completion(text=outputs[messages[-1]["content"]])

    half = "<recall>\nquery: purple glarb rainy\nquery: the sea\n</recall>"
    texts = [RECALL, half, RECALL, "garbage", RECALL, RECALL]
    rows = [row("ask", prompt=[{"role": "user", "content": f"turn {i}"}]) for i in range(6)]
    outputs = {f"turn {i}": t for i, t in enumerate(texts)}
    reward = {"recall_precision_reward": {"k": 1}}
    # 2 steps x 4 completions / 2 per prompt = 4 prompts: the two misses, then rows 0 and 2
    cfg = GRPOStageConfig(max_steps=2, per_device_train_batch_size=4, num_generations=2,
                          mine_candidates=5, reward_params=reward)
    picked, info = mining.mine_prompts(Scripted(), rows, cfg)
    assert [r["prompt"][0]["content"] for r in picked] == ["turn 1", "turn 3", "turn 0", "turn 2"]
    assert info["candidates"] == 5 and info["below_one"] == 2 and info["n"] == 4
    assert info["candidate_mean"] == pytest.approx((1 + 0.5 + 1 + 0 + 1) / 5)
    assert info["zero"] == 1 and info["picked_zero"] == 1
    # lowest first: the block whose every query misses (garbage, 0) before the half miss (0.5)
    lowest = replace(cfg, mine_lowest_first=True)
    picked, _ = mining.mine_prompts(Scripted(), rows, lowest)
    assert [r["prompt"][0]["content"] for r in picked] == ["turn 3", "turn 1", "turn 0", "turn 2"]
    off = GRPOStageConfig(mine_candidates=0)
    assert mining.mine_prompts(Scripted(), rows, off) == (rows, {"candidates": 0})
    assert GRPOStageConfig(mine_candidates=200, smoke=True).resolved().mine_candidates == 4
    assert roles.RoleTrainConfig(role="ask").stages()[1].mine_candidates == 400
    assert roles.RoleTrainConfig(role="ask").stages()[1].mine_lowest_first
    assert not roles.RoleTrainConfig(role="write").stages()[1].mine_lowest_first
    assert roles.RoleTrainConfig(role="write").stages()[1].mine_candidates == 0


def test_paired_gain_resamples_whole_groups_and_counts_who_is_ahead():
    # game "x": b fixes two misses; game "y": b loses one hit; game "z": a tie
    a = [(0.0, 1.0), (0.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0, 2.0), (2.0, 2.0), None]
    b = [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (0.0, 1.0), (1.0, 2.0), (1.0, 2.0), (1.0, 1.0)]
    groups = ["x", "x", "y", "y", "z", "z", "z"]
    g = compare.paired_gain(a, b, groups=groups, n_boot=4000)
    assert g["rows"] == 6  # the row a does not score is dropped from both
    assert (g["a"], g["b"]) == (5 / 8, 5 / 8) and g["gain"] == 0.0
    assert (g["rows_b_ahead"], g["rows_b_behind"]) == (2, 2)
    assert (g["groups"], g["groups_b_ahead"], g["groups_b_behind"]) == (3, 1, 2)
    assert g["resampled"] == "groups" and g["ci"][0] < 0 < g["ci"][1]
    # a resample of whole groups lies between all-y (a 2/2, b 1/2: -0.5) and all-x (+1.0);
    assert g["ci"][0] >= -0.5 - 1e-9 and g["ci"][1] <= 1.0 + 1e-9
    by_row = compare.paired_gain(a, b, n_boot=4000)
    assert by_row["resampled"] == "rows" and "groups" not in by_row
    per_query = compare.hits_to_pairs([[True, True], [False], [], None], per_query=True)
    assert per_query == [(2.0, 2.0), (0.0, 1.0), (0.0, 1.0), None]
    with pytest.raises(ValueError, match="one entry per row"):
        compare.paired_gain(a, b[:3])
    with pytest.raises(ValueError, match="no row"):
        compare.paired_gain([None], [(1.0, 1.0)])


def test_seed_spread_pools_val_and_test(tmp_path):
    """Notebook 07's pooling: both splits' saved outputs judged as one set of rows."""
    from mags_lib.train import seed_spread

    miss = "<recall>\nquery: the sea\n</recall>"
    rows = {"val": [row(game_seed=1), row(game_seed=2)], "test": [row(game_seed=3)]}
    saved = {"val": {"ask-sft": [miss, RECALL], "ask-grpo": [RECALL, RECALL]},
             "test": {"ask-sft": [RECALL], "ask-grpo": [miss]}}
    params = {"k": 1, "embedder": "hashing"}
    with pytest.raises(MagsError, match="judge the val split first"):
        seed_spread.pool_outputs(rows, params, tmp_path)
    for split, texts in saved.items():
        (tmp_path / f"grpo_seeds_{split}_outputs.json").write_text(
            json.dumps({"rows": len(rows[split]), "texts": texts}))
    seed_spread.pool_outputs(rows, params, tmp_path)
    out = json.loads((tmp_path / "grpo_seeds_pooled.json").read_text())
    assert out["rows"] == 3 and out["split"] == "val+test"
    assert out["models"]["ask-sft"]["hit_at"]["1"] == pytest.approx(2 / 3)
    block = out["vs_sft"]["ask-grpo"]["per_block"]
    assert (block["rows_b_ahead"], block["rows_b_behind"], block["groups"]) == (1, 1, 3)
    assert block["gain"] == 0.0
    assert "all 1 GRPO seeds" not in out["vs_sft"]  # one GRPO model: nothing to pool over
    # two GRPO seeds: also the recipe over both, each seed's rows paired with SFT's
    for split, texts in saved.items():
        texts["ask-grpo-seed1"] = [RECALL] * len(rows[split])
        (tmp_path / f"grpo_seeds_{split}_outputs.json").write_text(
            json.dumps({"rows": len(rows[split]), "texts": texts}))
    seed_spread.pool_outputs(rows, params, tmp_path)
    both = json.loads((tmp_path / "grpo_seeds_pooled.json").read_text())["vs_sft"]
    recipe = both["all 2 GRPO seeds"]["per_block"]
    assert (recipe["rows"], recipe["rows_b_ahead"], recipe["rows_b_behind"]) == (6, 2, 1)
    assert recipe["gain"] == pytest.approx(1 / 6) and recipe["groups"] == 3
    assert "| ask-grpo-seed1 |" in seed_spread.markdown(
        json.loads((tmp_path / "grpo_seeds_pooled.json").read_text()))
    # a model judged on one split only cannot be pooled
    (tmp_path / "grpo_seeds_test_outputs.json").write_text(
        json.dumps({"rows": 1, "texts": {"ask-sft": [RECALL]}}))
    with pytest.raises(MagsError, match="do not cover both splits"):
        seed_spread.pool_outputs(rows, params, tmp_path)


def test_seed_spread_refuses_bad_settings_and_a_missing_sft_model(tmp_path, monkeypatch):
    from mags_lib.train import seed_spread

    with pytest.raises(MagsError, match="split must be"):
        seed_spread.SeedSpreadConfig(split="train")
    with pytest.raises(MagsError, match="rows must be at least 1"):
        seed_spread.SeedSpreadConfig(rows=0)
    monkeypatch.setattr(seed_spread, "MODELS_DIR", tmp_path)
    with pytest.raises(MagsError, match="run notebook 02 first"):
        seed_spread.run_seed_spread(seed_spread.SeedSpreadConfig(), tmp_path)


def test_role_recipes_are_typed_and_defaults_live_in_the_stage_configs():
    """A recipe sets sizes and the few settings it changes; everything else is the stage
    configs' own default (one source), e.g. no role-level learning rate hides in a dict."""
    from dataclasses import fields as dc_fields

    from mags_lib.train.config import GRPOStageConfig, SFTStageConfig
    from mags_lib.train.roles import ROLE_RECIPES, ROLES, RoleRecipe, default_stages

    plain_grpo, plain_sft = GRPOStageConfig(), SFTStageConfig()
    shaped = {"name", "max_steps", "per_device_train_batch_size", "num_generations",
              "max_completion_length", "reward_names", "reward_weights"}
    for role in ROLES:
        recipe = ROLE_RECIPES[role]
        assert isinstance(recipe, RoleRecipe)
        sft, grpo = default_stages(role)
        assert sft.max_steps == recipe.sft_steps and grpo.max_steps == recipe.grpo_steps
        overridden = set(recipe.grpo_overrides()) | shaped
        for f in dc_fields(GRPOStageConfig):
            if f.name not in overridden:
                assert getattr(grpo, f.name) == getattr(plain_grpo, f.name), (role, f.name)
        assert sft.learning_rate == plain_sft.learning_rate
    assert default_stages("ask")[1].learning_rate == 1e-4
    assert default_stages("write")[1].learning_rate == plain_grpo.learning_rate == 5e-5


# ----- the SFT loss: supervised positions only, the decision token weighted --------------------


def test_completion_loss_is_the_plain_mean_at_weight_one_and_scales_one_token():
    """On the supervised positions `shifted_targets` picks, the loss at weight 1 is torch's mean
    cross-entropy of the full causal logits; at weight w only the decision token's gradient is
    w times larger (the copied tokens' are unchanged)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    newline = 7
    labels = torch.tensor([[-100, -100, 3, 4, newline, 5, 6, 2],      # op token at index 5
                           [-100, 3, newline, 9, 9, 9, -100, -100],    # at index 3 (padded)
                           [-100, -100, -100, 3, 4, 5, 6, 2]])         # no newline: plain
    logits = torch.randn(3, 8, 12)
    plain = F.cross_entropy(logits[:, :-1].reshape(-1, 12), labels[:, 1:].reshape(-1),
                            ignore_index=-100)
    mask, targets, is_decision = sft_loss.shifted_targets(labels, [newline])
    assert sft_loss.decision_positions(labels, [newline]).tolist() == [5, 3, -1]
    assert int(mask.sum()) == len(targets) == 16 and int(is_decision.sum()) == 2
    loss, stats = sft_loss.completion_loss(logits[:, :-1][mask], targets, is_decision, 1.0)
    assert torch.allclose(loss, plain)
    assert 0.0 <= stats["decision_accuracy"] <= 1.0 and stats["decision_loss"] > 0
    assert 0.0 <= stats["mean_token_accuracy"] <= 1.0 and stats["entropy"] > 0

    grads = {}
    for w in (1.0, 10.0):
        x = logits.clone().requires_grad_(True)
        sft_loss.completion_loss(x[:, :-1][mask], targets, is_decision, w)[0].backward()
        grads[w] = x.grad
    ratio = grads[10.0].abs().sum(-1) / grads[1.0].abs().sum(-1).clamp(min=1e-12)
    assert torch.allclose(ratio[0, 4], torch.tensor(10.0)) and torch.allclose(
        ratio[1, 2], torch.tensor(10.0))
    others = torch.ones_like(ratio, dtype=torch.bool)
    others[0, 4] = others[1, 2] = False
    assert torch.allclose(grads[10.0][others], grads[1.0][others])


def test_a_head_that_scales_or_caps_its_logits_is_not_run_on_a_subset():
    from types import SimpleNamespace

    assert sft_loss.head_is_plain(SimpleNamespace(config=SimpleNamespace(logit_scale=None)))
    assert not sft_loss.head_is_plain(SimpleNamespace(config=SimpleNamespace(logit_scale=0.5)))
    assert not sft_loss.head_is_plain(
        SimpleNamespace(config=SimpleNamespace(final_logit_softcapping=30.0)))


def test_a_recipe_passes_its_decision_weight_to_sft_and_only_the_writer_weighs_its_op():
    """The write role weighs its op token 10x (under the plain token mean its op was the seed's
    prior: journal, 2026-11-26 night); every other role trains with TRL's plain token mean, and
    a recipe's weight reaches the SFT stage whatever it is."""
    from dataclasses import replace as dc_replace

    from mags_lib.train.roles import ROLE_RECIPES, ROLES, default_stages

    for role in ROLES:
        assert default_stages(role)[0].decision_token_weight == (10.0 if role == "write" else 1.0)
    plain = dc_replace(ROLE_RECIPES["write"], sft_decision_weight=1.0)
    assert default_stages("write", plain)[0].decision_token_weight == 1.0
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(MagsError, match="decision_token_weight must be > 0"):
            sft_loss.completion_loss_trainer(bad, tokenizer=None)
