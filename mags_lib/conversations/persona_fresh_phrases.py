"""A second development bank of persona phrasings: the `fresh` split, written 2026-12-07.

The banks of `persona_phrases` give the development split one wording per frame (a quarter of a
four-entry bank), and after many sessions of choices read on them, those wordings no longer
stand for ones a model has not met: the deployed write model chooses 0.961 of its ops right on
development personas it never saw, against 0.887 on the test personas, and 0.870 on these
(journal, 2026-12-07 twelfth session). This module
holds wordings written in one sitting, after the test scores were known but without reading
which test turns failed, and before any model was scored on them: every bank of
`persona_phrases` has its counterpart here (`fresh_bank`), none of whose entries appears in
`persona_phrases` or `persona_train_phrases` (a test checks). Personas of the `fresh` split
(`persona.SEEDS["fresh"]`) draw every turn and question from these banks only; values, names
and relations are shared with the other splits. One assistant wording here, "Thanks for the
update.", carries a word the writer reads as a cue (it writes an `update` for it); the test
banks' assistant entry does not, so this split is harder than the test split on that turn.

It is a development set like `dev`, for choosing things the older development wordings cannot
tell apart (how a write model meets wordings it was not steered by); once its scores have
guided a choice it says no more about unseen wordings than `dev` does. Nothing here enters a
dataset: synthesis draws training personas only.
"""

from __future__ import annotations

from mags_lib.conversations import persona_phrases as P

F = P.Form

