"""Words of the senseless game: invented creature names, real items, conditions, distractor facts.

Creature names are an adjective from a small real list plus a noun built from syllables
(onset + vowel + coda, or two syllables), so "purple glarb" or "spotted zwoorp" means nothing
to a language model and no world knowledge can guess what it eats. Items come from real,
everyday categories (vegetables, metals, tools, animals, minerals, instruments, fabrics), so an
agent cannot tell the right option from the wrong one by plausibility: both are drawn from the
same pool. Everything is drawn from a `random.Random` the caller seeds.

    >>> import random
    >>> names = creature_names(3, random.Random(0))
    >>> len(names), len(set(names))
    (3, 3)
    >>> all(is_invented(name.split()[1]) for name in names)
    True
"""

from __future__ import annotations

import random
import re

ONSETS = ("gl", "z", "vl", "zw", "kn", "sn", "bl", "qu", "fl", "j", "thr", "shn", "pr", "dw",
          "gr", "sk", "pl", "br", "v")
VOWELS = ("a", "o", "u", "ee", "oo", "ai", "i", "e")
CODAS = ("rb", "rp", "x", "rg", "lb", "zz", "mph", "rk", "nk", "b", "p", "g", "sh", "v", "ft")

# Every word of the syllable grammar above that is a whole word of the all-MiniLM-L6-v2 (BERT
# uncased) vocabulary; regenerate it if ONSETS / VOWELS / CODAS change. tests/test_game.py
# checks generated names against that vocabulary when the package is installed.
ENGLISH_COLLISIONS = frozenset((
    "zip", "zev", "knox", "knob", "snap", "snoop", "blank", "blog", "blush", "blink", "flank",
    "flap", "flag", "flash", "flop", "flux", "flush", "flip", "flex", "flesh", "jax", "jazz",
    "job", "josh", "junk", "jug", "jeep", "jerk", "thrash", "prank", "prop", "prix", "prep",
    "grab", "grip", "greg", "skip", "plank", "plug", "plush", "brush", "brink", "brig", "vox",
    "vip", "verb", "zagreb",
))

_SYLLABLE = f"(?:{'|'.join(ONSETS)})(?:{'|'.join(VOWELS)})"
INVENTED_WORD = re.compile(f"^(?:{_SYLLABLE})?{_SYLLABLE}(?:{'|'.join(CODAS)})$")

ADJECTIVES = ("purple", "spotted", "striped", "speckled", "crimson", "amber", "teal", "violet",
              "ochre", "dappled", "scaly", "fuzzy", "lanky", "tiny", "giant", "wrinkled",
              "grumpy", "sleepy", "glossy", "hollow", "bristly", "lopsided", "mottled", "pale")

# Weather-like conditions; all start with a consonant so "It is a {condition} turn." reads well.
CONDITIONS = ("rainy", "sunny", "foggy", "windy", "snowy", "stormy", "cloudy", "misty", "frosty",
              "humid", "hazy", "breezy", "moonlit", "starry", "dusky", "gloomy")

ITEM_CATEGORIES: dict[str, tuple[str, ...]] = {
    "vegetable": ("carrot", "turnip", "leek", "radish", "onion", "potato", "cabbage", "parsnip"),
    "metal": ("copper", "tin", "iron", "silver", "zinc", "nickel", "bronze", "brass"),
    "tool": ("hammer", "chisel", "wrench", "trowel", "ladle", "saw", "spanner", "awl"),
    "animal": ("badger", "otter", "heron", "beetle", "ferret", "newt", "moth", "weasel"),
    "mineral": ("stone", "pebble", "marble", "slate", "quartz", "flint", "chalk", "granite"),
    "instrument": ("flute", "drum", "harp", "fiddle", "trumpet", "banjo", "oboe", "cello"),
    "fabric": ("wool", "silk", "linen", "felt", "velvet", "tweed", "denim", "satin"),
}
ITEMS: tuple[str, ...] = tuple(item for items in ITEM_CATEGORIES.values() for item in items)

# Facts about distractor creatures, never asked about. Some share the rules' items and
# conditions, so lexical recall meets near misses; none uses the rule verb "eats".
DISTRACTOR_TEMPLATES = (
    "The {d} hums at dusk.",
    "The {d} sleeps under the {item}.",
    "On {condition} nights, the {d} counts its teeth.",
    "The {d} is afraid of the {item}.",
    "The {d} sings whenever it is {condition}.",
    "Nobody has ever seen the {d} blink.",
    "The {d} keeps the {item} in its burrow.",
    "The {d} and the {d2} are cousins.",
    "The {d} paints the {item} blue on {condition} days.",
    "The {d} walks backwards past the {item}.",
)


def is_invented(word: str) -> bool:
    """True when `word` comes from the syllable grammar and is not an English word."""
    return bool(INVENTED_WORD.match(word)) and word not in ENGLISH_COLLISIONS


def invented_noun(rng: random.Random) -> str:
    """One nonsense noun: a closed syllable (70%) or an open syllable before a closed one."""
    while True:
        word = rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
        if rng.random() < 0.3:
            word = rng.choice(ONSETS) + rng.choice(VOWELS) + word
        if is_invented(word):
            return word


def creature_names(count: int, rng: random.Random, *, avoid: set[str] | None = None) -> list[str]:
    """`count` creature names "adjective noun" with distinct adjectives and distinct nouns,
    none of whose nouns is in `avoid` (nouns already used elsewhere in the episode)."""
    if count > len(ADJECTIVES):
        raise ValueError(f"at most {len(ADJECTIVES)} creatures, got {count}")
    taken = set(avoid or ())
    nouns: list[str] = []
    while len(nouns) < count:
        noun = invented_noun(rng)
        if noun not in taken:
            taken.add(noun)
            nouns.append(noun)
    adjectives = rng.sample(ADJECTIVES, count)
    return [f"{adj} {noun}" for adj, noun in zip(adjectives, nouns, strict=True)]


def distractor_facts(count: int, creatures: list[str], conditions: list[str], items: list[str],
                     rng: random.Random,
                     templates: tuple[str, ...] = DISTRACTOR_TEMPLATES) -> list[str]:
    """`count` distinct irrelevant facts about `creatures` (not the rule creatures), from
    `templates` (a phrasing set's bank, `phrasing.DISTRACTORS`)."""
    facts: dict[str, None] = {}
    limit = 50 * count + 100
    while len(facts) < count and limit > 0:
        limit -= 1
        d, d2 = rng.sample(creatures, 2) if len(creatures) > 1 else (creatures[0], creatures[0])
        template = rng.choice(templates)
        if "{d2}" in template and d == d2:
            continue
        fact = template.format(d=d, d2=d2, item=rng.choice(items), condition=rng.choice(conditions))
        facts.setdefault(fact, None)
    return list(facts)
