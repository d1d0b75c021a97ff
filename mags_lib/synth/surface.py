"""Surface variation: the several phrasings of instructions, prompts and recall queries.

Every choice is drawn from a `random.Random` the caller seeds, so a row's wording is a function
of (config seed, game seed, turn) and the data is not a set of near-copies of one template.
Completions stay within the GBNF grammars' limits (`fits_grammar`), so a grammar-constrained
model can produce every training target (except the empty "nothing to store" block, which the
engram grammar does not admit; see the module docstring of `chains`).

    >>> import random
    >>> lines = recall_lines("purple glarb", "rainy", random.Random(0))
    >>> actions_fit_grammar(lines)
    True
"""

from __future__ import annotations

import random

from mags_lib.actions import Connect, RecallQuery
from mags_lib.agents.role_prompts import (  # noqa: F401  (the prompts rows are built with)
    ASK_SYSTEM,
    ASK_USER,
    EMPTY_MEMORY,
    WRITE_SYSTEM,
    WRITE_USER,
    ask_prompt,
    write_prompt,
)

MAX_LINES, MAX_TEXT, MAX_SIDE = 3, 64, 32  # the limits of grammars/recall.gbnf, engram.gbnf

# Recall query templates; {c} is the creature, {w} the condition (weather word).
QUERIES = (
    "what does the {c} eat on {w} turns",
    "{c} {w}",
    "{c} food on {w} turns",
    "feeding rule of the {c} when {w}",
    "which item the {c} eats on {w} turns",
    "{w} turn {c} diet",
    "rule for the {c} on {w} turns",
    "what the {c} eats when it is {w}",
    "{c} eats only the ... on {w} turns",
    "{c} rule {w}",
)


def fits_grammar(text: str, side: bool = False) -> bool:
    """Whether one action text (or a connect / link side) is within the grammars' limits:
    printable ASCII without '<' or '>', stripped, 1-64 characters (1-32 for a side)."""
    limit = MAX_SIDE if side else MAX_TEXT
    return (0 < len(text) <= limit and text == text.strip()
            and all(32 <= ord(ch) < 127 and ch not in "<>" for ch in text))


def actions_fit_grammar(actions: list) -> bool:
    """Whether a parsed action list could be written under the recall / engram grammar."""
    if not 1 <= len(actions) <= MAX_LINES:
        return False
    for a in actions:
        sides = [a.a, a.b] if hasattr(a, "a") else [a.text]
        if not all(fits_grammar(s, side=hasattr(a, "a")) for s in sides):
            return False
    return True


def recall_lines(creature: str, condition: str, rng: random.Random) -> list[RecallQuery | Connect]:
    """1-3 recall actions for the rule of (creature, condition), phrased at random."""
    n = rng.choices((1, 2, 3), weights=(0.45, 0.4, 0.15))[0]
    texts = [t.format(c=creature, w=condition) for t in rng.sample(QUERIES, n)]
    actions: list[RecallQuery | Connect] = [RecallQuery(t) for t in texts if fits_grammar(t)]
    if len(actions) < MAX_LINES and rng.random() < 0.15 and fits_grammar(creature, side=True):
        actions.append(Connect(creature, condition))
    return actions or [RecallQuery(f"{creature} {condition}")]
