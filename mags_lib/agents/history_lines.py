"""Recalled facts with their earlier versions: what lets an answer model say what was true
before, and since when.

A memory agent recalls the facts valid now. A fact that changed is kept in the graph as a chain
of versions (`LiquidMemory.history`: the current version first, then the ones it superseded).
`with_history` puts up to `depth` earlier versions before each recalled fact, marked "(no longer
true)", and dates every line with the day its node was first said where the task dates its
observations (`Observation.when`); the games have no calendar and get the plain text.

    lines = with_history(memory, hits, depth=1, day_of=agent.when.get)
    [x["text"] for x in lines]
    # ['[8 May 2023] (no longer true) Ana lives in Porto.', '[2 June 2023] Ana lives in Lisbon.']

With `earlier_only` (a question about the past, `LoopConfig.past_lines = "earlier"`) a fact
that has earlier versions is shown by them alone: "where did Ana live before?" is then read
from "(no longer true) Ana lives in Porto." without the current "Ana lives in Lisbon." beside
it, which the 135M reader named instead (docs/journal.md, 2026-11-30 noon).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mags_lib.agents.base import recalled

RETIRED = "(no longer true)"
"""The mark of a superseded fact's line, before its text."""

PAST_CUES = re.compile(r"\b(before|previous(ly)?|earlier|formerly|originally|used to|"
                       r"in the past|at first|at the start|prior to that|any ?more|no longer|"
                       r"last time)\b", re.I)
"""English words by which a question asks what was true once (`asks_about_past`)."""

PAST_LINES = ("both", "earlier")
"""What a question about the past is shown of a changed fact (`LoopConfig.past_lines`,
`ChatConfig.past_lines`): its earlier versions beside it, or in its place (`earlier_only`)."""


def asks_about_past(question: str) -> bool:
    """Whether an open question asks what was true once, not now: "where did I live before?".
    A plain word list (`PAST_CUES`), the same for every task; an agent applies it only to
    questions without options (a choice among legal actions asks about now).

    >>> asks_about_past("Ana: Where did I live before?"), asks_about_past("Which car do I own?")
    (True, False)
    >>> asks_about_past("What did Ana work as previously?"), asks_about_past("Where do I live now?")
    (True, False)
    """
    return bool(PAST_CUES.search(question))


def history_depth(question: str, versions: int, past_versions: int,
                  has_options: bool = False) -> int:
    """Earlier versions to show before each recalled fact: `versions` always, `past_versions`
    where an open question asks about the past (`asks_about_past`), the larger of the two.

    >>> history_depth("Where did I live before?", 0, 1), history_depth("Where do I live?", 0, 1)
    (1, 0)
    >>> history_depth("Before the quax you place a or b. Which?", 0, 1, has_options=True)
    0
    """
    asked = past_versions if past_versions and not has_options and asks_about_past(question) \
        else 0
    return max(versions, asked)


def earlier_only(question: str, past_versions: int, past_lines: str,
                 has_options: bool = False) -> bool:
    """Whether an open question about the past is shown a changed fact's earlier versions in
    place of the fact (`past_lines` 'earlier'; 'both' shows them side by side).

    >>> earlier_only("Where did I live before?", 1, "earlier")
    True
    >>> earlier_only("Where did I live before?", 1, "both"), earlier_only("Where do I live?", 1,
    ...                                                                     "earlier")
    (False, False)
    """
    return (past_lines == "earlier" and past_versions > 0 and not has_options
            and asks_about_past(question))


def dated_line(text: str, day: str | None, valid: bool = True) -> str:
    """A memory line as the answer model reads it.

    >>> dated_line("Ana lives in Porto.", "8 May 2023", valid=False)
    '[8 May 2023] (no longer true) Ana lives in Porto.'
    >>> dated_line("Ana lives in Lisbon.", None)
    'Ana lives in Lisbon.'
    >>> dated_line("[8 May 2023] Ana: I moved.", "8 May 2023")  # a stored turn is dated already
    '[8 May 2023] Ana: I moved.'
    """
    dated = day is None or text.startswith(f"[{day}]")
    return ("" if dated else f"[{day}] ") + ("" if valid else f"{RETIRED} ") + text


def first_day(sources: list[Any], day_of: Callable[[Any], str | None]) -> str | None:
    """The day of the earliest dated source: when the fact was first said.

    >>> first_day(["turn:3", "turn:9"], {"turn:3": "8 May 2023"}.get)
    '8 May 2023'
    >>> first_day(["turn:1"], {}.get) is None
    True
    """
    return next((d for d in (day_of(s) for s in sources) if d is not None), None)


def with_history(memory: Any, hits: list[Any], depth: int,
                 day_of: Callable[[Any], str | None] = lambda _: None,
                 earlier_only: bool = False) -> list[dict[str, Any]]:
    """`recalled` entries for `hits` (best first), best last, each preceded by up to `depth` of
    its earlier versions (newest of them nearest); every line dated by `day_of(source)`.
    `earlier_only`: a hit with earlier versions is replaced by them (its own line left out;
    a retired version shown through two hits is shown once)."""
    out: list[dict[str, Any]] = []
    shown: set[str] = set()
    for h in reversed(hits):
        older = memory.history(h.node_id)[1:1 + depth] if depth else []
        for old in reversed(older):
            if earlier_only and old.node_id in shown:
                continue
            shown.add(old.node_id)
            out.append(recalled(old.node_id, dated_line(old.text, first_day(old.sources, day_of),
                                                        valid=False),
                                score=None, sources=old.sources, path=[h.node_id, old.node_id],
                                valid=False))
        if earlier_only and older:
            continue
        out.append(recalled(h.node_id, dated_line(h.text, first_day(h.sources, day_of)),
                            score=round(float(h.score), 4), sources=h.sources, path=h.path,
                            valid=h.valid))
    return out
