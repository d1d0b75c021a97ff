"""The reader probe (tools/reader_probe.py) rewords a development question only into training
wordings, about the person asked, and finds who a question is about."""

import importlib.util
import random
from pathlib import Path

from mags_lib.conversations import persona_phrases as P

_spec = importlib.util.spec_from_file_location(
    "reader_probe", Path(__file__).resolve().parents[1] / "tools" / "reader_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def _held_out(attr: P.Attribute, own: bool) -> set[str]:
    form = attr.self_form if own else attr.other_form
    return {q for s in ("dev", "test") for q in P.split_of(form.ask_current, s)}


def test_asked_about_finds_the_person_and_the_asker():
    assert probe.asked_about("Ana: Which car does Nadia own these days?") == ("Ana", "Nadia", False)
    assert probe.asked_about("Ana: Where do I live now?") == ("Ana", "Ana", True)
    assert probe.asked_about("Ana: What is Hugo's job?") == ("Ana", "Hugo", False)


def test_training_question_keeps_attribute_and_person_and_never_a_held_out_wording():
    rng = random.Random(0)
    for attr in P.ATTRIBUTES:
        value = next(v for v in attr.values
                     if [a for a in P.ATTRIBUTES if v in a.values] == [attr])
        for own in (True, False):
            observation = "Ana: What is it now?" if own else "Ana: What is Hugo's now?"
            if (attr.self_form if own else attr.other_form) is None:
                assert probe.training_question(observation, value, rng) is None
                continue
            for _ in range(10):
                got = probe.training_question(observation, value, rng)
                asker, question = got.split(": ", 1)
                assert asker == "Ana"
                templates = {q.format(name="Hugo") for q in _held_out(attr, own)}
                assert question not in templates, (attr.name, question)
                if not own:
                    assert "Hugo" in question
                else:
                    assert "Hugo" not in question


def test_training_question_none_for_a_value_no_attribute_has():
    assert probe.training_question("Ana: Where do I live now?", "Atlantis-9", random.Random(0)) is None
