"""The persona conversations: deterministic, split by seed and by phrasing, with sound gold."""

from __future__ import annotations

import dataclasses

import pytest

from mags_lib.conversations import persona_phrases as P
from mags_lib.conversations.persona import (
    SEEDS,
    PersonaConfig,
    make_persona,
    persona_set,
)


def _user_texts(convs) -> set[str]:
    return {t.text for c in convs for t in c.turns()} | {q.question for c in convs for q in c.qa}


def test_same_seed_same_conversation():
    assert make_persona(5) == make_persona(5)
    assert make_persona(5) != make_persona(6)


def test_a_seed_of_another_split_is_refused():
    with pytest.raises(ValueError, match="not a test seed"):
        make_persona(SEEDS["train"][0], "test")
    assert not set(SEEDS["train"]) & set(SEEDS["test"])
    assert not set(SEEDS["dev"]) & set(SEEDS["test"])


def _banks() -> list[tuple[str, ...]]:
    banks = [P.FIRST, P.FIRST_OTHER, P.DIRECT, P.DIRECT_OTHER, P.INDIRECT, P.CORRECTION,
             P.REPEAT, P.CHIT_CHAT, P.ASSISTANT, P.GREETING]
    for attr in P.ATTRIBUTES:
        for form in (attr.self_form, attr.other_form):
            if form is not None:
                banks += [getattr(form, f.name) for f in dataclasses.fields(form)]
    return banks


def test_banks_split_into_disjoint_parts():
    for bank in _banks():
        parts = [set(P.split_of(bank, s)) for s in P.SPLITS]
        assert all(parts) and set().union(*parts) == set(bank)
        assert sum(len(p) for p in parts) == len(bank)


def _held_out_entries() -> set[str]:
    return {x.lower() for b in _banks() for s in ("dev", "test") for x in P.split_of(b, s)}


def test_training_only_wordings_repeat_no_dev_or_test_entry_and_stay_in_training():
    from mags_lib.conversations import persona_train_phrases as T

    extras = [x for bank in (*T.CLAUSES.values(), *T.FRAMES.values(), T.CUE_WORD_REPEAT,
                             T.CUE_WORD_SMALL_TALK) for x in bank]
    assert extras and not {x.lower() for x in extras} & _held_out_entries()
    assert all(key in T.FRAMES for key in (P.DIRECT_OTHER, P.INDIRECT, P.CORRECTION))
    # an extra frame, filled, is recognisable by its fixed words: train uses them, dev/test never
    marks = ["Not about me, but my", "My mistake, ", "I'm still adjusting to "]
    train = _user_texts(persona_set("train", 150))
    held = _user_texts(persona_set("dev", 40)) | _user_texts(persona_set("test", 40))
    assert all(any(m in t for t in train) for m in marks)
    assert not any(m in t for m in marks for t in held)



def test_earlier_twin_questions_are_training_only_and_cover_every_changing_fact():
    import random

    from mags_lib.conversations import persona_train_phrases as T

    twins = [x for bank in T.EARLIER_TWINS.values() for x in bank]
    held = _held_out_entries()
    assert not {x.lower() for x in twins} & held
    markers = ("previously", "before the change", "before the switch", "before my last move",
               "before the last move", "before the current one")  # the dev / test wordings'
    assert not [x for x in twins if any(m in x.lower() for m in markers)]
    assert len(set(twins)) == len(twins)
    for conv in persona_set("train", 30):  # every fact with an earlier value gets a twin
        user = conv.speakers[0]
        for o in conv.gold_facts:
            attr, who = P.fact_topic(o.text)
            assert who == user or who in P.PEOPLE, (o.text, who)
            if o.op == "update":
                q = T.earlier_twin(o.text, user, random.Random(0))
                assert q and "{" not in q and (who == user or who in q)
    assert P.fact_topic("Caroline went to a support group.") is None

def test_fact_lookalikes_are_training_only_and_state_no_persona_fact():
    """persona_train_phrases.LOOKALIKES: one bank per attribute, each entry with one {who} and
    one {v}; filled with any value and person, none states an attribute (fact_topic), none
    holds a clause of the persona banks (a state, a change, an event of anyone), none is an
    entry of a bank, and no conversation of any split says one."""
    import random

    from mags_lib.conversations import persona_train_phrases as T

    assert set(T.LOOKALIKES) == {a.name for a in P.ATTRIBUTES}
    templates = [t for bank in T.LOOKALIKES.values() for t in bank]
    assert len(set(templates)) == len(templates) >= 16
    entries = {x.lower() for b in _banks() for x in b}
    extras = [x for bank in (*T.CLAUSES.values(), *T.CUE_CLAUSES.values()) for x in bank]
    said = _user_texts(persona_set("train", 40)) | _user_texts(persona_set("dev", 20))
    for attr in P.ATTRIBUTES:
        forms = [f for f in (attr.self_form, attr.other_form) if f is not None]
        clauses = [c for f in forms for slot in ("state", "change", "event")
                   for c in getattr(f, slot)] + extras
        for template in T.LOOKALIKES[attr.name]:
            assert template.count("{who}") == 1 and template.count("{v}") == 1, template
            assert template.lower() not in entries
            for v in attr.values:
                for who in ("I", "Ana", "my cousin"):
                    text = T.lookalike(attr.name, v, who, random.Random(0))
                    assert P.fact_topic(text) is None, text
                    assert text[0].isupper() and "{" not in text
                    for clause in clauses:
                        filled = clause.format(v=v, name=who, s="", c="", e="", old="")
                        assert filled.lower() not in text.lower(), (text, clause)
            filled = {template.format(who="I", v=v) for v in attr.values}
            assert not any(f[:-1] in t for f in filled for t in said), template