FORMS: dict[tuple[str, str], P.Form] = {
    ("home", "self"): F(
        ("I'm a resident of {v}", "my address is in {v} these days", "I've got an apartment in {v}"),
        ("I've left for {v}", "we finally made the move to {v}", "I now live over in {v}"),
        ("leaving for {v}", "hiring a van to move to {v}", "unpacking boxes in {v}"),
        ("In which city do I live?", "Where am I living right now?", "What city is home now?"),
        ("In which city did I live earlier?", "Where was home before?",
         "Which city was I in before moving?"),
        ("On what date did I move to {v}?", "When was my move to {v}?",
         "When did I arrive in {v}?")),
    ("home", "other"): F(
        ("{name} has an apartment in {v}", "{name} is living over in {v}", "{name} has settled in {v}"),
        ("{name} has left for {v}", "{name} made the move to {v}",
         "{name} now lives over in {v}"),
        ("{name} leaving for {v}", "{name} unpacking boxes in {v}", "{name}'s house-hunt in {v}"),
        ("In which city does {name} live?", "Where is {name} living right now?",
         "What city is {name}'s home now?"),
        ("In which city did {name} live earlier?", "Where was {name}'s home before?",
         "Which city was {name} in before moving?"),
        ("On what date did {name} move to {v}?", "When was {name}'s move to {v}?",
         "When did {name} arrive in {v}?")),
    ("job", "self"): F(
        ("I'm on the payroll as {v}", "I hold a post as {v}", "for work I'm {v}"),
        ("I handed in my notice and am now {v}", "I've taken a position as {v}",
         "I started working as {v} this month"),
        ("my contract as {v}", "accepting the offer to work as {v}", "my probation period as {v}"),
        ("What do I work as?", "What's my job right now?", "How do I earn a living now?"),
        ("What job did I have earlier?", "What did I do for a living before?",
         "What was my work before the change?"),
        ("On what date did I become {v}?", "When did my work as {v} begin?",
         "When did I take the position as {v}?")),
    ("job", "other"): F(
        ("{name} is on the payroll as {v}", "{name} holds a post as {v}", "for work {name} is {v}"),
        ("{name} handed in the notice and is now {v}", "{name} has taken a position as {v}",
         "{name} started working as {v} this month"),
        ("{name}'s appointment as {v}", "{name} accepting the offer to work as {v}",
         "{name}'s probation period as {v}"),
        ("What does {name} work as?", "What's {name}'s job right now?",
         "How does {name} earn a living now?"),
        ("What job did {name} have earlier?", "What did {name} do for a living before?",
         "What was {name}'s work before the change?"),
        ("On what date did {name} become {v}?", "When did {name}'s work as {v} begin?",
         "When did {name} take the position as {v}?")),
    ("car", "self"): F(
        ("I'm the owner of {v}", "I commute in {v}", "the car in my driveway is {v}"),
        ("I got rid of my car and got {v}", "these days I'm behind the wheel of {v}",
         "my old car is gone and I now have {v}"),
        ("getting rid of the old car for {v}", "driving {v} home from the dealer",
         "the new car, {v}"),
        ("Which car do I have?", "What do I drive right now?", "What's my car now?"),
        ("Which car did I have earlier?", "What did I drive before?",
         "What was my car before this one?"),
        ("On what date did I get {v}?", "When did I start driving {v}?",
         "When did {v} become my car?")),
    ("car", "other"): F(
        ("{name} is the owner of {v}", "{name} commutes in {v}", "the car {name} drives is {v}"),
        ("{name} got rid of the old car and got {v}", "{name} is behind the wheel of {v} these days",
         "the old car is gone, {name} now has {v}"),
        ("{name} getting rid of the old car for {v}", "{name} driving {v} home from the dealer",
         "{name} test-driving {v}"),
        ("Which car does {name} have?", "What does {name} drive right now?",
         "What's {name}'s car now?"),
        ("Which car did {name} have earlier?", "What did {name} drive before?",
         "What was {name}'s car before this one?"),
        ("On what date did {name} get {v}?", "When did {name} start driving {v}?",
         "When did {v} become {name}'s car?")),
    ("class_day", "self"): F(
        ("{v} are for yoga in my week", "{v} is when I go to my yoga class", "I roll out my mat on {v}"),
        ("the instructor now runs my yoga on {v}", "my yoga sessions are on {v} starting this week",
         "the yoga teacher switched our class to {v}"),
        ("the yoga class changing to {v}", "rearranging my week around yoga on {v}", "the new yoga timetable with {v}"),
        ("Which day do I have yoga?", "What day is yoga for me right now?",
         "On what day is my yoga class?"),
        ("Which day did I have yoga earlier?", "What day was yoga for me before?",
         "On what day was my yoga class before it moved?"),
        ("On what date did yoga move to {v}?", "When did my yoga class change to {v}?",
         "When did I start doing yoga on {v}?")),
    ("food", "self"): F(
        ("I could live on {v}", "{v} is the dish I could eat forever", "I'm crazy about {v}"),
        ("{v} tops my list of dishes now", "my cravings these days are all {v}",
         "{v} replaced my old favourite"),
        ("tasting {v} in a tiny restaurant", "my obsession with {v}", "the cookery class on {v}"),
        ("What's my favourite dish?", "Which food is my favourite right now?",
         "What do I like to eat most?"),
        ("What was my favourite dish earlier?", "Which food did I like most before?",
         "What was my top dish before the change?"),
        ("On what date did {v} become my favourite?", "When did I start liking {v} best?",
         "When did my favourite food change to {v}?")),
    ("doctor", "self"): F(
        ("I'm registered at {v}'s practice", "I go to {v} when I'm ill", "{v} handles my check-ups"),
        ("my appointments are with {v} these days", "I moved to {v} as my GP",
         "{v} took over as my doctor"),
        ("the paperwork for {v}", "my first appointment with {v}", "transferring my file to {v}"),
        ("Which doctor do I have?", "Who is my GP right now?", "Who do I see when I'm ill?"),
        ("Which doctor did I have earlier?", "Who was my GP before?",
         "Who did I see when ill before the change?"),
        ("On what date did I start seeing {v}?", "When did {v} take over as my doctor?",
         "When did I sign up with {v}?")),
    ("instrument", "self"): F(
        ("I'm taking lessons on {v}", "I'm teaching myself {v}", "I play {v} in my free time"),
        ("I put my old instrument away and bought {v}", "I now practise {v} instead",
         "these days my practice is all {v}"),
        ("renting {v} for lessons", "the music teacher for {v}", "practising {v} daily"),
        ("What instrument am I learning?", "Which instrument do I play right now?",
         "What do I take music lessons for?"),
        ("What instrument was I learning earlier?", "Which instrument did I play before?",
         "What did I take music lessons for before?"),
        ("On what date did I start {v}?", "When did I begin lessons for {v}?",
         "When did I move on to {v}?")),
    ("trip", "self"): F(
        ("this summer I'm flying to {v}", "we've planned a holiday to {v}",
         "my trip this year is to {v}"),
        ("we've swapped the holiday for {v}", "our holiday destination is now {v}",
         "I changed my travel plans to {v}"),
        ("the plan to go to {v}", "changing the holiday to {v}", "booking flights to {v}"),
        ("Which country am I travelling to?", "Where is my holiday going to be?",
         "What's the destination of my next trip?"),
        ("Which country was I travelling to earlier?", "Where was my holiday going before?",
         "What was the trip's destination before the change?"),
        ("On what date did I pick {v} for the trip?", "When did the trip change to {v}?",
         "When did I book flights to {v}?")),
}

