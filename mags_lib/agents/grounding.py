"""Grounding of a written fact: does it come from the text it was written from?

    from mags_lib.agents.grounding import unsupported_names, unshared_words

    unsupported_names("On Wednesdays, Lena eats risotto.",
                      "[3 May 2023] Lena: I've gone off my old favourite, it's risotto now.")
    # -> ['Wednesdays']
    unshared_words("Yara is wearing a smartwatch.", "[8 March 2023] Yara: Hey, it's me.")
    # -> ['wearing', 'smartwatch']  (the fact shares no content word with the turn)

A small write model paraphrases freely, and where it invents, it invents names: a day ("On
Wednesdays, Lena eats only violin."), a place ("Yara works at Utrecht University." for "I'm based
in Utrecht."), an occasion ("On Japan's Cherry Blossom Day"). Once such a fact is stored, the
write prompt shows it again as an already stored fact and the model copies it into the next
ones. A name here is a capitalised word that is not a common function word (so the sentence's
first "On" or "The" is not one), or a number; it is supported when the observation has it, in
any case, singular or plural, with or without "'s". The verbs and nouns a fact paraphrases are
not checked: "Chloe lives in Lisbon." for "Chloe is based in Lisbon." is the writer's job.

Only the observation supports a name, and the people who have spoken so far (a turn's "you" is
one of them: "Jon thanks Gina." for Jon's "Thanks for having my back."): the recalled lines
shown to the writer are where copied inventions come from. The check reads no gold and no task
structure; `agents.loop` applies it to each add / update of the write model
(`LoopConfig.grounding`, off by default: on the development personas it did not help).

A second, coarser check (`unshared_words`, `LoopConfig.grounding_words`) asks only that a fact
share one content word with the turn's words (its date and the people who have spoken left
out, words compared by a crude stem: "moved" / "move", "reading" / "read"). It is for the
writer's other invention: a whole fact written for a turn that states none ("Yara is wearing a
smartwatch." for "Hey, it's me."). A paraphrase keeps at least its object ("Lisbon", "teacher",
"mystery novel"), so it passes, right or wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mags_lib.memory.lexical import STOPWORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,:]\d+)*")
# the memory's stopwords, and what opens a spoken sentence without naming anything
_FUNCTION = STOPWORDS | {"i'm", "i've", "i'd", "i'll", "yes", "oh", "ok", "okay", "well", "also",
                         "every", "since", "still", "yet", "already", "today", "yesterday",
                         "tomorrow"}


def _key(word: str) -> str:
    w = word.lower().replace("\u2019", "'")
    for tail in ("'s", "'"):
        if w.endswith(tail):
            w = w[: -len(tail)]
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def names(text: str) -> list[str]:
    """The words of `text` that name something: capitalised words that are not function words,
    and numbers, in order, once each.

    >>> names("On Wednesdays, Lena's yoga class meets at 7 in the Old Hall.")
    ['Wednesdays', "Lena's", '7', 'Old', 'Hall']
    """
    out: list[str] = []
    for w in _WORD.findall(text):
        named = w[0].isdigit() or (w[0].isupper() and _key(w) not in _FUNCTION)
        if named and w not in out:
            out.append(w)
    return out


def _stem(word: str) -> str:
    w = _key(word)
    for tail in ("ings", "ing", "ies", "ied", "ed", "es", "ly", "e", "y"):
        if w.endswith(tail) and len(w) - len(tail) >= 3:
            return w[: -len(tail)]
    return w


def _same(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def content_words(text: str, leave_out: Iterable[str] = ()) -> list[str]:
    """The words of `text` that carry content: not function words, not in `leave_out` (the
    people speaking), in order, once each.

    >>> content_words("Yara's favourite food is a mystery novel.", leave_out=["Yara"])
    ['favourite', 'food', 'mystery', 'novel']
    """
    out: list[str] = []
    skip = {_key(w) for w in leave_out}
    for w in _WORD.findall(text):
        if _key(w) not in _FUNCTION and _key(w) not in skip and w not in out:
            out.append(w)
    return out


_DATE = re.compile(r"^\s*\[[^\]]*\]\s*")


def unshared_words(fact: str, observation: str, also: Iterable[str] = ()) -> list[str]:
    """The content words of `fact` when none of them is in `observation` (its "[date]" and
    the speakers left out: `also` and the turn's own speaker); [] when one is shared, or when
    the fact has no content word of its own.

    >>> obs = "[8 March 2023] Lena: I have been reading a mystery novel."
    >>> unshared_words("Lena reads mystery novels.", obs), unshared_words("Lena is learning to drive.", obs)
    ([], ['learning', 'drive'])
    >>> unshared_words("Ana lives in Lisbon.", "[1 May 2023] Ana: Since the move to Lisbon, I sleep well.")
    []
    """
    people = [*also, *([speaker_of(observation)] if speaker_of(observation) else [])]
    words = content_words(fact, leave_out=[p for who in people for p in who.split()])
    have = [_stem(w) for w in content_words(_DATE.sub("", observation))]
    if not words or any(_same(_stem(w), h) for w in words for h in have):
        return []
    return words


_SPEAKER = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?([A-Z][\w'-]*(?: [A-Z][\w'-]*)?):\s")


def speaker_of(observation: str) -> str | None:
    """Who says a dialogue turn, read from its "[date] Name: words" form, else None.

    >>> speaker_of("[8 May 2023] Ana: I moved to Lisbon."), speaker_of("It rains.")
    ('Ana', None)
    """
    m = _SPEAKER.match(observation)
    return m.group(1) if m else None


def unsupported_names(fact: str, observation: str, also: Iterable[str] = ()) -> list[str]:
    """The names of `fact` that neither `observation` nor `also` (more names that support, such
    as the people who have spoken so far: "you" in a turn is one of them) has; see the module.

    >>> obs = "[3 May 2023] Lena: Update on my side: I've gone off my old favourite, it's sushi now."
    >>> unsupported_names("On Wednesdays, Lena eats only sushi.", obs)
    ['Wednesdays']
    >>> unsupported_names("Lena's favourite food is sushi.", obs)
    []
    >>> unsupported_names("Jon thanks Gina.", "[2 May 2023] Jon: Thanks!", also=["Gina"])
    []
    >>> unsupported_names("On rainy turns, the purple glarb eats turnips.",
    ...                   "Rule change: on rainy turns the purple glarb now eats turnips.")
    []
    """
    have = {_key(w) for text in (observation, *also) for w in _WORD.findall(text)}
    return [w for w in names(fact) if _key(w) not in have]


def split_grounded(actions: Iterable[Any], observation: str, also: Iterable[str] = (), *,
                   names: bool = False, words: bool = False) -> tuple[list[Any], list[str]]:
    """(the actions kept, the texts of those refused): an add / update is refused when it
    names what `observation` and `also` lack (`names`, `unsupported_names`) or shares no
    content word with the observation (`words`, `unshared_words`); other actions are kept.
    What the loop (`LoopConfig.grounding`, `grounding_words`) and the chat apply."""
    from mags_lib.actions import EngramAdd, EngramUpdate

    also = list(also)
    kept: list[Any] = []
    refused: list[str] = []
    for a in actions:
        if isinstance(a, EngramAdd | EngramUpdate) and (
                (names and unsupported_names(a.text, observation, also))
                or (words and unshared_words(a.text, observation, also))):
            refused.append(a.text)
        else:
            kept.append(a)
    return kept, refused
