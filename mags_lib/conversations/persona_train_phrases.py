"""Training-only phrasings of the persona conversations: more ways to say a fact, a change, an
event and a question, used only when a *training* persona is made.

    from mags_lib.conversations.persona_train_phrases import clause_extra, frame_extra
    clause_extra("home", "other", "change")      # ("{name} has moved house to {v}", ...)
    frame_extra(persona_phrases.DIRECT_OTHER)      # more frames of another person's news

`persona_phrases` splits every bank by position into train / dev / test, which leaves training
two of a clause's four wordings and one of a question's three. The write model then met a
development wording of another person's move ("Chloe just settled in Ghent") as the user's own
and wrote "Yara lives in Ghent" (docs/journal.md, 2026-11-29). These entries widen the training
side only: `persona._Writer` draws a training persona's clause from the bank's training part
plus the extras here, and a dev or test persona never sees them, so the dev and test banks stay
as written. They were written after reading development errors, not the test banks' scores,
and none repeats a dev or test entry (`tests/test_conversations_persona.py` checks it).

Keys: a clause is (attribute name, "self" or "other", `Form` slot); a frame is its bank in
`persona_phrases`. Placeholders as there ({v}, {name}, {s}, {c}, {e}, {old}, {rel}).
"""

from __future__ import annotations

from mags_lib.conversations import persona_phrases as P

