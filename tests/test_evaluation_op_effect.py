"""The op a write carries out in a memory that holds the prompt's lines, beside the op chosen."""

from __future__ import annotations

from mags_lib.evaluation.op_effect import effect_table, op_effect

SHOWN = ["Ana lives in Porto.", "Ana drives a Kia.", "Felix works as a pilot."]


def block(op: str, fact: str) -> str:
    return f"<engram>\n{op} semantic 0.9: {fact}\n</engram>"


def test_a_repeat_written_as_an_add_stores_nothing_new():
    assert op_effect(block("add", "Ana lives in Porto."), SHOWN) == "none"
    assert op_effect("<engram>\n</engram>", SHOWN) == "none"


def test_an_add_of_a_changed_value_retires_the_old_one_as_an_update_would():
    assert op_effect(block("add", "Ana lives in Lisbon."), SHOWN) == "update"
    assert op_effect(block("update", "Ana lives in Lisbon."), SHOWN) == "update"


def test_a_new_fact_is_an_add_and_an_unparsed_block_changes_nothing():
    assert op_effect(block("add", "Ana has a dog called Rex."), SHOWN) == "add"
    assert op_effect(block("update", "Ana has a dog called Rex."), []) == "add"  # nothing held
    assert op_effect("<engram>\nadd semantic", SHOWN) == "bad"


def test_the_memory_is_rolled_back_between_rows():
    # the first write stores Lisbon; were it kept, the second would merge into it
    assert op_effect(block("add", "Ana lives in Lisbon."), SHOWN) == "update"
    assert op_effect(block("add", "Ana lives in Lisbon."), SHOWN) == "update"


def test_the_table_scores_effects_against_the_gold_ops():
    replies = [block("add", "Ana lives in Lisbon."),      # gold update: carried out as one
               block("add", "Ana lives in Porto."),       # gold none: merged
               block("add", "Ana has a dog called Rex.")]  # gold add
    t = effect_table(replies, [SHOWN] * 3, ["update", "none", "add"])
    assert t["effects"] == ["update", "none", "add"]
    assert t["accuracy"] == 1.0 and t["n"] == 3
    assert t["confusion"]["update"] == {"update": 1}


def test_an_update_with_nothing_to_pair_retires_the_closest_fact_of_its_block():
    # `update_supersede_threshold` (0.5): a wrong update costs a held fact in play
    assert op_effect(block("update", "Ana has a dog called Rex."), SHOWN) == "update"


def test_retirements_are_right_only_for_a_gold_update_s_old_fact():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "op_margin_study", Path(__file__).parents[1] / "tools" / "op_margin_study.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    shown = ["Ana lives in Porto.", "Ana drives a Kia."]
    replies = [block("update", "Ana lives in Lisbon."),   # gold update: retires Porto, right
               block("update", "Ana drives a Fiat."),     # gold none: retires the Kia, wrong
               "<engram>\n</engram>"]
    t = effect_table(replies, [shown] * 3, ["update", "none", "none"],
                     gold_facts=["Ana lives in Lisbon.", None, None],
                     same_fact=study.same_fact)
    assert t["retired"] == [["Ana lives in Porto."], ["Ana drives a Kia."], []]
    assert t["retirements"] == {"right": 1, "wrong": 1}
    assert study.same_fact("Ana lives in Porto.", "Ana lives in Lisbon.")
    assert not study.same_fact("Ana lives in Porto.", "Felix lives in Lisbon.")


def test_memory_overrides_change_what_a_write_does():
    stray = block("update", "Ana has a dog called Rex.")
    assert op_effect(stray, SHOWN, memory={"update_shared_words": 1}) == "add"
    assert op_effect(block("update", "Ana lives in Lisbon."), SHOWN,
                     memory={"update_shared_words": 1}) == "update"  # the detector's pair
