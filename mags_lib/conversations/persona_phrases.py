"""The phrasing banks of the persona conversations, each split into train / dev / test.

Every bank is a tuple read by position (`split_of`): the last quarter of its entries (one at
least) is for test, the quarter before for development, the rest for training. The test entries were
written once, with the rest, before anything was tuned on them, and only a frozen
configuration is scored on them. Values (cities, jobs, names) are shared by all splits: what is
held out is how things are said, as in the game's phrasing banks.

Placeholders: {v} the value, {old} the value it replaces, {name} the person spoken of,
{s} a whole state clause, {c} a change clause, {e} an event noun phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SPLITS = ("train", "dev", "test")


def split_of(bank: tuple[str, ...], split: str) -> tuple[str, ...]:
    """The entries of `bank` for `split`: the last quarter (at least one) for test, the
    quarter before it for dev, the rest for training.

    >>> split_of(("a", "b", "c", "d"), "train"), split_of(("a", "b", "c"), "test")
    (('a', 'b'), ('c',))
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use one of {SPLITS}")
    if len(bank) < 3:
        raise ValueError(f"a phrasing bank needs 3 entries or more, not {len(bank)}: {bank}")
    k = max(1, len(bank) // 4)
    parts = {"train": bank[:-2 * k], "dev": bank[-2 * k:-k], "test": bank[-k:]}
    return parts[split]


@dataclass(frozen=True)
class Form:
    """How one attribute is said of one person ('self': first person, 'other': third)."""

    state: tuple[str, ...]  # a clause stating the value
    change: tuple[str, ...]  # a clause stating that it changed to {v}
    event: tuple[str, ...]  # a noun phrase naming the change ("the move to {v}")
    ask_current: tuple[str, ...]
    ask_earlier: tuple[str, ...]
    ask_when: tuple[str, ...]


@dataclass(frozen=True)
class Attribute:
    name: str
    values: tuple[str, ...]
    fact: str  # the gold write, third person: "{who} lives in {v}."
    self_form: Form
    other_form: Form | None = None  # None: only said of the user


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "home", ("Porto", "Lisbon", "Madrid", "Dublin", "Oslo", "Krakow", "Lyon", "Turin",
                 "Ghent", "Bergen", "Seville", "Leeds", "Graz", "Utrecht"),
        "{who} lives in {v}.",
        Form(("I live in {v}", "home for me is {v}", "I'm based in {v}", "my place is in {v}"),
             ("I moved to {v}", "I've relocated to {v}", "I just settled in {v}",
              "I packed up and went to live in {v}"),
             ("the move to {v}", "relocating to {v}", "my move to {v}", "settling in {v}"),
             ("Where do I live now?", "Which city am I living in?", "Where is my home these days?"),
             ("Where did I live before?", "Which city did I live in previously?",
              "Where was I living before my last move?"),
             ("When did I move to {v}?", "When did I relocate to {v}?",
              "At what date did I settle in {v}?")),
        Form(("{name} lives in {v}", "{name}'s home is in {v}", "{name} is based in {v}",
              "{name} has a flat in {v}"),
             ("{name} moved to {v}", "{name} relocated to {v}", "{name} just settled in {v}",
              "{name} packed up and went to live in {v}"),
             ("{name}'s move to {v}", "{name} relocating to {v}", "{name} moving to {v}",
              "{name} settling in {v}"),
             ("Where does {name} live now?", "Which city is {name} living in?",
              "Where is {name}'s home these days?"),
             ("Where did {name} live before?", "Which city did {name} live in previously?",
              "Where was {name} living before the last move?"),
             ("When did {name} move to {v}?", "When did {name} relocate to {v}?",
              "At what date did {name} settle in {v}?")),
    ),
    Attribute(
        "job", ("a nurse", "a teacher", "an architect", "a baker", "a pilot", "a librarian",
                "an accountant", "an electrician", "a chef", "a translator", "a pharmacist",
                "a carpenter"),
        "{who} works as {v}.",
        Form(("I work as {v}", "I'm {v} by trade", "I earn my living as {v}",
              "my job is being {v}"),
             ("I started a new job as {v}", "I switched careers and I'm now {v}",
              "I got hired as {v}", "I changed jobs and now work as {v}"),
             ("the new job as {v}", "starting work as {v}", "becoming {v}",
              "my switch to working as {v}"),
             ("What do I do for work now?", "What is my job these days?",
              "What's my current occupation?"),
             ("What was my job before?", "What did I work as previously?",
              "What was my occupation before the switch?"),
             ("When did I start working as {v}?", "When did I become {v}?",
              "At what date did I take the job as {v}?")),
        Form(("{name} works as {v}", "{name} is {v} by trade", "{name} earns a living as {v}",
              "{name}'s job is being {v}"),
             ("{name} started a new job as {v}", "{name} switched careers and is now {v}",
              "{name} got hired as {v}", "{name} changed jobs and now works as {v}"),
             ("{name}'s new job as {v}", "{name} starting work as {v}", "{name} becoming {v}",
              "{name}'s switch to working as {v}"),
             ("What does {name} do for work now?", "What is {name}'s job these days?",
              "What's {name}'s current occupation?"),
             ("What was {name}'s job before?", "What did {name} work as previously?",
              "What was {name}'s occupation before the switch?"),
             ("When did {name} start working as {v}?", "When did {name} become {v}?",
              "At what date did {name} take the job as {v}?")),
    ),
    Attribute(
        "car", ("a Volvo", "a Fiat", "a Skoda", "a Toyota", "a Renault", "a Mazda", "a Kia",
                "a Saab", "a Peugeot", "a Honda"),
        "{who} drives {v}.",
        Form(("I drive {v}", "my car is {v}", "I get around in {v}", "I own {v}"),
             ("I sold my old car and bought {v}", "I traded in my car for {v}",
              "I picked up {v} to replace my car", "I swapped my car for {v}"),
             ("buying {v}", "getting {v}", "the switch to {v}", "picking up {v}"),
             ("What car do I drive now?", "Which car do I own these days?",
              "What am I driving at the moment?"),
             ("What car did I drive before?", "Which car did I have previously?",
              "What was I driving before the current one?"),
             ("When did I get {v}?", "When did I buy {v}?", "At what date did I pick up {v}?")),
        Form(("{name} drives {v}", "{name}'s car is {v}", "{name} gets around in {v}",
              "{name} owns {v}"),
             ("{name} sold the old car and bought {v}", "{name} traded in the car for {v}",
              "{name} picked up {v} to replace the old car", "{name} swapped cars for {v}"),
             ("{name} buying {v}", "{name} getting {v}", "{name}'s switch to {v}",
              "{name} picking up {v}"),
             ("What car does {name} drive now?", "Which car does {name} own these days?",
              "What is {name} driving at the moment?"),
             ("What car did {name} drive before?", "Which car did {name} have previously?",
              "What was {name} driving before the current one?"),
             ("When did {name} get {v}?", "When did {name} buy {v}?",
              "At what date did {name} pick up {v}?")),
    ),
    Attribute(
        "class_day", ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays",
                      "Saturdays", "Sundays"),
        "{who}'s yoga class is on {v}.",
        Form(("my yoga class is on {v}", "I do yoga on {v}", "I go to yoga every week on {v}",
              "{v} are my yoga days"),
             ("my yoga class moved to {v}", "the studio put my yoga class on {v}",
              "I switched my yoga to {v}", "yoga is now on {v} for me"),
             ("yoga moving to {v}", "the switch to yoga on {v}", "the new yoga slot on {v}",
              "doing yoga on {v}"),
             ("What day is my yoga class now?", "On which day do I do yoga these days?",
              "When is my weekly yoga at the moment?"),
             ("What day was my yoga class before?", "On which day did I do yoga previously?",
              "When was my weekly yoga before the change?"),
             ("When did my yoga move to {v}?", "When did I switch yoga to {v}?",
              "At what date did yoga change to {v}?")),
    ),
    Attribute(
        "food", ("sushi", "lasagne", "ramen", "paella", "tacos", "dumplings", "curry",
                 "risotto", "falafel", "pho"),
        "{who}'s favourite food is {v}.",
        Form(("my favourite food is {v}", "I love {v} more than anything",
              "nothing beats {v} for me", "{v} is my favourite dish"),
             ("my favourite food is now {v}", "these days I'd pick {v} over anything",
              "I've gone off my old favourite, it's {v} now", "{v} has become my new favourite"),
             ("discovering {v}", "my new love of {v}", "falling for {v}", "getting hooked on {v}"),
             ("What is my favourite food now?", "Which dish do I like best these days?",
              "What food do I love most at the moment?"),
             ("What was my favourite food before?", "Which dish did I like best previously?",
              "What food did I love most before?"),
             ("When did {v} become my favourite?", "When did I start loving {v}?",
              "At what date did I fall for {v}?")),
    ),
    Attribute(
        "doctor", ("Dr Silva", "Dr Okafor", "Dr Brandt", "Dr Nowak", "Dr Haddad", "Dr Lindqvist",
                   "Dr Moreau", "Dr Tanaka", "Dr Costa", "Dr Ferreira"),
        "{who}'s doctor is {v}.",
        Form(("my doctor is {v}", "I see {v} for check-ups", "{v} is my GP",
              "I'm a patient of {v}"),
             ("I switched to {v} as my doctor", "my new doctor is {v}",
              "I registered with {v} instead", "I changed my GP to {v}"),
             ("switching to {v}", "registering with {v}", "the change to {v}",
              "moving my records to {v}"),
             ("Who is my doctor now?", "Which doctor do I see these days?",
              "Who is my GP at the moment?"),
             ("Who was my doctor before?", "Which doctor did I see previously?",
              "Who was my GP before the change?"),
             ("When did I switch to {v}?", "When did {v} become my doctor?",
              "At what date did I register with {v}?")),
    ),
    Attribute(
        "instrument", ("the cello", "the piano", "the banjo", "the violin", "the drums",
                       "the flute", "the ukulele", "the trumpet", "the harp", "the saxophone"),
        "{who} is learning to play {v}.",
        Form(("I'm learning {v}", "I take lessons for {v}", "I practise {v} every evening",
              "I've been studying {v}"),
             ("I gave up my old instrument and took up {v}", "I'm learning {v} now instead",
              "I switched to {v}", "I started over with {v}"),
             ("taking up {v}", "my switch to {v}", "starting {v}", "the first lessons on {v}"),
             ("Which instrument am I learning now?", "What instrument do I practise these days?",
              "What am I studying musically at the moment?"),
             ("Which instrument was I learning before?", "What instrument did I practise previously?",
              "What was I studying musically before?"),
             ("When did I take up {v}?", "When did I switch to {v}?",
              "At what date did I start {v}?")),
    ),
    Attribute(
        "trip", ("Japan", "Peru", "Iceland", "Morocco", "Vietnam", "Canada", "Greece",
                 "Norway", "Chile", "Kenya"),
        "{who} is planning a trip to {v}.",
        Form(("I'm planning a trip to {v}", "we're saving up to visit {v}",
              "my next holiday is in {v}", "I booked time off to travel to {v}"),
             ("we changed the trip and we're going to {v}", "the holiday is now in {v}",
              "I rebooked the trip for {v}", "plans changed, the trip is to {v} now"),
             ("rebooking for {v}", "the new plan to visit {v}", "switching the trip to {v}",
              "choosing {v} for the holiday"),
             ("Where am I travelling on my next trip?", "Which country is my next holiday in?",
              "Where is my upcoming trip headed?"),
             ("Where was I planning to travel before?", "Which country was the trip to previously?",
              "Where was my holiday headed before the change?"),
             ("When did I change the trip to {v}?", "When did I decide on {v}?",
              "At what date did I rebook for {v}?")),
    ),
)