CLAUSES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("home", "self", "state"): ("my flat is in {v}", "I've been living in {v} for years",
                                "I call {v} home"),
    ("home", "self", "change"): ("I've moved house to {v}", "we finally moved to {v}",
                                 "my new address is in {v}"),
    ("home", "self", "event"): ("moving house to {v}", "our move to {v}",
                                "finding a flat in {v}"),
    ("home", "self", "ask_current"): ("Which city do I call home now?",
                                      "What city is my flat in?"),
    ("home", "self", "ask_earlier"): ("Which city did I use to live in?",
                                      "What was my old city?"),
    ("home", "other", "state"): ("{name} has been living in {v} for years",
                                 "{name} calls {v} home", "{name} rents a place in {v}"),
    ("home", "other", "change"): ("{name} has moved house to {v}", "{name} finally moved to {v}",
                                  "{name}'s new address is in {v}"),
    ("home", "other", "event"): ("{name} moving house to {v}", "{name}'s big move to {v}",
                                 "{name} finding a flat in {v}"),
    ("home", "other", "ask_current"): ("Which city does {name} call home now?",),
    ("home", "other", "ask_earlier"): ("Which city did {name} use to live in?",),
    ("job", "self", "state"): ("I'm employed as {v}", "I've been {v} for a few years",
                               "I make a living as {v}"),
    ("job", "self", "change"): ("I left my job and became {v}", "I'm working as {v} now",
                                "I took a position as {v}"),
    ("job", "self", "event"): ("taking the position as {v}", "the career change to {v}",
                               "my first month as {v}"),
    ("job", "self", "ask_current"): ("What do I work as nowadays?", "What is my line of work now?"),
    ("job", "self", "ask_earlier"): ("What job did I use to have?", "What was my old job?"),
    ("job", "other", "state"): ("{name} is employed as {v}", "{name} has been {v} for years",
                                "{name} makes a living as {v}"),
    ("job", "other", "change"): ("{name} left the old job and became {v}",
                                 "{name} is working as {v} now",
                                 "{name} took a position as {v}"),
    ("job", "other", "event"): ("{name} taking the position as {v}",
                                "{name}'s career change to {v}", "{name}'s first month as {v}"),
    ("job", "other", "ask_current"): ("What does {name} work as nowadays?",),
    ("job", "other", "ask_earlier"): ("What job did {name} use to have?",),
    ("car", "self", "state"): ("I've got {v}", "I use {v} to get to work", "I have {v}"),
    ("car", "self", "change"): ("I replaced my car with {v}", "I've got {v} now",
                                "I bought {v} last week"),
    ("car", "self", "event"): ("buying {v} last week", "driving {v} around", "trading up to {v}"),
    ("car", "self", "ask_current"): ("Which car do I have now?", "What do I drive nowadays?"),
    ("car", "self", "ask_earlier"): ("What car did I use to drive?", "What was my old car?"),
    ("car", "other", "state"): ("{name} has {v}", "{name} uses {v} to get to work",
                                "{name} has got {v}"),
    ("car", "other", "change"): ("{name} replaced the old car with {v}", "{name} has {v} now",
                                 "{name} bought {v} last week"),
    ("car", "other", "event"): ("{name} buying {v}", "{name} driving {v} around",
                                "{name} trading up to {v}"),
    ("car", "other", "ask_current"): ("Which car does {name} have now?",),
    ("car", "other", "ask_earlier"): ("What car did {name} use to drive?",),
    ("class_day", "self", "state"): ("I have yoga on {v}", "{v} is when I do yoga",
                                     "my weekly yoga falls on {v}"),
    ("class_day", "self", "change"): ("my yoga is on {v} from now on",
                                      "I moved my yoga class to {v}", "yoga changed to {v}"),
    ("class_day", "self", "event"): ("the move of my yoga to {v}", "having yoga on {v}",
                                     "the yoga change to {v}"),
    ("class_day", "self", "ask_current"): ("Which day do I have yoga nowadays?",),
    ("class_day", "self", "ask_earlier"): ("Which day did I use to do yoga?",
                                           "What was my old yoga day?"),
    ("food", "self", "state"): ("I'd eat {v} every day", "my top dish is {v}",
                                "{v} is what I like most"),
    ("food", "self", "change"): ("I like {v} best now", "my top dish is {v} these days",
                                 "I prefer {v} to anything now"),
    ("food", "self", "event"): ("trying {v} for the first time", "my {v} phase",
                                "learning to cook {v}"),
    ("food", "self", "ask_current"): ("Which food is my favourite nowadays?",),
    ("food", "self", "ask_earlier"): ("What food did I use to like best?",
                                      "What was my old favourite dish?"),
    ("doctor", "self", "state"): ("I go to {v}", "my family doctor is {v}",
                                  "{v} looks after me"),
    ("doctor", "self", "change"): ("I go to {v} now", "{v} looks after me now",
                                   "I left my doctor for {v}"),
    ("doctor", "self", "event"): ("signing up with {v}", "my first visit to {v}",
                                  "changing doctors to {v}"),
    ("doctor", "self", "ask_current"): ("Which doctor do I go to nowadays?",),
    ("doctor", "self", "ask_earlier"): ("Which doctor did I use to see?",
                                        "Who was my old doctor?"),
    ("instrument", "self", "state"): ("I play {v}", "I have lessons on {v}",
                                      "I'm taking up {v} seriously"),
    ("instrument", "self", "change"): ("I play {v} now", "I've moved on to {v}",
                                       "I dropped my instrument for {v}"),
    ("instrument", "self", "event"): ("buying {v}", "my lessons on {v}", "moving on to {v}"),
    ("instrument", "self", "ask_current"): ("Which instrument do I play nowadays?",),
    ("instrument", "self", "ask_earlier"): ("Which instrument did I use to play?",
                                            "What was my old instrument?"),
    ("trip", "self", "state"): ("I'm going to {v} on holiday", "my holiday plan is {v}",
                                "I want to travel to {v} this year"),
    ("trip", "self", "change"): ("I'm going to {v} instead", "my holiday plan is {v} now",
                                 "we cancelled and picked {v}"),
    ("trip", "self", "event"): ("picking {v} for the holiday", "planning the {v} trip",
                                "the change of plan to {v}"),
    ("trip", "self", "ask_current"): ("Which country am I going to on holiday?",),
    ("trip", "self", "ask_earlier"): ("Where did I plan to travel at first?",
                                      "What was my old holiday plan?"),
}

