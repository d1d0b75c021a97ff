"""The task interface: every registered task gives episodes of its declared shape by split;
unknown names and splits are clear errors; a task of one's own plugs in by import path."""

from __future__ import annotations

import sys

import pytest

from mags_lib.errors import MagsError
from mags_lib.tasks.base import Dialogue, Env, Observation, Task
from mags_lib.tasks.registry import TASKS, get_task, register_task, task_names


@pytest.mark.parametrize("name", ["game", "persona", "locomo", "textworld"])
def test_every_builtin_task_speaks_the_interface(name):
    task = get_task(name)
    assert isinstance(task, Task) and task.name == name and "test" in task.splits


def test_the_game_gives_seeded_envs_whose_split_names_the_phrasing_bank():
    task = get_task("game", turns=30)
    dev, test = task.episodes("dev", 2), task.episodes("test", 1)
    assert all(isinstance(e, Env) for e in dev + test) and task.interactive
    assert [e.config.seed for e in dev] == [0, 1] and test[0].config.seed == 0
    assert {e.config.phrasings for e in dev} == {"heldout"} and test[0].config.phrasings == "test"
    first = dev[0].reset(0)
    assert isinstance(first, Observation) and first.text
    with pytest.raises(ValueError, match="not a train game seed"):
        task.config_for("train", 0)  # training games never share a seed with evaluation


def test_persona_conversations_are_dialogues_with_aligned_ids():
    task = get_task("persona")
    conv = task.episodes("dev", 1)[0]
    assert isinstance(conv, Dialogue) and not task.interactive
    stream, ids = conv.stream(), conv.stream_ids()
    assert len(stream) == len(ids) and ids[0] == "D1:1"
    assert stream[0].when and stream[0].text.startswith(f"[{stream[0].when}]")
    assert not any(o.legal_actions for o in stream)
    evidence = {e for q in conv.qa for e in q.evidence} | {e for f in conv.gold_facts
                                                          for e in f.evidence}
    assert evidence <= set(ids)
    assert task.episodes("dev", 1, offset=1)[0].sample_id != conv.sample_id


def test_locomo_is_split_by_conversation():
    task = get_task("locomo")
    assert task.ids("dev") == ("conv-43",) and set(task.ids("dev")) <= set(task.ids("train"))
    assert not set(task.ids("train")) & set(task.ids("test"))
    with pytest.raises(MagsError, match="not in the 'test' split"):
        task.episodes("test", ids=["conv-26"])
    if not task.available():
        pytest.skip("LoCoMo is not on this machine")
    conv = task.episodes("dev")[0]
    assert conv.sample_id == "conv-43" and len(conv.stream()) == len(conv.stream_ids())


def test_unknown_tasks_and_splits_name_the_fix():
    with pytest.raises(MagsError, match="(?s)unknown task 'chess'.*game, textworld, persona"):
        get_task("chess")
    with pytest.raises(MagsError, match="(?s)has no split 'val'.*train, dev, test"):
        get_task("persona").episodes("val", 1)
    with pytest.raises(MagsError, match="does not take"):
        get_task("locomo", turns=3)


def test_a_task_of_ones_own_plugs_in_by_import_path(tmp_path, monkeypatch):
    (tmp_path / "my_task.py").write_text(
        "from mags_lib.tasks.base import Observation\n"
        "class Echo:\n"
        "    name, interactive, splits = 'echo', False, ('dev',)\n"
        "    def __init__(self, word='hi'):\n"
        "        self.word = word\n"
        "    def episodes(self, split, n=None):\n"
        "        return [self.word] * (n or 1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(TASKS, "echo", "my_task:Echo")
    assert "echo" in task_names() and get_task("echo", word="yo").episodes("dev", 2) == ["yo"] * 2
    with pytest.raises(MagsError, match="names no class"):
        register_task("bad", "my_task")
    monkeypatch.setitem(TASKS, "gone", "no_such_module:Task")
    with pytest.raises(MagsError, match="cannot import no_such_module:Task"):
        get_task("gone")
    sys.modules.pop("my_task", None)