def fact_value(fact: str) -> tuple[Attribute, str, str] | None:
    """The attribute a gold fact states, whom it is about and the value, read off
    `Attribute.fact` (None for a fact of no attribute, e.g. LoCoMo's).

    >>> attr, who, value = fact_value("Ana is planning a trip to Peru.")
    >>> attr.name, who, value
    ('trip', 'Ana', 'Peru')
    """
    for attr in ATTRIBUTES:
        head, _, rest = attr.fact.partition("{who}")
        between, _, tail = rest.partition("{v}")
        m = re.fullmatch(f"{re.escape(head)}(.+?){re.escape(between)}(.+){re.escape(tail)}",
                         fact)
        if m:
            return attr, m.group(1), m.group(2)
    return None


def fact_topic(fact: str) -> tuple[Attribute, str] | None:
    """The attribute a gold fact states and whom it is about (`fact_value` without the value).

    >>> attr, who = fact_topic("Ana's yoga class is on Friday.")
    >>> attr.name, who
    ('class_day', 'Ana')
    """
    found = fact_value(fact)
    return None if found is None else found[:2]


FIRST = ("{s}.", "Oh, and {s}.", "Something about me: {s}.", "For context, {s}.")
FIRST_OTHER = ("My {rel} {s}.", "You know my {rel}? {s}.", "About my {rel}: {s}.",
               "A bit of family news, my {rel} {s}.")