FRAMES: dict[tuple[str, ...], tuple[str, ...]] = {
    P.FIRST: ("By the way, {s}.", "Just so you know, {s}.", "Quick fact about me: {s}."),
    P.FIRST_OTHER: ("Talking of my {rel}, {s}.", "My {rel} says that {s}.",
                    "Not about me but my {rel}: {s}."),
    P.DIRECT: ("So, {c}.", "Some news: {c}.", "A change for me, {c}."),
    P.DIRECT_OTHER: ("Not about me, but my {rel} {c}.", "My {rel} told me that {c}.",
                     "Some news from my {rel}: {c}.", "Talking of my {rel}, {c}."),
    P.INDIRECT: ("After {e}, my commute is much shorter.", "With {e}, I hardly have free time.",
                 "Because of {e}, I've been in a good mood.",
                 "I'm still adjusting to {e}.", "{e} has been quite an adventure."),
    P.CORRECTION: ("Oops, I mixed that up: {s}, not {old}.",
                   "I need to correct myself: {s}, not {old}.", "My mistake, {s}, not {old}."),
}


CUE_CLAUSES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("home", "self", "change"): ("I live in {v} instead now", "I'm renting in {v} instead"),
    ("home", "other", "change"): ("{name} lives in {v} instead now",
                                  "{name} is renting in {v} instead"),
    ("home", "other", "event"): ("{name} heading off to live in {v}",
                                 "{name} starting over in {v}"),
    ("job", "self", "change"): ("I work as {v} instead now", "I took a job as {v} instead"),
    ("job", "other", "change"): ("{name} works as {v} instead now",
                                 "{name} took a job as {v} instead"),
    ("job", "other", "event"): ("{name} retraining as {v}", "{name} landing the job as {v}"),
    ("car", "self", "change"): ("I drive {v} instead now", "I got {v} instead"),
    ("car", "other", "change"): ("{name} drives {v} instead now", "{name} got {v} instead"),
    ("car", "other", "event"): ("{name} coming home with {v}", "{name} selling up for {v}"),
    ("class_day", "self", "change"): ("I do yoga on {v} instead now",
                                      "I go to yoga on {v} instead"),
    ("food", "self", "change"): ("I'd pick {v} instead now", "I eat {v} instead these days"),
    ("doctor", "self", "change"): ("I see {v} instead now", "I go to {v} instead"),
}
"""Training-only wordings against two cue-word errors (`PersonaConfig.train_cue_phrases`, off
by default; written 2026-12-03, not yet judged). The writer trained with the game's change
frames (journal, 2026-12-02 evening) wrote "Update on my side: I registered with Dr Nowak
instead." as "Yara is planning a trip to Dr Nowak.": in training "instead" marks only a trip's
or an instrument's change, so here every attribute's change says it. It wrote "Things have been
hectic after Yara moving to Turin." (said by Tomas) as "Tomas lives in Turin.": here more events
name someone other than the speaker, and `CUE_FRAMES` puts them in frames about the speaker's
own days. Written after reading those development errors; none repeats a dev or test entry."""

CUE_FRAMES: dict[tuple[str, ...], tuple[str, ...]] = {
    P.INDIRECT: ("My evenings are busier since {e}.", "I've had my hands full with {e}.",
                 "We threw a small party for {e}.", "I keep thinking about {e}."),
}

CUE_WORD_REPEAT: tuple[str, ...] = (
    "No change there: {s}.", "That part hasn't changed, {s}.", "Same as before, no update: {s}.",
    "Nothing new to update, {s}.", "Still unchanged, {s}.", "Just confirming, {s}, nothing changed.")
CUE_WORD_SMALL_TALK: tuple[str, ...] = (
    "Thanks for keeping me updated.", "Appreciate the update!", "The weather changed so fast today.",
    "My phone needs a software update.", "I changed my mind about lunch.",
    "The bus timetable got updated, annoying.", "These days I'm just tired.",
    "Nothing much has changed this week.", "I'm changing into comfier clothes.",
    "New week, same routine.")