FRAMES: dict[str, tuple[str, ...]] = {
    "FIRST": ("You should know {s}.", "Let me add something: {s}.", "For the record, {s}."),
    "FIRST_OTHER": ("Let me tell you about my {rel}: {s}.", "As for my {rel}, {s}.",
                    "Did I mention my {rel}? {s}."),
    "DIRECT": ("Heads up, {c}.", "Well, {c}!", "You won't believe it, {c}."),
    "DIRECT_OTHER": ("My {rel} has news: {c}.", "Can you believe it, my {rel} {c}.",
                     "Quick update about my {rel}: {c}."),
    "INDIRECT": ("After {e}, I have had far less free time.",
                 "Since {e}, my mornings have been calmer.",
                 "I've been so busy with {e} lately."),
    "CORRECTION": ("Scratch what I said: {s}, not {old}.",
                   "I told you the wrong thing: {s}, not {old}.",
                   "That was a mistake earlier, {s}, not {old}."),
    "REPEAT": ("Again, {s}.", "Once more, {s}.", "Nothing has changed, {s}."),
    "CHIT_CHAT": ("The kettle broke this morning.", "I slept in until ten today.",
                  "There was a long queue at the bakery.", "I watered the plants earlier.",
                  "It was windy on the way home.", "I listened to the radio all afternoon."),
    "ASSISTANT": ("Noted, thank you.", "Okay, I've got that.", "Thanks for the update."),
    "GREETING": ("Greetings once more!", "Hello there, it's me.", "Hey, how's it going?"),
}


def _index() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each bank of `persona_phrases` (the tuple itself) -> its fresh counterpart."""
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    for attr in P.ATTRIBUTES:
        for kind, form in (("self", attr.self_form), ("other", attr.other_form)):
            if form is None:
                continue
            fresh = FORMS[(attr.name, kind)]
            for slot in ("state", "change", "event", "ask_current", "ask_earlier", "ask_when"):
                out[getattr(form, slot)] = getattr(fresh, slot)
    for name, fresh in FRAMES.items():
        out[getattr(P, name)] = fresh
    return out


_FRESH = _index()


def fresh_bank(bank: tuple[str, ...]) -> tuple[str, ...]:
    """The fresh counterpart of `bank`, a bank of `persona_phrases`.

    >>> fresh_bank(P.GREETING)
    ('Greetings once more!', "Hello there, it's me.", "Hey, how's it going?")
    """
    try:
        return _FRESH[bank]
    except KeyError:
        raise ValueError(f"no fresh counterpart for the bank {bank[:2]}...: add it to "
                         "persona_fresh_phrases.FORMS or FRAMES") from None
