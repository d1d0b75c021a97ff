"""LoCoMo's reader: the shape it accepts, the errors it gives, the split, the shared copy."""

from __future__ import annotations

import json

import pytest

from mags_lib.conversations import locomo
from mags_lib.conversations.locomo import SPLITS, evidence_ids, load_locomo, locomo_path
from mags_lib.errors import CorruptFileError, MagsError
from mags_lib.tasks.base import UTTERANCE


def _tiny(sample_id: str = "conv-1") -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Lisbon."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!",
                           "blip_caption": "a photo of a tram"}],
            "session_2_date_time": "2:00 pm on 9 June, 2023",
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "I got a cat."}],
        },
        "qa": [{"question": "Where does Ana live?", "answer": "Lisbon", "evidence": ["D1:1"],
                "category": 4},
               {"question": "When?", "answer": 2023, "evidence": ["D1:1; D2:1"], "category": 2},
               {"question": "Ana's dog?", "evidence": ["D"], "category": 5,
                "adversarial_answer": "Rex"}],
        "observation": {"session_1_observation": {"Ana": [["Ana moved to Lisbon.", "D1:1"]]},
                        "session_2_observation": {"Ana": [["Ana has a cat.", ["D2:1"]]]}},
    }


def _write(tmp_path, doc, name="locomo10.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_reads_turns_questions_and_gold_writes(tmp_path):
    [conv] = load_locomo(_write(tmp_path, [_tiny()]))
    assert conv.speakers == ("Ana", "Bo")
    assert [t.dia_id for t in conv.turns()] == ["D1:1", "D1:2", "D2:1"]
    assert conv.sessions[2][0].date == "2:00 pm on 9 June, 2023"
    assert conv.sessions[1][1].caption == "a photo of a tram"
    assert conv.qa[1].answer == "2023" and conv.qa[1].evidence == ("D1:1", "D2:1")
    assert conv.qa[2].answer is None and conv.qa[2].evidence == ()
    assert [(o.session, o.text, o.evidence) for o in conv.gold_facts] == [
        (1, "Ana moved to Lisbon.", ("D1:1",)), (2, "Ana has a cat.", ("D2:1",))]
    assert len(conv.repairs) == 2  # "D1:1; D2:1" and "D"
    # the agent listens to two people: no turn is its own reply, every turn may be written
    assert conv.agent_speaker is None
    assert {o.kind for o in conv.stream()} == {UTTERANCE}


def test_evidence_ids_are_repaired_leniently():
    notes: list[str] = []
    assert evidence_ids(["D1:3", "D:11:26", "D9:1 D4:4", "D30:05"], notes) == (
        "D1:3", "D11:26", "D9:1", "D4:4", "D30:5")
    assert len(notes) == 3


@pytest.mark.parametrize("content, words", [
    ('[{"sample_id": "c", "conversation": {', "not valid JSON"),
    ('{"a": 1}', "list of conversations"),
    ('[{"sample_id": "c", "qa": []}]', "has no 'conversation'"),
    ('[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B"}, "qa": []}]',
     "has no sessions"),
])
def test_bad_files_name_the_file_and_the_fix(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CorruptFileError) as err:
        load_locomo(path)
    assert words in str(err.value) and str(path) in str(err.value)
    assert "MAGS_LOCOMO" in err.value.fix


def test_missing_file_and_unknown_ids(tmp_path):
    with pytest.raises(MagsError, match="no LoCoMo file"):
        load_locomo(tmp_path / "absent.json")
    with pytest.raises(MagsError, match="no conversation conv-9"):
        load_locomo(_write(tmp_path, [_tiny()]), ids=["conv-9"])


def test_path_order_environment_first(tmp_path, monkeypatch):
    monkeypatch.setenv(locomo.ENV_VAR, str(tmp_path / "mine.json"))
    assert locomo_path() == tmp_path / "mine.json"
    assert locomo_path(tmp_path / "given.json") == tmp_path / "given.json"


def test_split_is_disjoint_and_covers_the_ten():
    assert not set(SPLITS["train"]) & set(SPLITS["test"])
    assert len(SPLITS["train"]) == len(SPLITS["test"]) == 5


def test_the_shared_copy_when_present(monkeypatch):
    monkeypatch.delenv(locomo.ENV_VAR, raising=False)
    path = locomo_path()
    if path is None:
        pytest.skip(locomo.missing_message())
    convs = load_locomo(path)
    assert [c.sample_id for c in convs] == list(SPLITS["train"] + SPLITS["test"])
    assert sum(len(c.qa) for c in convs) == 1986
    assert sum(len(list(c.turns())) for c in convs) == 5882
    every = {q.category for c in convs for q in c.qa}
    assert every == set(locomo.CATEGORIES)
    stray = [(c.sample_id, e) for c in convs for q in c.qa for e in q.evidence
             if e not in c.turn_ids()]
    assert stray == [("conv-42", "D10:19"), ("conv-47", "D4:36")]  # ids the file lacks


def test_the_task_reads_a_splits_conversations_after_an_offset(tmp_path):
    """`LocomoTask.episodes(split, n, offset)` reads the n conversations after the first
    `offset` of the split, as the persona task does with its seeds."""
    from mags_lib.conversations.task import LocomoTask

    path = _write(tmp_path, [_tiny(i) for i in SPLITS["train"]])
    task = LocomoTask(str(path))
    assert [c.sample_id for c in task.episodes("train", 2, offset=1)] == list(SPLITS["train"][1:3])
    assert [c.sample_id for c in task.episodes("train", None, offset=3)] == list(
        SPLITS["train"][3:])
    assert len(task.episodes("train")) == len(SPLITS["train"])