"""Training-only turns that store nothing although they carry the words the write model reads
as a change ("changed", "update", "these days", "new"): the twins of `synth.conversation_rows`
draw from them at `SynthConfig.cue_twin_share` (default 0; at 0.3, candidate W-cue, the fresh
split's op accuracy went 0.870 -> 0.882, not adopted). On the `fresh`
development split the deployed writer wrote 24 repeats framed "Nothing has changed, ..." and
an assistant's "Thanks for the update." as `update`s (journal, 2026-12-07 twelfth session).
Written after reading those development errors; none repeats an entry of any other bank,
fresh ones included (`tests/test_conversations_persona.py`)."""

CUE_WORD_CLAUSES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("home", "self", "state"): ("these days I live in {v}", "I'm currently based in {v}"),
    ("home", "other", "state"): ("{name} lives in {v} these days",
                                 "{name} is currently based in {v}"),
    ("job", "self", "state"): ("these days I work as {v}", "I'm currently employed as {v}"),
    ("job", "other", "state"): ("{name} works as {v} these days",
                                "{name} is currently employed as {v}"),
    ("car", "self", "state"): ("these days I drive {v}", "my current car is {v}"),
    ("car", "other", "state"): ("{name} drives {v} these days", "{name}'s current car is {v}"),
    ("class_day", "self", "state"): ("these days my yoga is on {v}",
                                     "my current yoga day is {v}"),
    ("food", "self", "state"): ("these days I love {v} most", "my current favourite is {v}"),
    ("doctor", "self", "state"): ("these days I see {v}", "my current doctor is {v}"),
    ("instrument", "self", "state"): ("these days I play {v}", "I'm currently learning {v}"),
    ("trip", "self", "state"): ("these days I'm planning a trip to {v}",
                                "my current holiday plan is {v}"),
}
"""Training-only states said with the words the write model reads as a change ("these days",
"currently"; `PersonaConfig.train_cue_words`, off by default; written 2026-12-07 after reading
the `fresh` development split's errors): a state clause is a new fact's first mention, a repeat
and a correction's value, so the writer meets these words in adds, in nothing-to-store repeats
and in corrections, and only the memory shown tells an update. On `fresh` the deployed writer
wrote new facts said "... these days" as updates (journal, 2026-12-07 twelfth session)."""

CUE_WORD_FRAMES: dict[tuple[str, ...], tuple[str, ...]] = {
    P.FIRST: ("Small update about me: {s}.", "Something new to note: {s}."),
    P.FIRST_OTHER: ("An update on my {rel}: {s}.", "New to you, I think: my {rel} {s}."),
    P.REPEAT: ("No news on that, {s}.", "Nothing's different there: {s}.",
               "Unchanged since last time: {s}."),
    P.CORRECTION: ("Let me set the record straight: {s}, not {old}.",
                   "I gave you the wrong detail: {s}, not {old}.",
                   "Strike that, {s}, not {old}.", "Forget what I told you: {s}, not {old}."),
}
"""Training-only frames for the same cue-word errors (`PersonaConfig.train_cue_words`): a
first fact framed as an "update" (an add), a repeat that says nothing changed (nothing to
store), and corrections said without "sorry" or "correct" (updates; on `fresh` the writer left
five of six corrections framed "Scratch what I said: ..." unwritten)."""

CUE_WORD_ASSISTANT: tuple[str, ...] = (
    "Thanks for keeping me in the loop.", "Good to hear the news.", "I've updated my notes.",
    "Noted, that's quite a change.", "Okay, I'll keep that up to date.",
    "Nice, thanks for the heads-up.")
"""Training-only assistant replies with change words (`PersonaConfig.train_cue_words`): they
store nothing. On `fresh` the writer answered the assistant's "Thanks for the update." with a
made-up update."""