DIRECT = ("{c}.", "Big news: {c}!", "Update on my side: {c}.", "Guess what, {c}.")
DIRECT_OTHER = ("My {rel} {c}.", "News about my {rel}: {c}.", "Heard from my {rel}: {c}.",
                "Family update, my {rel} {c}.")
INDIRECT = ("Since {e}, my weekends feel completely different.",
            "Ever since {e}, I have been sleeping better.",
            "Things have been hectic after {e}.",
            "Life changed a lot with {e}.")
CORRECTION = ("Sorry, I got that wrong before: {s}, not {old}.",
              "Correction to what I said earlier: {s}, not {old}.",
              "Wait, I misspoke last time: {s}, not {old}.",
              "Let me fix something: {s}, not {old}.")
REPEAT = ("As I said, {s}.", "Like I told you, {s}.", "Like I mentioned, {s}.",
          "Just to repeat, {s}.")
CHIT_CHAT = ("The weather has been lovely today.", "I watched a great documentary last night.",
             "Work has been pretty quiet this week.", "I finally cleaned out the garage.",
             "My neighbour's dog barked all morning.", "I tried a new coffee place downtown.",
             "The traffic this morning was terrible.", "I have been reading a mystery novel.",
             "Our internet was down for a few hours.", "I could really use a long nap.",
             "The park near us has new benches.", "I spent the evening sorting old photos.")
