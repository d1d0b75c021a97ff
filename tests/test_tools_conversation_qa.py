"""The conversation QA tool (tools/conversation_qa.py) checks its JSON overrides before any
model loads, and names the flag and the fix; the op margin study's margin rule."""

import importlib.util
from pathlib import Path

import pytest

from mags_lib.agents.loop import LoopConfig
from mags_lib.configs import overridden
from mags_lib.memory import MemoryConfig

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


qa = _load("conversation_qa")
margin = _load("op_margin_study")


def test_overrides_merge_and_a_bad_one_exits_naming_the_flag_and_the_fields():
    check = lambda d: LoopConfig(**d)  # noqa: E731
    assert overridden({"query_k": 3}, "--loop", '{"none_margin": 0.5}', check, "x") == \
        {"query_k": 3, "none_margin": 0.5}
    for text, why in (('{"bogus": 1}', "bogus"), ("[1]", "not a JSON object"),
                      ("{nope", "Expecting"), ('{"none_margin": -1}', "none_margin")):
        with pytest.raises(SystemExit) as exit_:
            overridden({}, "--loop", text, check, "LoopConfig fields")
        message = str(exit_.value)
        assert message.startswith("error: --loop") and why in message
        assert "LoopConfig fields" in message
    with pytest.raises(SystemExit, match="--memory"):
        overridden({}, "--memory", '{"nope": 1}', MemoryConfig.from_dict, "MemoryConfig")


def test_margin_tables_count_the_greedy_ops_and_move_only_towards_none():
    add, update = ("<engram>\nadd semantic 0.9: Ana lives in Porto.\n</engram>",
                   "<engram>\nupdate semantic 0.9: Ana lives in Lyon.\n</engram>")
    rows = [{"gold": "none", "reply": add, "scores": {"none": -1.0, "add": -0.5, "update": -5}},
            {"gold": "add", "reply": add, "scores": {"none": -3.0, "add": -0.1, "update": -4}},
            {"gold": "update", "reply": update,
             "scores": {"none": -0.9, "add": -6, "update": -0.4}}]
    greedy = margin.table(rows, None)
    assert greedy["op_accuracy"] == pytest.approx(2 / 3) and greedy["dropped"] == 0
    assert greedy["confusion"] == {"add": {"add": 1}, "none": {"add": 1},
                                   "update": {"update": 1}}
    at_one = margin.table(rows, 1.0)  # the first and the third turn to none, not the second
    assert at_one["confusion"] == {"add": {"add": 1}, "none": {"none": 1},
                                   "update": {"none": 1}}
    assert at_one["dropped"] == pytest.approx(1 / 2)
    assert margin.table(rows, 0.0)["op_accuracy"] == greedy["op_accuracy"]