EARLIER_TWINS: dict[tuple[str, str], tuple[str, ...]] = {
    ("home", "self"): ("Which city was I living in at first?", "Where did I live in the past?",
                       "What city was my home originally?", "Where was my home until recently?"),
    ("home", "other"): ("Where did {name} live in the past?",
                        "What city was {name}'s home originally?",
                        "Where was {name} living at first?",
                        "Which city was {name}'s home until recently?"),
    ("job", "self"): ("What did I do for work originally?", "What job did I hold until recently?",
                      "What was my profession back then?", "Which job did I have at one time?"),
    ("job", "other"): ("What did {name} do for a living in the past?",
                       "What job did {name} hold until recently?",
                       "What was {name}'s profession originally?",
                       "Which job did {name} have at first?"),
    ("car", "self"): ("Which car did I own in the past?", "What did I drive at first?",
                      "What was my car until recently?", "Which car was mine originally?"),
    ("car", "other"): ("Which car did {name} own in the past?", "What did {name} drive at first?",
                       "What was {name}'s car until recently?",
                       "Which car did {name} have originally?"),
    ("class_day", "self"): ("Which day was yoga on in the past?",
                            "On what day did my yoga class meet at first?",
                            "What was my yoga day until recently?",
                            "Which weekday was yoga originally?"),
    ("food", "self"): ("Which food was my favourite in the past?",
                       "What did I like eating most at first?",
                       "What was my favourite dish until recently?",
                       "Which meal did I love originally?"),
    ("doctor", "self"): ("Which doctor did I have in the past?", "Who treated me at first?",
                         "Who was my doctor until recently?", "Which doctor was mine originally?"),
    ("instrument", "self"): ("Which instrument did I learn in the past?",
                             "What was I learning to play at first?",
                             "What instrument did I study until recently?",
                             "Which instrument did I take up originally?"),
    ("trip", "self"): ("Which country was I going to visit at first?",
                       "Where was my trip going originally?",
                       "What destination did I have in mind in the past?",
                       "Where was I heading until recently?"),
}
"""More ways to ask for a fact's earlier value, for the answer model's training twins only
(`conversation_rows.answer_rows`, with `SynthConfig.earlier_question_twins` > 0; default 0, tried
and not adopted on 2026-11-30): a training persona's question about the past comes again in one
of these, with other memory lines. The persona banks give training one such question per
attribute and person, and the reader, met with a development wording ("... previously?"),
answered the current value where the memory showed both (docs/journal.md, 2026-11-30). Written
after reading those errors; none repeats a dev or test entry, and none uses their past markers
("previously", "before the change", "before the switch", "before my last move", "before the
current one"). Keys: (attribute name, "self" or "other")."""


def earlier_twin(fact: str, user: str, rng) -> str | None:
    """A training-only question for the earlier value of `fact`'s attribute, asked by `user`
    (None where the fact is no persona attribute's or the bank has no entry for it).

    >>> import random
    >>> earlier_twin("Ana drives a Kia.", "Hugo", random.Random(0))
    'Which car did Ana have originally?'
    """
    topic = P.fact_topic(fact)
    if topic is None:
        return None
    attr, who = topic
    bank = EARLIER_TWINS.get((attr.name, "self" if who == user else "other"))
    return rng.choice(bank).format(name=who) if bank else None


def clause_extra(attribute: str, person: str, slot: str, cues: bool = False,
                 words: bool = False) -> tuple[str, ...]:
    """The training-only wordings of one clause or question ((), where there are none); with
    `cues`, also those of `CUE_CLAUSES`, with `words` those of `CUE_WORD_CLAUSES`.

    >>> clause_extra("home", "other", "change")[0]
    '{name} has moved house to {v}'
    >>> clause_extra("doctor", "self", "change", cues=True)[-1]
    'I go to {v} instead'
    >>> clause_extra("food", "other", "state", cues=True)
    ()
    >>> clause_extra("car", "self", "state", words=True)[-1]
    'my current car is {v}'
    """
    key = (attribute, person, slot)
    return (CLAUSES.get(key, ()) + (CUE_CLAUSES.get(key, ()) if cues else ())
            + (CUE_WORD_CLAUSES.get(key, ()) if words else ()))


