"""Synthetic corpus for the benchmarks: short invented-world facts and questions about them.

Facts read like what a game agent stores ("Vorlen the smith lives in Kashtiro.") but every name,
item, material and creature is an invented word drawn from a vocabulary of a few thousand, with
Zipf-distributed popularity: some names occur in thousands of facts, most in a handful. So lexical
search meets both frequent and rare terms, and dense search meets near-duplicates that differ in
one name. Each fact comes with a question whose answer is that fact, so a benchmark can check that
recall still finds it.

    corpus = make_corpus(10_000, seed=0)
    corpus.facts[0], corpus.questions[0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "th", "sh",
           "kr", "dr", "br", "gl", "st", "qu")
_VOWELS = ("a", "e", "i", "o", "u", "ae", "io", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "th", "k", "m")

# (fact template, question template); {p}/{q} persons, {l}/{m} places, {i} item, {a} adjective,
# {t} material, {c} creature, {r} role, {n} a number
_TEMPLATES = (
    ("{p} lives in {l}.", "Where does {p} live?"),
    ("{p} is the {r} of {l}.", "Who is the {r} of {l}?"),
    ("{p} owns a {a} {i} made of {t}.", "What is the {i} of {p} made of?"),
    ("{p} traded {n} {i} with {q} in {l}.", "What did {p} trade with {q}?"),
    ("{l} lies north of {m} beyond the {a} hills.", "What lies north of {m}?"),
    ("{p} fears the {c} that lives near {l}.", "What does {p} fear?"),
    ("{p} told {q} that the {i} is hidden in {l}.", "Where is the {i} hidden according to {q}?"),
    ("The {c} of {l} can be killed with a {t} {i}.", "How can the {c} of {l} be killed?"),
    ("{p} learned the craft of the {r} from {q}.", "From whom did {p} learn to be a {r}?"),
    ("A {a} {c} was seen at the gates of {l} on day {n}.", "When was the {c} seen at {l}?"),
)

_KINDS = {"p": 2500, "l": 600, "i": 400, "a": 250, "t": 120, "c": 150, "r": 80}


@dataclass
class Corpus:
    """Facts, one question per fact, and the invented vocabulary by kind (p, l, i, a, t, c, r)."""

    facts: list[str]
    questions: list[str]
    vocabulary: dict[str, list[str]]


def invented_words(count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct pronounceable nonsense words of 2 or 3 syllables."""
    words: dict[str, None] = {}
    while len(words) < count:
        n_syl = 2 + int(rng.random() < 0.4)
        word = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                       + _CODAS[rng.integers(len(_CODAS))] for _ in range(n_syl))
        words.setdefault(word, None)
    return list(words)


def _zipf_sampler(n: int, rng: np.random.Generator, exponent: float = 1.07):
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    cdf = np.cumsum(weights / weights.sum())
    return lambda size: np.minimum(np.searchsorted(cdf, rng.random(size)), n - 1)


def make_corpus(n_facts: int, seed: int = 0) -> Corpus:
    """`n_facts` facts (templates and names drawn with a fixed seed) and their questions."""
    rng = np.random.default_rng(seed)
    words = invented_words(sum(_KINDS.values()), rng)
    vocabulary, start = {}, 0
    for kind, size in _KINDS.items():
        vocabulary[kind] = [w.capitalize() if kind in "pl" else w
                            for w in words[start:start + size]]
        start += size
    pick = {kind: _zipf_sampler(len(v), rng) for kind, v in vocabulary.items()}
    draws = {kind: pick[kind](2 * n_facts) for kind in vocabulary}  # two slots per kind
    template_ids = rng.integers(len(_TEMPLATES), size=n_facts)
    numbers = rng.integers(2, 400, size=n_facts)
    facts, questions = [], []
    for j in range(n_facts):
        slots = {kind: vocabulary[kind][draws[kind][2 * j]] for kind in vocabulary}
        slots["q"] = vocabulary["p"][draws["p"][2 * j + 1]]
        slots["m"] = vocabulary["l"][draws["l"][2 * j + 1]]
        slots["n"] = str(numbers[j])
        fact, question = _TEMPLATES[template_ids[j]]
        facts.append(fact.format(**slots))
        questions.append(question.format(**slots))
    return Corpus(facts=facts, questions=questions, vocabulary=vocabulary)
