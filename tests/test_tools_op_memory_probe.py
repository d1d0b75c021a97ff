"""The memory probe (tools/op_memory_probe.py): each judge row's twin changes the right op
through the memory alone, and the probe tells a writer that reads the memory from one that
reads only the turn's words."""

import importlib.util
import random
from pathlib import Path

import pytest

from mags_lib.agents.loop import OP_OPENINGS
from mags_lib.conversations import persona_phrases as P
from mags_lib.synth.conversation_rows import judge_memory_twin, persona_judge_rows, repeated_fact

_spec = importlib.util.spec_from_file_location(
    "op_memory_probe", Path(__file__).resolve().parents[1] / "tools" / "op_memory_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


@pytest.fixture(scope="module")
def rows():
    return persona_judge_rows("dev", 3)["write"]


def _said(gold):
    return gold["observation"].split("] ", 1)[-1].split(": ", 1)


def test_each_twin_keeps_the_words_and_its_memory_makes_the_other_op_right(rows):
    rng, kinds = random.Random(0), set()
    for r in rows:
        g = r["gold"]
        made = judge_memory_twin(g, rng)
        if made is None:
            continue
        memory, ops, _, kind = made
        kinds.add(kind)
        speaker, said = _said(g)
        if kind == "memory:update->add":
            assert g["op"] == "update" and ops[0]["op"] == "add"
            topic = P.fact_topic(ops[0]["text"])
            assert not [m for m in memory if P.fact_topic(m) == topic]
            assert len(memory) == len(g["memory_shown"]) - 1
        elif kind == "memory:none->add":
            assert g["op"] == "none" and ops[0]["op"] == "add"
            assert ops[0]["text"] in g["memory_shown"] and ops[0]["text"] not in memory
            assert repeated_fact(said, memory, speaker) is None
        else:
            assert kind == "memory:add->update"
            assert g["op"] == "add" and ops[0]["op"] == "update"
            attr, who, value = P.fact_value(ops[0]["text"])
            older = [m for m in memory if P.fact_topic(m) == (attr, who)]
            assert len(older) == 1 and P.fact_value(older[0])[2] != value
            assert len(memory) <= 3
    assert kinds == {"memory:update->add", "memory:none->add", "memory:add->update"}


def test_no_twin_for_small_talk_or_an_update_whose_old_fact_is_not_shown(rows):
    nothing = [r["gold"] for r in rows if r["gold"]["op"] == "none"]
    talk = [g for g in nothing if repeated_fact(_said(g)[1], g["memory_shown"], _said(g)[0]) is None]
    assert talk and len(talk) < len(nothing)  # small talk and repeats both occur
    for g in nothing:  # a row storing nothing has a twin exactly when it repeats a shown fact
        assert (judge_memory_twin(g, random.Random(0)) is None) == (g in talk)
    update = next(r["gold"] for r in rows if r["gold"]["op"] == "update")
    topic = P.fact_topic(update["ops"][0]["text"])
    hidden = {**update, "memory_shown": [m for m in update["memory_shown"]
                                         if P.fact_topic(m) != topic]}
    assert judge_memory_twin(hidden, random.Random(0)) is None


class _Writer:
    """Scores one op best: `reads_memory` False, the row's gold op whatever the memory; True,
    the gold op for the memory as shown and the twin's op for any other memory."""

    def __init__(self, rows, reads_memory):
        self.gold = {self.chat_prompt(r["prompt"]): r["gold"]["op"] for r in rows}
        self.by_obs = {r["gold"]["observation"]: r["gold"]["op"] for r in rows}
        self.reads_memory = reads_memory

    def chat_prompt(self, messages):
        return "\n".join(m["content"] for m in messages)

    def score(self, prompt, continuations):
        prompt = prompt.removesuffix("<engram>\n")
        if prompt in self.gold:
            op = self.gold[prompt]
        else:
            obs = next(o for o in self.by_obs if o in prompt)
            gold = self.by_obs[obs]
            op = gold if not self.reads_memory else ("update" if gold == "add" else "add")
        best = OP_OPENINGS[op]
        return [0.0 if c == best else -5.0 for c in continuations]


@pytest.mark.parametrize("reads_memory", [False, True])
def test_probe_tells_a_memory_reader_from_a_words_only_writer(rows, reads_memory):
    got = probe.probe(_Writer(rows, reads_memory), rows, random.Random(0), examples=5)
    assert set(got["table"]) == set(probe.KINDS)
    for t in got["table"].values():
        assert t["n"] > 0 and t["right_as_shown"] == t["n"]
        assert t["moved"] == t["right_changed"] == (t["n"] if reads_memory else 0)
    assert len(got["examples"]) == 5
    assert sum(got["cells"].values()) == sum(t["n"] for t in got["table"].values())


def test_persona_judge_sets_are_the_named_splits_and_an_unknown_name_is_refused():
    from mags_lib.synth.conversation_rows import PERSONA_JUDGE_SETS, persona_judge_set

    nb12 = persona_judge_set("persona-dev-nb12")
    new = persona_judge_set("persona-dev-new", personas=2, offset=6)
    fresh = persona_judge_set("persona-fresh", fresh=1)
    assert [r["gold"]["observation"] for r in nb12] == [
        r["gold"]["observation"] for r in persona_judge_rows("dev", 6)["write"]]
    assert not {r["gold"]["conversation"] for r in nb12} & {r["gold"]["conversation"] for r in new}
    assert {r["gold"]["conversation"] for r in fresh} == {
        r["gold"]["conversation"] for r in persona_judge_rows("fresh", 1)["write"]}
    assert len(PERSONA_JUDGE_SETS) == 3
    with pytest.raises(ValueError, match="persona-fresh"):
        persona_judge_set("persona-test")