def frame_extra(bank: tuple[str, ...], cues: bool = False,
                words: bool = False) -> tuple[str, ...]:
    """The training-only frames of a frame bank of `persona_phrases` (() for other banks); with
    `cues`, also those of `CUE_FRAMES`, with `words` those of `CUE_WORD_FRAMES`.

    >>> frame_extra(P.DIRECT)[0]
    'So, {c}.'
    >>> frame_extra(P.INDIRECT, cues=True)[-1]
    'I keep thinking about {e}.'
    >>> frame_extra(P.REPEAT, words=True)[0]
    'No news on that, {s}.'
    """
    return (FRAMES.get(bank, ()) + (CUE_FRAMES.get(bank, ()) if cues else ())
            + (CUE_WORD_FRAMES.get(bank, ()) if words else ()))


LOOKALIKES: dict[str, tuple[str, ...]] = {
    "home": ("{who} read a long article about {v} this morning.",
             "{who} looked at old photos of a weekend in {v}.",
             "{who} watched a football match played in {v}."),
    "job": ("{who} chatted with {v} at a party.", "{who} watched a film about {v}.",
            "{who} sat next to {v} on the train."),
    "car": ("{who} saw {v} parked outside the bakery.",
            "{who} heard an advert for {v} on the radio.",
            "{who} nearly got splashed by {v} at the crossing."),
    "class_day": ("{who} noticed the museum is free on {v}.",
                  "{who} heard the market is busiest on {v}.",
                  "{who} read that the library closes early on {v}."),
    "food": ("{who} watched a cooking video about {v}.",
             "{who} walked past a new stall selling {v}.",
             "{who} looked up how to pronounce {v}."),
    "doctor": ("{who} read an interview with {v} in the paper.",
               "{who} saw {v} on the local news.",
               "{who} heard that {v} gave a talk at the library."),
    "instrument": ("{who} heard a street musician playing {v}.",
                   "{who} saw {v} in a shop window.",
                   "{who} listened to an old recording of {v} at a friend's place."),
    "trip": ("{who} watched a documentary about {v}.", "{who} read a novel set in {v}.",
             "{who} saw a postcard from {v} on a friend's fridge."),
}
"""Look-alikes of a person's fact, for the write model's contrastive training rows only
(`conversation_rows.write_rows`, with `SynthConfig.persona_contrast_share` > 0; default 0): a
sentence that names a value of an attribute (a city, a job, a car, ...) and a person ({who}: "I",
a name, "My cousin"), in a relation that states nothing the persona tracks about anyone (an
article read, a car seen, a film watched). Beside a fact's turn it leaves the gold as it was
(the fact alone); in place of small talk the gold is "nothing to store". It answers candidate
C2's development errors of 2026-12-03 (afternoon): a value written into the wrong slot ("Lena's
favourite food is Peru.") and a change written onto the wrong person. Past tense, so that "I"
and a third person take the same verb. None is a clause of the persona banks, none states an
attribute (`persona_phrases.fact_topic` finds none; `tests/test_conversations_persona.py`), and
no conversation of any split is made from them."""


def lookalike(attribute: str, value: str, who: str, rng) -> str:
    """A look-alike (`LOOKALIKES`) of `attribute`, naming `value` and `who`, first letter capital.

    >>> import random
    >>> lookalike("trip", "Peru", "my cousin", random.Random(0))
    'My cousin read a novel set in Peru.'
    """
    text = rng.choice(LOOKALIKES[attribute]).format(who=who, v=value)
    return text[0].upper() + text[1:]
