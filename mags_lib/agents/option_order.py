"""Choosing among the legal actions without the answer model's bias for the last-named one.

The 135M answer model, unsure, names the option the question mentions last: in notebook 06's
varied games (greedy, 2026-11-27) the oracle was wrong on 37 of the 99 decisions whose right
item came first in the question and on 2 of the 101 where it came later (docs/journal.md,
2026-11-27 (day)). Permutation debiasing takes the order out of the choice:
the question is asked once per cyclic rotation of the options' places in its text, each option
is scored by its log-probability as the answer (`llm.score`), and the option with the highest
mean over the rotations is chosen. The model still decides; it is only asked the same question
in every order.

    >>> rotations("Feed the grilb: the slate and the felt.", ("slate", "felt"))
    ['Feed the grilb: the slate and the felt.', 'Feed the grilb: the felt and the slate.']

Nothing here reads the game's templates: the options are found in the question as whole words,
and a question that names an option not exactly once is asked as it came (one rotation).
"""

from __future__ import annotations

import re
from typing import Any

from mags_lib.errors import MagsError
from mags_lib.llm.base import score_each


def check_settings(prompt_format: str, temperature: float, owner: str) -> None:
    """The debiased choice scores completion prompts greedily: refuse anything else."""
    if prompt_format != "completion" or temperature > 0:
        raise MagsError(
            f"{owner}: the order-debiased choice scores completion prompts greedily, but "
            f"prompt_format is {prompt_format!r} and temperature {temperature}",
            "use prompt_format='completion' and temperature 0, or debias_order=False")


def _spans(question: str, options: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """Where each option stands in the question, or None unless each stands there exactly once
    and no two overlap."""
    spans = []
    for option in options:
        found = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(option)}(?!\w)", question)]
        if len(found) != 1:
            return None
        spans.append(found[0])
    ordered = sorted(spans)
    if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:], strict=False)):
        return None
    return spans


def rotations(question: str, options: tuple[str, ...] | list[str]) -> list[str]:
    """The question with the options' places rotated cyclically (the first as it came); just
    the question when the options cannot be placed (see `_spans`).

    >>> rotations("Give the a, the b or the c?", ("a", "b", "c"))[1:]
    ['Give the b, the c or the a?', 'Give the c, the a or the b?']
    >>> rotations("The slate or the slate tile?", ("slate", "tile"))
    ['The slate or the slate tile?']
    """
    options = tuple(options)
    spans = _spans(question, options)
    if spans is None or len(options) < 2:
        return [question]
    slots = sorted(range(len(options)), key=lambda i: spans[i][0])  # options in text order
    out = []
    for shift in range(len(options)):
        # text slot j takes the option of slot j + shift (mod n)
        placed = {slots[j]: options[slots[(j + shift) % len(slots)]] for j in range(len(slots))}
        text, end = [], 0
        for i in slots:
            start, stop = spans[i]
            text += [question[end:start], placed[i]]
            end = stop
        out.append("".join(text) + question[end:])
    return out


def rotation_scores(llm: Any, prompts: list[str], continuations: list[str]) -> list[list[float]]:
    """Each continuation's log-probability after each prompt (`llm.base.score_each`), or an
    error that names the fix when the backend cannot score."""
    backend = getattr(llm, "inner", llm)  # under the generation cache, the backend it wraps
    if not callable(getattr(backend, "score", None)):
        raise MagsError(
            f"the LLM backend {getattr(llm, 'name', type(llm).__name__)!r} cannot score "
            "continuations, which the debiased choice needs",
            "use a GGUF model (llama.cpp backend) or set AgentConfig.debias_order=False")
    return score_each(llm, prompts, continuations)


def debiased_scores(llm: Any, prompts: list[str], options: tuple[str, ...],
                    continuation: str = "{}") -> list[float]:
    """Mean log-probability of each option as the answer over `prompts` (one per rotation);
    `continuation` formats an option as the model writes it (e.g. "{}</answer>")."""
    rows = rotation_scores(llm, prompts, [continuation.replace("{}", o) for o in options])
    return [sum(col) / len(prompts) for col in zip(*rows, strict=True)]


def text_order(question: str, options: tuple[str, ...] | list[str]) -> list[str] | None:
    """The options in the order `question` names them, or None unless each is named exactly
    once (see `_spans`).

    >>> text_order("Give the b or the a?", ("a", "b"))
    ['b', 'a']
    """
    spans = _spans(question, tuple(options))
    if spans is None:
        return None
    return [o for _, o in sorted(zip(spans, options, strict=True))]
