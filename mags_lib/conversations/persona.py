"""A person's changing facts, synthesised offline: multi-session user / assistant conversations.

    from mags_lib.conversations.persona import PersonaConfig, make_persona, persona_set

    conv = make_persona(seed=3, split="train")       # a `Conversation`, as LoCoMo's reader gives
    tests = persona_set("test", n=20)                # seeds and phrasings kept for the test

A user tells an assistant about their world across sessions: their home, job, car, yoga day,
favourite food, doctor, instrument and travel plans, and the homes, jobs and cars of relatives
and friends. Facts change between sessions, said directly ("I moved to Lisbon"), indirectly
("Since the move to Lisbon, ...") or as corrections ("Sorry, I got that wrong before: ..., not
Porto"); the stream also carries chit-chat and repeats. The questions at the end ask for the
current value (`kind='current'`, earlier values listed as `stale`), the value before the last
real change ('earlier'), the date of a change ('when') and facts never said ('unknown', answer
None: "I don't know" is right).

A correction retracts the value it corrects: it was never true, so it is not an "earlier"
value, though answering it now is stale. Gold writes (`Conversation.gold_facts`) are one
canonical third-person sentence per fact-bearing turn, op 'add' or 'update' with the sentence
it replaces; repeats and chit-chat write nothing.

Splits: phrasings by `persona_phrases.split_of` (a training persona also draws from the
training-only wordings of `persona_train_phrases`; a `fresh` persona, a second development
split, from `persona_fresh_phrases` only), personas by seed range (`SEEDS`). A
conversation made for one split refuses a seed of another, so test personas never enter a
dataset by accident.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from mags_lib.conversations import persona_phrases as P
from mags_lib.conversations import persona_train_phrases as T
from mags_lib.conversations.persona_fresh_phrases import fresh_bank
from mags_lib.conversations.types import QA, Conversation, GoldFact, Turn, day_of

SEEDS: dict[str, range] = {"train": range(0, 10_000), "dev": range(10_000, 10_500),
                           "test": range(20_000, 20_500), "fresh": range(30_000, 30_500)}
"""Personas by split: `fresh` is a second development split whose turns and questions are all
worded from `persona_fresh_phrases` (written 2026-12-07, after the other banks)."""
ASSISTANT = "Assistant"
_BY_NAME = {a.name: a for a in P.ATTRIBUTES}


@dataclass
class PersonaConfig:
    sessions: int = field(default=5, metadata={"help": "sessions per conversation"})
    first_facts: int = field(default=4, metadata={
        "help": "the user's own facts stated in the first session"})
    others: int = field(default=2, metadata={
        "help": "relatives or friends whose facts (home, job, car) the user mentions"})
    changes_per_session: int = field(default=2, metadata={
        "help": "facts changed in each session after the first"})
    new_facts_per_session: int = field(default=1, metadata={
        "help": "new facts of the user's in each session after the first, while attributes "
                "beyond those kept for the 'unknown' questions are left"})
    repeats_per_session: int = field(default=1, metadata={
        "help": "facts restated unchanged in each session after the first"})
    chit_chat_per_session: int = field(default=2, metadata={"help": "turns with no fact"})
    change_frames: tuple[float, float, float] = field(default=(0.5, 0.25, 0.25), metadata={
        "help": "weights of a change said directly, indirectly, or as a correction"})
    unknown_questions: int = field(default=2, metadata={
        "help": "questions about the user's facts that were never said"})
    train_cue_phrases: bool = field(default=False, metadata={
        "help": "training personas also draw from persona_train_phrases.CUE_CLAUSES / "
                "CUE_FRAMES ('instead' in every attribute's change, more events of someone "
                "other than the speaker; written 2026-12-03, not judged yet); dev and test "
                "personas never do"})
    train_cue_words: bool = field(default=False, metadata={
        "help": "training personas also draw from persona_train_phrases.CUE_WORD_CLAUSES / "
                "CUE_WORD_FRAMES / CUE_WORD_ASSISTANT (new facts said 'these days' or "
                "'currently', first facts framed as an 'update', repeats saying nothing "
                "changed, corrections in new frames, assistant replies with change words; "
                "written 2026-12-07 against the fresh split's cue-word errors); dev, test and "
                "fresh personas never do"})

    def __post_init__(self) -> None:
        if self.sessions < 2 or self.first_facts < 1:
            raise ValueError("a persona needs at least 2 sessions and 1 first fact")
        if self.first_facts + self.unknown_questions > len(P.ATTRIBUTES):
            raise ValueError(f"first_facts + unknown_questions is at most {len(P.ATTRIBUTES)}")


@dataclass
class _Fact:
    """One (person, attribute) as the conversation has it so far."""

    person: str  # "self" or a name
    attr: P.Attribute
    values: list[str]  # true values, oldest first (a corrected value is removed)
    turns: list[str]  # the turn that stated each value
    stale: list[str]  # every value once stated and not current
    changed_on: str | None = None  # date of the last real change (not a correction)
    change_turn: str | None = None


class _Writer:
    """Builds the turns of one conversation, a session at a time."""

    def __init__(self, rng: random.Random, split: str, user: str, relation: dict[str, str],
                 frames: tuple[float, float, float], cues: bool = False, words: bool = False):
        self.rng, self.split, self.user, self.relation = rng, split, user, relation
        self.frames, self.cues, self.words = frames, cues, words
        self.sessions: dict[int, list[Turn]] = {}
        self.gold_facts: list[GoldFact] = []
        self.session, self.date = 0, ""

    def pick(self, bank: tuple[str, ...], extra: tuple[str, ...] = ()) -> str:
        """An entry of `bank`'s part for this split; a training persona also draws from
        `extra` (`persona_train_phrases`), a dev or test one never does; a `fresh` persona
        draws from `persona_fresh_phrases` only."""
        if self.split == "fresh":
            return self.rng.choice(fresh_bank(bank))
        return self.rng.choice(P.split_of(bank, self.split)
                               + (extra if self.split == "train" else ()))

    def start(self, session: int, when: str) -> None:
        self.session, self.date = session, when
        self.sessions[session] = []

    def say(self, text: str) -> str:
        turns = self.sessions[self.session]
        dia_id = f"D{self.session}:{len(turns) + 1}"
        turns.append(Turn(dia_id, self.session, self.user, _cap(text), self.date))
        turns.append(Turn(f"D{self.session}:{len(turns) + 1}", self.session, ASSISTANT,
                          self.pick(P.ASSISTANT, T.CUE_WORD_ASSISTANT if self.words else ()),
                          self.date))
        return dia_id

    def form(self, fact: _Fact) -> P.Form:
        return fact.attr.self_form if fact.person == "self" else fact.attr.other_form

    def clause(self, fact: _Fact, slot: str, value: str) -> str:
        extra = T.clause_extra(fact.attr.name, _kind(fact), slot, self.cues, self.words)
        return self.pick(getattr(self.form(fact), slot), extra).format(v=value,
                                                                       name=fact.person)

    def framed(self, fact: _Fact, frame: tuple[str, ...], other: tuple[str, ...] | None,
               **parts: str) -> str:
        bank = frame if fact.person == "self" or other is None else other
        return self.pick(bank, T.frame_extra(bank, self.cues, self.words)).format(
            rel=self.relation.get(fact.person, ""), **parts)

    def gold(self, fact: _Fact, dia_id: str, value: str, replaces: str | None) -> None:
        who = self.user if fact.person == "self" else fact.person
        text = fact.attr.fact.format(who=who, v=value)
        old = None if replaces is None else fact.attr.fact.format(who=who, v=replaces)
        self.gold_facts.append(GoldFact(self.session, self.user, _cap(text), (dia_id,),
                                             "add" if old is None else "update", old))


def _kind(fact: _Fact) -> str:
    return "self" if fact.person == "self" else "other"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _dates(rng: random.Random, n: int) -> list[str]:
    day = date(2023, rng.randint(1, 6), rng.randint(1, 28))
    out = []
    for _ in range(n):
        hour, minute = rng.randint(8, 21), rng.choice((0, 10, 15, 25, 30, 45, 50))
        out.append(f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'} on "
                   f"{day.day} {day.strftime('%B')}, {day.year}")
        day += timedelta(days=rng.randint(7, 40))
    return out


def make_persona(seed: int, split: str = "train",
                 config: PersonaConfig | None = None) -> Conversation:
    """One conversation, fully determined by (seed, split, config)."""
    if seed not in SEEDS.get(split, ()):
        raise ValueError(f"seed {seed} is not a {split} seed: {split} personas use seeds in "
                         f"{SEEDS.get(split)}")
    cfg = config or PersonaConfig()
    rng = random.Random(f"persona:{split}:{seed}")
    names = rng.sample(P.PEOPLE, 1 + cfg.others)
    user, others = names[0], names[1:]
    relation = {name: rng.choice(P.RELATIONS) for name in others}
    w = _Writer(rng, split, user, relation, cfg.change_frames, cfg.train_cue_phrases,
                cfg.train_cue_words)
    facts: list[_Fact] = []
    unsaid = list(P.ATTRIBUTES)
    rng.shuffle(unsaid)
    for s, when in enumerate(_dates(rng, cfg.sessions), start=1):
        w.start(s, when)
        events = _session_events(rng, cfg, s, facts, unsaid, others)
        if s > 1:
            w.say(w.pick(P.GREETING))
        for kind, payload in events:
            _play_event(w, rng, kind, payload, facts, when)
    qa = _questions(w, rng, cfg, facts, unsaid)
    return Conversation(f"persona-{split}-{seed}", (user, ASSISTANT), w.sessions, qa,
                        w.gold_facts, agent_speaker=ASSISTANT)


def _session_events(rng: random.Random, cfg: PersonaConfig, s: int, facts: list[_Fact],
                    unsaid: list[P.Attribute], others: list[str]) -> list[tuple[str, object]]:
    events: list[tuple[str, object]] = [("chat", None)] * cfg.chit_chat_per_session
    if s == 1:
        events += [("new", ("self", unsaid.pop())) for _ in range(cfg.first_facts)]
        shareable = [a for a in P.ATTRIBUTES if a.other_form is not None]
        events += [("new", (name, rng.choice(shareable))) for name in others]
    else:
        movable = rng.sample(facts, min(cfg.changes_per_session, len(facts)))
        events += [("change", f) for f in movable]
        spare = max(0, len(unsaid) - cfg.unknown_questions)  # kept for the 'unknown' questions
        events += [("new", ("self", unsaid.pop()))
                   for _ in range(min(cfg.new_facts_per_session, spare))]
        still = [f for f in facts if f not in movable]
        events += [("repeat", f) for f in rng.sample(still, min(cfg.repeats_per_session,
                                                                len(still)))]
    rng.shuffle(events)
    return events


def _play_event(w: _Writer, rng: random.Random, kind: str, payload: object,
                facts: list[_Fact], when: str) -> None:
    if kind == "chat":
        w.say(w.pick(P.CHIT_CHAT))
    elif kind == "new":
        person, attr = payload
        fact = _Fact(person, attr, [], [], [])
        value = rng.choice(attr.values)
        dia_id = w.say(w.framed(fact, P.FIRST, P.FIRST_OTHER, s=w.clause(fact, "state", value)))
        fact.values.append(value)
        fact.turns.append(dia_id)
        facts.append(fact)
        w.gold(fact, dia_id, value, None)
    elif kind == "repeat":
        fact = payload
        w.say(w.framed(fact, P.REPEAT, None, s=w.clause(fact, "state", fact.values[-1])))
    else:
        _change(w, rng, payload, when)


def _change(w: _Writer, rng: random.Random, fact: _Fact, when: str) -> None:
    old = fact.values[-1]
    value = rng.choice([v for v in fact.attr.values if v != old and v not in fact.stale])
    how = rng.choices(("direct", "indirect", "correction"), weights=w.frames)[0]
    if how == "direct":
        text = w.framed(fact, P.DIRECT, P.DIRECT_OTHER, c=w.clause(fact, "change", value))
    elif how == "indirect":
        text = w.framed(fact, P.INDIRECT, None, e=w.clause(fact, "event", value))
    else:
        text = w.framed(fact, P.CORRECTION, None, s=w.clause(fact, "state", value), old=old)
    dia_id = w.say(text)
    w.gold(fact, dia_id, value, old)
    fact.stale.append(old)
    if how == "correction":  # the corrected value was never true
        fact.values.pop()
        fact.turns.pop()
    else:
        fact.changed_on, fact.change_turn = day_of(when), dia_id
    fact.values.append(value)
    fact.turns.append(dia_id)


def _questions(w: _Writer, rng: random.Random, cfg: PersonaConfig, facts: list[_Fact],
               unsaid: list[P.Attribute]) -> list[QA]:
    qa = []
    for f in facts:
        whose = w.user if f.person == "self" else f.person

        def ask(slot: str, v: str = "", f: _Fact = f) -> str:
            extra = T.clause_extra(f.attr.name, _kind(f), slot)
            return w.pick(getattr(w.form(f), slot), extra).format(v=v, name=f.person)
        qa.append(QA(ask("ask_current"), f.values[-1], (f.turns[-1],), 4, kind="current",
                     stale=tuple(dict.fromkeys(f.stale)), asker=w.user, about=whose))
        if len(f.values) > 1:
            qa.append(QA(ask("ask_earlier"), f.values[-2], (f.turns[-2],), 4, kind="earlier",
                         asker=w.user, about=whose))
        if f.changed_on and f.change_turn == f.turns[-1]:
            qa.append(QA(ask("ask_when", f.values[-1]), f.changed_on, (f.change_turn,), 2,
                         kind="when", asker=w.user, about=whose))
    for attr in rng.sample(unsaid, min(cfg.unknown_questions, len(unsaid))):
        asked = w.pick(attr.self_form.ask_current, T.clause_extra(attr.name, "self", "ask_current"))
        qa.append(QA(asked, None, (), 5, kind="unknown", asker=w.user))
    return qa


def persona_set(split: str, n: int, config: PersonaConfig | None = None,
                offset: int = 0) -> list[Conversation]:
    """`n` conversations of `split`, from its seeds in order (`offset` skips the first)."""
    seeds = SEEDS[split]
    if offset + n > len(seeds):
        raise ValueError(f"{split} has {len(seeds)} seeds; asked for {offset + n}")
    return [make_persona(seeds[offset + i], split, config) for i in range(n)]