def test_test_phrasings_never_appear_in_training_conversations():
    train = _user_texts(persona_set("train", 150))
    test = _user_texts(persona_set("test", 30))
    dev = _user_texts(persona_set("dev", 30))
    assert not train & test, sorted(train & test)[:5]
    assert not dev & test


def test_gold_follows_the_changes():
    for conv in persona_set("train", 40):
        turns = {t.dia_id: t for t in conv.turns()}
        for q in conv.qa:
            assert all(e in turns for e in q.evidence)
            if q.kind == "current":
                assert q.answer not in q.stale  # the answer now is never a stale value
            if q.kind == "unknown":
                assert q.answer is None and q.category == 5 and not q.evidence
        for o in conv.gold_facts:
            assert o.op in ("add", "update") and (o.op == "update") == (o.replaces is not None)
            assert turns[o.evidence[0]].speaker == conv.speakers[0]
        kinds = {q.kind for q in conv.qa}
        assert {"current", "unknown"} <= kinds


def test_a_correction_retracts_the_value_it_corrects():
    cfg = PersonaConfig(change_frames=(0.0, 0.0, 1.0))  # every change is a correction
    for conv in persona_set("train", 20, cfg):
        # corrected values were never true: no change dates, no earlier values
        assert not [q for q in conv.qa if q.kind in ("when", "earlier")]
        assert any(q.stale for q in conv.qa if q.kind == "current")
        updates = [o for o in conv.gold_facts if o.op == "update"]
        assert updates and all(", not " in {t.dia_id: t for t in conv.turns()}[o.evidence[0]].text
                               for o in updates)


def test_config_is_checked():
    with pytest.raises(ValueError):
        PersonaConfig(sessions=1)
    with pytest.raises(ValueError):
        PersonaConfig(first_facts=8, unknown_questions=2)


def _instead_attributes(convs) -> set[str]:
    """The attributes whose changes some turn of `convs` says with 'instead'."""
    found = set()
    for conv in convs:
        turns = {t.dia_id: t.text for t in conv.turns()}
        for o in conv.gold_facts:
            if o.op == "update" and " instead" in turns[o.evidence[0]]:
                found.add(P.fact_topic(o.text)[0].name)
    return found


def test_cue_phrases_are_training_only_off_by_default_and_say_instead_of_every_attribute():
    from mags_lib.conversations import persona_train_phrases as T

    cues = [x for bank in (*T.CUE_CLAUSES.values(), *T.CUE_FRAMES.values()) for x in bank]
    assert cues and not {x.lower() for x in cues} & _held_out_entries()
    assert not set(cues) & {x for b in (*T.CLAUSES.values(), *T.FRAMES.values()) for x in b}
    on = PersonaConfig(train_cue_phrases=True)
    for split in ("dev", "test"):  # never drawn outside training: the held-out sets stay
        assert persona_set(split, 12, on) == persona_set(split, 12)
    plain, cued = persona_set("train", 150), persona_set("train", 150, on)
    assert plain == persona_set("train", 150, PersonaConfig())  # off: the deployed data
    assert _instead_attributes(plain) <= {"trip", "instrument"}  # the cue the writer learned
    assert {"home", "job", "car", "doctor"} <= _instead_attributes(cued)
    mark = "I keep thinking about "  # a cue frame, filled
    assert any(mark in t for t in _user_texts(cued))
    assert not any(mark in t for t in _user_texts(plain))


