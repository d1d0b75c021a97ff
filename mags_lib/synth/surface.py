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

MAX_LINES, MAX_TEXT, MAX_SIDE = 3, 64, 32  # the limits of grammars/recall.gbnf, engram.gbnf

ASK_SYSTEM = (
    "You decide what to look up in memory before answering. Reply with one <recall> block of "
    "one to three lines, each `query: TEXT` or `connect: A -> B`.",
    "Before you answer, search your memory. Write a <recall> block with 1-3 `query:` lines "
    "(or `connect: A -> B`) and nothing else.",
    "You are the recall module of a game agent. Emit a <recall> block whose queries would find "
    "the rule needed for this turn.",
    "Find the memory this turn needs. Answer only with <recall>, one action per line "
    "(`query: ...` or `connect: ... -> ...`), then </recall>.",
)
ASK_USER = (
    "{obs}",
    "Observation: {obs}",
    "Turn {turn}. {obs}\nWhat do you need to recall?",
    "Question: {obs}\nSearch memory first.",
    "{obs}\nLook up the relevant rule.",
    "Current turn:\n{obs}",
)
WRITE_SYSTEM = (
    "You keep the long-term memory of a game agent. Reply with one <engram> block: "
    "`add semantic CONF: FACT` for a rule you do not hold yet, `update semantic CONF: FACT` for "
    "a new version of a rule you hold, or an empty block when there is nothing new to store.",
    "Decide what to store. Write <engram> ... </engram>: add a new rule, update a rule whose "
    "item changed, and leave the block empty for repeats and irrelevant facts.",
    "You are the memory writer. New feeding rules are added, changed rules are updated (the "
    "old version is superseded), anything else is not stored. Answer with one <engram> block.",
    "Store only what is new. Reply with an <engram> block of `add` / `update` lines "
    "(`add semantic 0.90: ...`), or <engram></engram> with nothing inside if nothing is new.",
)
WRITE_USER = (
    "Observation: {obs}\nMemory holds:\n{memory}",
    "Memory:\n{memory}\n\nNew turn: {obs}",
    "{obs}\n\nAlready stored:\n{memory}",
    "Turn text: {obs}\nKnown facts:\n{memory}\nWhat should be stored?",
    "Stored so far:\n{memory}\nNow: {obs}",
)
EMPTY_MEMORY = ("(nothing yet)", "(empty)", "- nothing stored")

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


def ask_prompt(obs: str, turn: int, rng: random.Random) -> list[dict[str, str]]:
    return [{"role": "system", "content": rng.choice(ASK_SYSTEM)},
            {"role": "user", "content": rng.choice(ASK_USER).format(obs=obs, turn=turn)}]


def write_prompt(obs: str, memory: list[str], rng: random.Random) -> list[dict[str, str]]:
    notes = "\n".join(f"- {m}" for m in memory) if memory else rng.choice(EMPTY_MEMORY)
    return [{"role": "system", "content": rng.choice(WRITE_SYSTEM)},
            {"role": "user", "content": rng.choice(WRITE_USER).format(obs=obs, memory=notes)}]
