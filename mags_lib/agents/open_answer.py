"""Answering an open question from memory lines: the free-text counterpart of `prompt.decide`.

Game decisions choose one legal item under a grammar; a question about a conversation has no
options, so the answer is generated, short, greedy, and "I don't know" when the lines do not
say. Every agent's lines go through the same prompt, so a difference in score is a difference
in memory.

The prompt shows the lines as a timeline (`timeline`): dated lines oldest first, in the order
they were given within a day; relevance chose them, the calendar orders them. A fact's later
statement then always follows the earlier one, as the answer model's training rows show them.
Without it a recalled earlier version could come last, where a small reader's bias for the
last-named line takes it for the current value (journal 2026-11-28, late evening).

    >>> open_messages(["[8 May 2023] Ana: I moved to Lisbon."], "Where does Ana live?")[1]["content"]
    'Memory:\\n[8 May 2023] Ana: I moved to Lisbon.\\n\\nQuestion: Where does Ana live?\\nShort answer:'
    >>> clean_answer("Lisbon.\\nQuestion: and")
    'Lisbon.'
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

OPEN_SYSTEM = ("You answer questions about a person's conversations using only the memory "
               "lines. Answer in a few words. If the memory lines do not say, answer: "
               "I don't know.")


_DAY = re.compile(r"^\[(\d{1,2} [A-Z][a-z]+ \d{4})\] ")


def _day(line: str) -> datetime | None:
    found = _DAY.match(line)
    if not found:
        return None
    try:
        return datetime.strptime(found[1], "%d %B %Y")
    except ValueError:
        return None


def timeline(lines: list[str]) -> list[str]:
    """`lines` with the dated ones ('[8 May 2023] ...') oldest first; a stable sort, so lines of
    one day keep their order, and undated lines (the games') come first in theirs.

    >>> timeline(["[2 June 2023] Ana lives in Lisbon.", "Undated.",
    ...           "[8 May 2023] (no longer true) Ana lives in Porto."])
    ['Undated.', '[8 May 2023] (no longer true) Ana lives in Porto.', '[2 June 2023] Ana lives in Lisbon.']
    """
    days = [_day(line) for line in lines]
    order = sorted(range(len(lines)),
                   key=lambda i: (days[i] is not None, days[i] or datetime.min, i))
    return [lines[i] for i in order]


def open_messages(lines: list[str], question: str) -> list[dict[str, str]]:
    """The reader's prompt: the system rule, the lines as a `timeline`, the question."""
    lines = timeline(lines)
    memory = "\n".join(lines) if lines else "(nothing)"
    return [{"role": "system", "content": OPEN_SYSTEM},
            {"role": "user", "content": f"Memory:\n{memory}\n\nQuestion: {question}\n"
                                        "Short answer:"}]


_TAGGED = re.compile(r"<answer>\s*(.*?)\s*(?:</answer>|$)", re.S)


def clean_answer(text: str) -> str:
    """The answer a generation gives: inside `<answer>` tags where it has them (the trained
    answer model writes them, as in the game), else its first line, stripped (small models run
    on into new questions).

    >>> clean_answer("<answer>a baker</answer>"), clean_answer("<answer>Lisbon")
    ('a baker', 'Lisbon')
    """
    tagged = _TAGGED.search(text)
    if tagged:
        text = tagged[1]
    return (text.strip().splitlines() or [""])[0].strip()


def answer_open(llm: Any, lines: list[str], question: str, *, max_tokens: int = 24,
                seed: int = 0) -> tuple[str, dict[str, Any]]:
    """(answer, record): greedy, at most `max_tokens`, with the usage and seconds."""
    out = llm.chat(open_messages(lines, question), max_tokens=max_tokens, temperature=0.0,
                   seed=seed)
    return clean_answer(out.text), {"raw": out.text, "usage": dict(out.usage or {}),
                                    "seconds": out.seconds, "cached": out.cached}
