"""Does a new fact contradict a stored one? Pluggable detectors for supersession.

A detector answers `contradicts(old_text, new_text) -> bool` for one candidate pair; the write
path (`engram.py`) chooses the candidates (the most similar valid semantic nodes) and
supersedes those the detector flags. Callers that know a fact's identity pass an explicit
`key` ("glarb|rainy|eats") to `observe`: same key with another text is a contradiction and no
detector is consulted.

`RuleBasedDetector` (default) is a lexical heuristic over content tokens (lower-cased,
stopwords and negations removed, a plural/3rd-person "s" stripped): two facts state the same
subject and slot with another value when

* their content tokens are the same and only one of them is negated ("the glarb eats carrots"
  / "the glarb never eats carrots"), or
* they share at least `min_overlap` of the shorter side's content tokens and each side has
  1..`max_diff` tokens the other lacks ("... eats carrots" / "... eats stones"), or
* the new one denies a word the old one asserts and asserts `min_overlap` of the old one's
  other words ("the glarb eats carrots" / "Rule change: the glarb now eats only turnips, never
  carrots": "carrots" stands after a negation in its clause, so it is denied, not asserted;
  "Ana never liked Porto's rain" denies "Porto" but does not say that Ana lives anywhere).

Change markers ("now", "anymore", "no longer", "instead", "rule change", "correction", ...) are
not content: they announce a new value, so they neither count as a difference nor block one.

Failure modes, by design of a bag-of-words rule: a different subject with the same predicate
("the purple glarb eats carrots" / "the blue glarb eats carrots") is flagged as a contradiction;
the write path guards the commonest case, two facts that open with different names ("Mira lives
in Ghent." / "Felix lives in Ghent."), with `different_subjects`, whatever the detector;
multi-valued slots ("eats carrots" and "eats apples" both true) are flagged; paraphrases that
share few words, antonyms ("hot" / "cold" in long sentences with more than `max_diff` other
changes) and double negatives are missed. Use `key=` or `LLMJudgeDetector` where that matters.

`LLMJudgeDetector(judge)` asks any callable `judge(old_text, new_text) -> bool` (an LLM wrapper),
optionally only for pairs that pass a cheap lexical pre-filter.

>>> d = RuleBasedDetector()
>>> d.contradicts("On rainy turns the purple glarb eats carrots.",
...               "On rainy turns the purple glarb eats stones.")
True
>>> d.contradicts("On rainy turns the purple glarb eats carrots.", "The blue zorp sings at dawn.")
False
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol, runtime_checkable

from mags_lib.embed import tokenize


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words("""
a an the and or but if then else of on in at to for from by with without about into onto over
under after before during while when whenever where which who whom whose what that this these
those there here it its it's is are was were be been being am do does did doing done has have
had having will would shall should can could may might must i you he she we they me him her us
them my your his our their mine yours as so than too very just also only all any each every some
such same other own more most s t d ll m re ve y up down out off again further once
""")
NEGATIONS = _words("not no never none nothing nobody nowhere neither nor cannot without")
_CONTRACTED = _words("don doesn didn isn aren wasn weren won wouldn can couldn shouldn hasn "
                     "haven hadn mustn ain")
_NEGATED_CONTRACTION = re.compile(r"\b[a-z]+n't\b|\b[a-z]+n’t\b")
CHANGE_MARKERS = _words("""
now anymore longer instead actually correction correct corrected update updated change changed
changes rule rules new newly currently still
""")
# a word followed by one of these is an imperative ("Give the glarb...", "Think of..."), not a name
_IMPERATIVE_NEXT = _words("the a an of what to on in at for me us him her them it you my your "
                          "his our their this that these those")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’-]*")
_CLAUSE = re.compile(r"[,.;:!?()]|\b(?:but|and|while|whereas)\b")


@lru_cache(maxsize=1 << 16)  # pure; a write asks again about its neighbours' texts
def content_tokens(text: str) -> frozenset[str]:
    """Lower-case content words of `text`: stopwords, negations and contraction stubs removed,
    a trailing "s" stripped from words longer than three letters ("eats" -> "eat")."""
    out = set()
    for token in tokenize(text):
        if token in STOPWORDS or token in NEGATIONS or token in _CONTRACTED:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        out.add(token)
    return frozenset(out)


@lru_cache(maxsize=1 << 16)  # pure; a write asks again about its neighbours' texts
def denied_tokens(text: str) -> frozenset[str]:
    """Content tokens that stand after a negation in their clause: what `text` denies.

    >>> sorted(denied_tokens("The glarb now eats only turnips, never carrots."))
    ['carrot']
    """
    out: set[str] = set()
    for clause in _CLAUSE.split(text.lower().replace("n't", " not").replace("n’t", " not")):
        words = tokenize(clause or "")
        first = next((i for i, w in enumerate(words) if w in NEGATIONS), None)
        if first is not None:
            out |= content_tokens(" ".join(words[first + 1:]))
    return frozenset(out)


@lru_cache(maxsize=1 << 16)  # pure; a write asks again about its neighbours' texts
def is_negated(text: str) -> bool:
    """True if `text` holds an odd number of negations (not, never, no, n't, ...)."""
    lowered = text.lower()
    count = sum(1 for token in tokenize(lowered) if token in NEGATIONS)
    count += len(_NEGATED_CONTRACTION.findall(lowered))
    return count % 2 == 1


@lru_cache(maxsize=1 << 16)  # pure; a write asks again about its neighbours' texts
def named_subject(text: str) -> str | None:
    """The name a fact opens with, as a content token: its first word after any lead-in ending in
    a colon and any change markers, when that word is capitalised, not a stopword, not set off
    by a comma and not an imperative (followed by "the", "of", "me", ...). "Mira lives in
    Ghent." -> "mira", "Actually, Yara's doctor is Dr Silva." -> "yara", "Heard from my cousin:
    Nadia drives a Volvo." -> "nadia"; None for "I moved to Lisbon.", "On rainy turns the purple
    glarb eats carrots.", "Wait, I misspoke.", "Give the glarb the carrot.".

    >>> named_subject("Now Felix lives in Ghent."), named_subject("My sister lives in Ghent.")
    ('felix', None)
    """
    _, colon, rest = text.partition(":")
    body = rest if colon and rest.strip() else text
    for match in _WORD.finditer(body):
        bare = re.split(r"['’]", match.group())[0]
        low = bare.lower()
        if low in CHANGE_MARKERS:
            continue
        after = _WORD.search(body, match.end())
        if (not bare[:1].isupper() or low in STOPWORDS or low in NEGATIONS
                or low in _CONTRACTED or body[match.end():match.end() + 1] == ","
                or (after is not None and after.group().lower() in _IMPERATIVE_NEXT)):
            return None
        tokens = content_tokens(bare)
        return next(iter(tokens)) if len(tokens) == 1 else None
    return None


def different_subjects(old_text: str, new_text: str) -> bool:
    """True when the two facts open with different names and neither name occurs in the other
    fact: "Felix lives in Ghent." states nothing about "Mira lives in Ghent.", however alike the
    rest. A fact that opens otherwise, or names the other's subject anywhere ("Yesterday Felix
    moved to Ghent." / "Felix lives in Bruges."), is not told apart: the detector decides.

    >>> different_subjects("Mira lives in Ghent.", "Felix lives in Ghent.")
    True
    >>> different_subjects("Felix lives in Bruges.", "Yesterday Felix moved to Ghent.")
    False
    >>> different_subjects("I live in Porto.", "I live in Lisbon now.")
    False
    """
    old, new = named_subject(old_text), named_subject(new_text)
    return (old is not None and new is not None and old != new
            and old not in content_tokens(new_text) and new not in content_tokens(old_text))


def shared_words(old_text: str, new_text: str) -> int:
    """How many content words (`content_tokens`) two facts share besides the names they open
    with (`named_subject`): what they say alike about their subject.

    >>> shared_words("Oskar's favourite food is pho.", "Oskar's plants are watered earlier.")
    0
    >>> shared_words("Ana lives in Porto.", "Ana lives in Lisbon now.")
    1
    """
    names = {named_subject(old_text), named_subject(new_text)} - {None}
    return len((content_tokens(old_text) & content_tokens(new_text)) - names)


@runtime_checkable
class ContradictionDetector(Protocol):
    """Anything that says whether `new_text` states another value for what `old_text` says."""

    def contradicts(self, old_text: str, new_text: str) -> bool: ...


class RuleBasedDetector:
    """Lexical same-subject-and-slot, other-value rule (see the module docstring)."""

    def __init__(self, min_overlap: float = 0.6, max_diff: int = 3, min_tokens: int = 2):
        self.min_overlap = min_overlap
        self.max_diff = max_diff
        self.min_tokens = min_tokens

    def contradicts(self, old_text: str, new_text: str) -> bool:
        old = content_tokens(old_text) - CHANGE_MARKERS
        new = content_tokens(new_text) - CHANGE_MARKERS
        if min(len(old), len(new)) < self.min_tokens:
            return False
        only_old, only_new = old - new, new - old
        if not only_old and not only_new:
            return is_negated(old_text) != is_negated(new_text)
        close = len(old & new) >= self.min_overlap * min(len(old), len(new))
        asserted, denied = old - denied_tokens(old_text), denied_tokens(new_text)
        if denied & asserted:  # the new fact denies a word the old one asserts: it is the same
            rest = asserted - denied  # fact if the new one asserts the rest of the old one
            if rest and len(rest & (new - denied)) >= self.min_overlap * len(rest):
                return True
        if is_negated(old_text) != is_negated(new_text):
            return False  # negation plus other changes: too different to call
        return (1 <= len(only_old) <= self.max_diff and 1 <= len(only_new) <= self.max_diff
                and close)


class LLMJudgeDetector:
    """Delegates the decision to `judge(old_text, new_text) -> bool`, e.g. an LLM prompted
    "Does the second statement contradict the first? yes/no".

    `prefilter_overlap` (0 disables it) skips the judge for pairs sharing less than this
    fraction of the shorter side's content tokens, so an LLM is asked only about plausible
    pairs; exceptions raised by the judge count as "no contradiction"."""

    def __init__(self, judge: Callable[[str, str], bool], prefilter_overlap: float = 0.0):
        self.judge = judge
        self.prefilter_overlap = prefilter_overlap
        self.calls = 0

    def contradicts(self, old_text: str, new_text: str) -> bool:
        if self.prefilter_overlap > 0:
            old, new = content_tokens(old_text), content_tokens(new_text)
            if not old or not new:
                return False
            if len(old & new) < self.prefilter_overlap * min(len(old), len(new)):
                return False
        self.calls += 1
        try:
            return bool(self.judge(old_text, new_text))
        except Exception:  # a flaky judge must not break a write
            return False


@lru_cache(maxsize=1 << 16)  # pure; a write asks again about its neighbours' texts
def normalise_text(text: str) -> str:
    """Key for 'the same text': lower-case tokens joined by spaces."""
    return " ".join(tokenize(text))