ASSISTANT = ("Got it, thanks for telling me.", "Thanks, noted.", "Understood.",
             "I'll remember that.")
GREETING = ("Hi again!", "Hello, me again.", "Hey, it's me.", "Good to talk again.")
# Training-only banks: turns that carry no fact, and frames of a repeat, used by synthesis
# (`synth.conversation_rows`) for extra "nothing to store" write rows. They are not split by
# position: no conversation of any split is made from them, so dev and test stay as written.
# Added after reading the write model's development errors (greetings and repeats written as
# facts); the dev and test banks above were not touched.
TRAIN_SMALL_TALK = (
    "Hello there!", "Hi, how are you doing?", "Morning! Got a minute?", "Hey, back again.",
    "Good evening!", "Hi, it's been a while.", "Hello! Quick chat?", "Hey hey.",
    "Thanks for listening.", "Talk soon!", "That's all for today.", "Bye for now.",
    "Anyway, enough about that.", "Haha, that's funny.", "Oh well, never mind.", "Right, okay.",
    "It's been a long day.", "What a week it has been.",
    "It rained all afternoon.", "I had a big lunch.",
    "My phone battery died earlier.", "I made pancakes this morning.",
    "The neighbours were loud last night.", "I went for a short walk.",
    "There was a lovely sunset today.", "I'm in a good mood today.",
    "I forgot my umbrella today.", "We ordered pizza tonight.",
    # Added 2026-11-30 (noon) after the development errors "Hey, it's me." and "I have been
    # reading a mystery novel." stored as facts: more openers that only announce the speaker,
    # and passing activities and moods of the moment, which are not facts about the person.
    "Hey, just me checking in.", "Yo, I'm back.", "Hello, hello!",
    "It's me, your favourite user.", "Hi! Me once more.", "Knock knock, it's me.",
    "Hey, sorry for the late reply.", "Good morning to you!", "Evening! Hope you're well.",
    "I have been watching a cooking show lately.", "I've been doing a crossword puzzle.",
    "I have been listening to an old album today.", "I was flipping through a magazine.",
    "I've been scrolling through the news all morning.", "I'm halfway through a long podcast.",
    "I have been baking cookies this afternoon.", "I was playing a board game with friends.",
    "I have been tidying my desk.", "I just finished a jigsaw puzzle.",
    "I'm a bit tired today.", "I feel like having ice cream.", "I'm bored, to be honest.",
    "The bus was late again.", "My tea went cold.", "It snowed a little this morning.",
    "I saw a funny video earlier.", "There's a street fair outside.",
    "Hmm, let me think.", "Okay, cool.", "Interesting, tell me more.",
)
TRAIN_REPEAT = ("As I told you before, {s}.", "Same as last time, {s}.",
                "Nothing new there: {s}.", "Still the same, {s}.", "I think I said this: {s}.",
                "Just so you remember, {s}.")
RELATIONS = ("cousin", "friend", "colleague", "neighbour", "flatmate", "old classmate")
PEOPLE = ("Ana", "Tomas", "Lena", "Marco", "Priya", "Jonas", "Chloe", "Ravi", "Ines", "Oskar",
          "Yara", "Felix", "Nadia", "Hugo", "Mira", "Emil")
