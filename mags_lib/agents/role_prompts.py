"""The prompts of the ask and write roles: the same words in training rows and in play.

Dataset synthesis (`mags_lib.synth`) draws one of several phrasings per row (`ask_prompt`,
`write_prompt` with a seeded `random.Random`), so a trained model does not hang on one wording.
The words name no task (a game's rules and a person's facts are both "facts"), since one set of
models serves every task. The closed-loop agent (`agents/loop.py`) always uses the first phrasing (`play_ask_messages`,
`play_write_messages`): deterministic, and one the models saw in training.

`mags_prompted` runs the untrained base model; it gets the same messages with a few worked
examples in front (`FEW_SHOT_ASK`, `FEW_SHOT_WRITE`). The examples are everyday facts about a
person, so they show the action format, never a sentence of the game.

    >>> play_ask_messages("Which does the grilb eat?")[1]["content"]
    'Which does the grilb eat?'
    >>> "Memory holds:" in play_write_messages("The grilb hums.", [])[1]["content"]
    True
"""

from __future__ import annotations

import random

ASK_SYSTEM = (
    "You decide what to look up in memory before answering. Reply with one <recall> block of "
    "one to three lines, each `query: TEXT` or `connect: A -> B`.",
    "Before you answer, search your memory. Write a <recall> block with 1-3 `query:` lines "
    "(or `connect: A -> B`) and nothing else.",
    "You are the recall module of an agent with a long-term memory. Emit a <recall> block whose "
    "queries would find what this turn needs.",
    "Find the memory this turn needs. Answer only with <recall>, one action per line "
    "(`query: ...` or `connect: ... -> ...`), then </recall>.",
)
ASK_USER = (
    "{obs}",
    "Observation: {obs}",
    "Turn {turn}. {obs}\nWhat do you need to recall?",
    "Question: {obs}\nSearch memory first.",
    "{obs}\nLook up what this needs.",
    "Current turn:\n{obs}",
)
WRITE_SYSTEM = (
    "You keep the long-term memory of an agent. Reply with one <engram> block: "
    "`add semantic CONF: FACT` for a fact you do not hold yet, `update semantic CONF: FACT` for "
    "a new version of a fact you hold, or an empty block when there is nothing new to store.",
    "Decide what to store. Write <engram> ... </engram>: add a new fact or rule, update one whose "
    "value changed, and leave the block empty for repeats and small talk.",
    "You are the memory writer. New facts and rules are added, changed ones are updated (the "
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


def _memory_notes(memory: list[str], empty: str) -> str:
    return "\n".join(f"- {m}" for m in memory) if memory else empty


def ask_prompt(obs: str, turn: int, rng: random.Random) -> list[dict[str, str]]:
    """A training row's ask messages, phrasing drawn from `rng`."""
    return [{"role": "system", "content": rng.choice(ASK_SYSTEM)},
            {"role": "user", "content": rng.choice(ASK_USER).format(obs=obs, turn=turn)}]


def write_prompt(obs: str, memory: list[str], rng: random.Random) -> list[dict[str, str]]:
    """A training row's write messages, phrasing drawn from `rng`."""
    notes = _memory_notes(memory, rng.choice(EMPTY_MEMORY))
    return [{"role": "system", "content": rng.choice(WRITE_SYSTEM)},
            {"role": "user", "content": rng.choice(WRITE_USER).format(obs=obs, memory=notes)}]


def play_ask_messages(obs: str, *, few_shot: bool = False) -> list[dict[str, str]]:
    """The ask model's messages in play (first phrasing; worked examples when `few_shot`)."""
    shots = FEW_SHOT_ASK if few_shot else []
    return [{"role": "system", "content": ASK_SYSTEM[0]}, *shots,
            {"role": "user", "content": ASK_USER[0].format(obs=obs, turn=0)}]


def play_write_messages(obs: str, memory: list[str], *,
                        few_shot: bool = False) -> list[dict[str, str]]:
    """The write model's messages in play: the observation and what memory holds about it."""
    shots = FEW_SHOT_WRITE if few_shot else []
    notes = _memory_notes(memory, EMPTY_MEMORY[0])
    return [{"role": "system", "content": WRITE_SYSTEM[0]}, *shots,
            {"role": "user", "content": WRITE_USER[0].format(obs=obs, memory=notes)}]


def _pair(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


# Worked examples for the untrained model: everyday facts about a person, nothing like the
# game, so they show the protocol (add, update with the new version, store nothing) without
# handing the model a template for the game's sentences.
FEW_SHOT_ASK: list[dict[str, str]] = [
    *_pair("Where should I send the card for Ada's birthday?",
           "<recall>\nquery: where does Ada live\nquery: Ada address\n</recall>"),
]
FEW_SHOT_WRITE: list[dict[str, str]] = [
    *_pair(WRITE_USER[0].format(obs="My sister Ada moved to Lyon last spring.",
                                memory=EMPTY_MEMORY[0]),
           "<engram>\nadd semantic 0.95: Ada, the user's sister, lives in Lyon.\n</engram>"),
    *_pair(WRITE_USER[0].format(obs="Ada left Lyon, she lives in Porto now.",
                                memory="- Ada, the user's sister, lives in Lyon."),
           "<engram>\nupdate semantic 0.9: Ada, the user's sister, lives in Porto.\n</engram>"),
    *_pair(WRITE_USER[0].format(obs="What a lovely morning.", memory=EMPTY_MEMORY[0]),
           "<engram>\n</engram>"),
]


JUDGE_PROMPT = (
    "Statement A: {old}\nStatement B: {new}\n"
    "Does B give a new value for exactly what A states (the same subject in the same "
    "circumstances), so that A is no longer true? Answer yes or no.")
JUDGE_GRAMMAR = 'root ::= "yes" | "no"'


def judge_messages(old: str, new: str) -> list[dict[str, str]]:
    """The contradiction judge's question about a stored fact and an update (no game words)."""
    return [{"role": "user", "content": JUDGE_PROMPT.format(old=old, new=new)}]
