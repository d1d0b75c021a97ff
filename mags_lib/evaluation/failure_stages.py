"""Where a fact is lost: the stage at which each persona question about a fact fails.

A memory agent can lose the answer in four places, and the score alone does not say which:

    write       no stored item names the value (never written, or written garbled)
    superseded  only superseded items name it (a later write retired the value)
    recall      a valid item names it, but no line shown to the reader does
    reader      a shown line names it (for the current value, a line not marked retired),
                and the answer does not

`answered` means the answer names the value (and, for a current-fact question, no stale one).
An agent whose store cannot be listed (`bare`, `full_context`: `memory_nodes()` is None) gets
`unseen` where its lines miss the value. Questions asking for the current value (`current`) need a valid item;
those asking for an earlier one (`earlier`) any item, since the history is kept.

    stage = failure_stage(qa, prediction, lines, nodes)   # nodes: [{"text", "valid"}] or None
    table = stage_counts(rows)     # rows with "agent", "kind", "stage": agent -> kind -> counts
    print(stages_markdown(table))

Values are matched as the persona rates match them (`qa_metrics.mentions`: normalised words,
articles dropped): a fact stored in other words still counts where it names the value ("Yara
is visiting Kenya." names "Kenya"), and a garbled one does not. A line or item counts only
where it also names the person the question is about (`QA.about`, a whole word; every persona
turn names its speaker and the people it speaks of): "Ravi drives a Volvo." does not hold the
answer to "What does Felix drive?", so a loss beside it is not the reader's. Until 2026-12-07
(fifteenth session) the value alone was matched, and such losses were called "reader". A
question without `about` (LoCoMo's) is matched on the value alone.

    >>> from mags_lib.conversations.types import QA
    >>> q = QA("Which city am I living in?", "Porto", (), 4, asker="Ana", kind="current",
    ...        stale=("Lisbon",))
    >>> nodes = [{"text": "Ana lives in Lisbon.", "valid": False},
    ...          {"text": "Ana lives in Porto.", "valid": True}]
    >>> failure_stage(q, "Porto", ["Ana lives in Porto."], nodes)
    'answered'
    >>> failure_stage(q, "Lisbon", ["Ana lives in Lisbon.", "Ana lives in Porto."], nodes)
    'reader'
    >>> failure_stage(q, "Lisbon", ["Ana lives in Lisbon."], nodes)
    'recall'
    >>> failure_stage(q, "Lisbon", [], [{"text": "Ana lives in Porto.", "valid": False}])
    'superseded'
    >>> failure_stage(q, "Lisbon", ["(no longer true) Ana lives in Porto."],
    ...               [{"text": "Ana lives in Porto.", "valid": False}])  # shown, but retired
    'superseded'
    >>> failure_stage(q, "I don't know", [], [])
    'write'
    >>> failure_stage(q, "I don't know", [], None)
    'unseen'
    >>> felix = QA("What does Felix drive?", "a Volvo", (), 4, asker="Ana", kind="current",
    ...            about="Felix")
    >>> failure_stage(felix, "I don't know", ["Ravi drives a Volvo."],
    ...               [{"text": "Ravi drives a Volvo.", "valid": True}])
    'write'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from mags_lib.agents.history_lines import RETIRED
from mags_lib.evaluation.qa_metrics import mentions

STAGES: tuple[str, ...] = ("answered", "reader", "recall", "superseded", "write", "unseen")
"""Every stage, from the answer back to the write (`unseen`: a store that cannot be listed)."""

KINDS: tuple[str, ...] = ("current", "earlier")
"""The persona question kinds whose gold is a fact's value."""


def failure_stage(qa: Any, prediction: str, lines: list[str],
                  nodes: list[dict[str, Any]] | None) -> str | None:
    """The stage at which `qa` (a persona `QA` of a kind in `KINDS`) is lost, or 'answered';
    None for another kind or a question without an answer."""
    if qa.kind not in KINDS or not qa.answer:
        return None
    value = qa.answer
    stale = qa.kind == "current" and any(mentions(prediction, s) for s in qa.stale)
    if mentions(prediction, value) and not stale:
        return "answered"
    person = getattr(qa, "about", None)

    def holds(text: str) -> bool:  # names the value, and the person where the question says
        return mentions(text, value) and (not person or names_person(text, person))

    shown = [line for line in lines if holds(line)]
    if qa.kind == "current":
        shown = [line for line in shown if RETIRED not in line]  # shown as retired: not current
    if shown:
        return "reader"
    if nodes is None:
        return "unseen"
    named = [n for n in nodes if holds(n["text"])]
    if qa.kind == "current":
        if any(n["valid"] for n in named):
            return "recall"
        return "superseded" if named else "write"
    return "recall" if named else "write"


def names_person(text: str, person: str) -> bool:
    """Whether `text` names `person` as a whole word, any case ("Felix's" names Felix).

    >>> names_person("Felix's car is a Volvo.", "Felix"), names_person("Felixa drives.", "Felix")
    (True, False)
    """
    return re.search(rf"\b{re.escape(person.lower())}\b", text.lower()) is not None


def stage_counts(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """agent -> kind -> stage -> questions, over rows carrying a `stage` (others skipped)."""
    out: dict[str, dict[str, Counter]] = {}
    for r in rows:
        if r.get("stage") is None:
            continue
        out.setdefault(r["agent"], {}).setdefault(r["kind"], Counter())[r["stage"]] += 1
    return {a: {k: {s: c[s] for s in STAGES if c[s]} for k, c in kinds.items()}
            for a, kinds in out.items()}


def stages_markdown(table: dict[str, dict[str, dict[str, int]]],
                    kinds: tuple[str, ...] = KINDS) -> str:
    """One table a kind: agents down, stages across, each cell 'n (share)'.

    >>> print(stages_markdown({"mags": {"current": {"answered": 3, "write": 1}}}, ("current",)))
    Questions on a fact's current value (current), by the stage where the answer was lost:
    <BLANKLINE>
    | agent | answered | reader | recall | superseded | write | unseen | questions |
    |---|---|---|---|---|---|---|---|
    | mags | 3 (0.75) | – | – | – | 1 (0.25) | – | 4 |
    """
    out = []
    names = {"current": "a fact's current value", "earlier": "a fact's earlier value"}
    for kind in kinds:
        agents = [a for a in table if table[a].get(kind)]
        if not agents:
            continue
        out += [f"Questions on {names.get(kind, kind)} ({kind}), by the stage where the answer "
                "was lost:", "", "| agent | " + " | ".join(STAGES) + " | questions |",
                "|" + "---|" * (len(STAGES) + 2)]
        for a in agents:
            counts = table[a][kind]
            n = sum(counts.values())
            cells = [f"{counts[s]} ({counts[s] / n:.2f})" if counts.get(s) else "–"
                     for s in STAGES]
            out.append(f"| {a} | " + " | ".join(cells) + f" | {n} |")
        out.append("")
    return "\n".join(out).rstrip()