def test_cue_words_are_training_only_off_by_default_and_reach_every_kind_of_turn():
    """`train_cue_words` (persona_train_phrases.CUE_WORD_*): no entry repeats a dev, test or
    fresh entry or another training-only one; dev and test personas stay as they were; off, the
    training personas are the deployed ones; on, they say new facts 'these days', repeat and
    correct in the new frames, and the assistant replies with change words, and the gold
    writes of those turns stay what the event is (add, nothing, update)."""
    from mags_lib.conversations import persona_fresh_phrases as F
    from mags_lib.conversations import persona_train_phrases as T

    words = [x for bank in (*T.CUE_WORD_CLAUSES.values(), *T.CUE_WORD_FRAMES.values(),
                            T.CUE_WORD_ASSISTANT) for x in bank]
    assert len(set(words)) == len(words)
    others = {x.lower() for b in (*T.CLAUSES.values(), *T.FRAMES.values(),
                                  *T.CUE_CLAUSES.values(), *T.CUE_FRAMES.values(),
                                  P.TRAIN_SMALL_TALK, P.TRAIN_REPEAT, T.CUE_WORD_REPEAT,
                                  T.CUE_WORD_SMALL_TALK) for x in b}
    fresh = {x.lower() for b in _banks() for x in F.fresh_bank(b)}
    held = {x.lower() for b in _banks() for x in b}
    assert not {x.lower() for x in words} & (others | fresh | held)
    on = PersonaConfig(train_cue_words=True)
    for split in ("dev", "test", "fresh"):
        assert persona_set(split, 8, on) == persona_set(split, 8)
    plain, cued = persona_set("train", 60), persona_set("train", 60, on)
    assert plain == persona_set("train", 60, PersonaConfig())
    said = _user_texts(cued)
    assert not any(m in t for m in ("these days I live in", "Strike that, ", "Small update about")
                   for t in _user_texts(plain))
    assert any(t in said for t in T.CUE_WORD_ASSISTANT)
    ops = {}  # the gold op of each turn that says a cue-word entry's fixed words
    marks = ("these days I live in", "Strike that, ", "Unchanged since last time: ")
    for conv in cued:
        gold = {o.evidence[0]: o.op for o in conv.gold_facts}
        for t in conv.turns():
            for mark in marks:
                if mark.lower() in t.text.lower():
                    ops.setdefault(mark, set()).add(gold.get(t.dia_id))
    assert ops["Strike that, "] == {"update"}
    assert ops["Unchanged since last time: "] == {None}
    assert "add" in ops["these days I live in"]


def test_the_fresh_split_has_its_own_seeds_and_wordings_for_every_bank():
    """`fresh` (a second development split, persona_fresh_phrases): every bank of
    persona_phrases has a counterpart with no entry of any other bank (training-only ones
    included); a fresh persona says nothing a train, dev or test persona says; its seeds are
    its own and the task serves it."""
    from mags_lib.conversations import persona_fresh_phrases as F
    from mags_lib.conversations import persona_train_phrases as T
    from mags_lib.tasks.registry import get_task

    fresh = [F.fresh_bank(b) for b in _banks()]
    assert all(len(b) >= 2 for b in fresh)
    entries = {x.lower() for b in fresh for x in b}
    trained = (*T.CLAUSES.values(), *T.FRAMES.values(), *T.CUE_CLAUSES.values(),
               *T.CUE_FRAMES.values(), *T.EARLIER_TWINS.values(), P.TRAIN_SMALL_TALK,
               P.TRAIN_REPEAT, T.CUE_WORD_REPEAT, T.CUE_WORD_SMALL_TALK,
               *T.CUE_WORD_CLAUSES.values(), *T.CUE_WORD_FRAMES.values(),
               T.CUE_WORD_ASSISTANT)
    old = {x.lower() for b in _banks() for x in b} | {x.lower() for b in trained for x in b}
    assert not entries & old, sorted(entries & old)
    with pytest.raises(ValueError, match="no fresh counterpart"):
        F.fresh_bank(("a", "b", "c"))
    for split in ("train", "dev", "test"):
        assert not set(SEEDS["fresh"]) & set(SEEDS[split])
    with pytest.raises(ValueError, match="not a fresh seed"):
        make_persona(SEEDS["dev"][0], "fresh")
    convs = get_task("persona").episodes("fresh", 20)
    said = _user_texts(convs)
    others = (_user_texts(persona_set("train", 100)) | _user_texts(persona_set("dev", 30))
              | _user_texts(persona_set("test", 30)))
    assert not said & others, sorted(said & others)[:5]
    assert all(c.sample_id.startswith("persona-fresh-") and c.qa and c.gold_facts
               for c in convs)


def test_the_assistants_turns_are_the_agents_own_replies():
    """The agent reads a persona conversation in the assistant's place: every turn of the
    assistant streams as kind REPLY (not written under LoopConfig.write_replies False), every
    turn of the user as UTTERANCE, one observation per turn."""
    from mags_lib.conversations.persona import ASSISTANT
    from mags_lib.tasks.base import REPLY, UTTERANCE

    conv = make_persona(SEEDS["dev"][0], "dev")
    assert conv.agent_speaker == ASSISTANT
    turns, stream = list(conv.turns()), conv.stream()
    assert len(turns) == len(stream)
    kinds = {(t.speaker == ASSISTANT, o.kind) for t, o in zip(turns, stream, strict=True)}
    assert kinds == {(True, REPLY), (False, UTTERANCE)}
