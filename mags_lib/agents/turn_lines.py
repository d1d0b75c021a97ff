"""Turns and the facts written from them, as `mags_episodic` shows them.

`turn_over_fact` (`LoopConfig`): a turn shown instead of the facts written from it.

`mags_episodic` keeps every information turn as it was said (an episodic node) beside what the
write model made of it (semantic facts), and both come back from recall. Where a fact and the
turn it was written from are both among the lines shown, the fact says nothing the turn does
not, and it can say it wrongly: on LoCoMo the write model gives a speaker's fact to the other
speaker ("Tim is learning Spanish." written from John's "I'm learning Spanish"), and the
false fact outranks the turn that answers (docs/journal.md, 2026-11-30). So such a fact is left
out and its place goes to the next hit. A fact with earlier versions is always kept: its
history (what it replaced) is what a turn cannot show.

    >>> from mags_lib.memory.types import Hit
    >>> class Memory:  # two facts: one changed (two versions), one not
    ...     def history(self, node_id): return [node_id, 99] if node_id == 3 else [node_id]
    >>> hits = [Hit(1, "Tim is learning Spanish.", 0.9, "semantic", ["turn:4"]),
    ...         Hit(2, "John: I'm learning Spanish.", 0.8, "episodic", ["turn:4"]),
    ...         Hit(3, "Tim lives in Boston.", 0.7, "semantic", ["turn:7"]),
    ...         Hit(4, "Tim: I moved to Boston.", 0.6, "episodic", ["turn:7"]),
    ...         Hit(5, "Tim: I'm learning German now.", 0.5, "episodic", ["turn:9"])]
    >>> [h.node_id for h in turns_over_facts(Memory(), hits, 3)]
    [2, 3, 4]
    >>> [h.node_id for h in turns_over_facts(Memory(), hits, 4)]
    [2, 3, 4, 5]

`retired_turns` (`LoopConfig.retired_turns`): a turn every fact written from which has since
been superseded says what is no longer true ("Ana: I live in Porto." once Ana moved). Its facts
are not recalled for a question about now, so it is left out too; a question about the past
still sees it. 'updated' counts only the facts that the write model's own `update` replaced:
on LoCoMo the memory's detector supersedes facts on plain adds, and the turns it retired were
events that stay true ("my wife and I just left for our European vacation").

    >>> import networkx as nx
    >>> class Store:
    ...     graph = nx.DiGraph()
    ...     graph.add_node(1, block="semantic", sources=["turn:3"], superseded_by=2)
    ...     graph.add_node(2, block="semantic", sources=["turn:8"], superseded_by=None)
    >>> hits = [Hit(5, "Ana: I live in Porto.", 0.9, "episodic", ["turn:3"]),
    ...         Hit(6, "Ana: I moved to Lisbon.", 0.8, "episodic", ["turn:8"]),
    ...         Hit(7, "Ana: Hi!", 0.7, "episodic", ["turn:9"])]
    >>> [h.node_id for h in without_retired_turns(Store(), hits)]
    [6, 7]
    >>> [h.node_id for h in without_retired_turns(Store(), hits, retired=set())]  # none updated
    [5, 6, 7]
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any


def turns_over_facts(memory: Any, hits: list[Any], k: int) -> list[Any]:
    """The best `k` of `hits` (best first) once every unchanged semantic fact whose source turn
    is among the episodic hits shown is left out; the next hits fill the freed places, and a
    turn that comes in that way can leave out further facts. A fact with earlier versions
    (`memory.history`) is kept."""
    left_out: set[int] = set()
    while True:
        shown = [h for h in hits if h.node_id not in left_out][:k]
        turns = {s for h in shown if h.block == "episodic" for s in h.sources}
        more = {h.node_id for h in shown
                if h.block == "semantic" and turns.intersection(h.sources)
                and len(memory.history(h.node_id)) < 2}
        if not more:
            return shown
        left_out |= more


def without_retired_turns(memory: Any, hits: list[Any],
                          retired: Container[int] | None = None) -> list[Any]:
    """`hits` less the episodic turns that gave semantic facts, every one of which has been
    superseded since (`superseded_by` set; with `retired`, only those facts count as retired
    whose ids it holds); a turn that gave no fact stays."""
    turns = {s for h in hits if h.block == "episodic" for s in h.sources}
    facts: dict[Any, list[bool]] = {}
    for node, data in memory.graph.nodes(data=True):
        if data.get("block") == "semantic":
            gone = data.get("superseded_by") is not None and (retired is None
                                                              or node in retired)
            for s in turns.intersection(data.get("sources") or ()):
                facts.setdefault(s, []).append(gone)

    def is_retired(h: Any) -> bool:
        told = [gone for s in h.sources for gone in facts.get(s, [])]
        return h.block == "episodic" and bool(told) and all(told)

    return [h for h in hits if not is_retired(h)]


def at_most_facts(hits: list[Any], n: int) -> list[Any]:
    """`hits` (best first) with only the first `n` semantic facts kept; every other hit keeps
    its order (`LoopConfig.fact_share`).

    >>> from mags_lib.memory.types import Hit
    >>> hits = [Hit(1, "f1", 0.9, "semantic", []), Hit(2, "t1", 0.8, "episodic", []),
    ...         Hit(3, "f2", 0.7, "semantic", []), Hit(4, "t2", 0.6, "episodic", [])]
    >>> [h.node_id for h in at_most_facts(hits, 1)]
    [1, 2, 4]
    """
    out, facts = [], 0
    for h in hits:
        if h.block == "semantic":
            facts += 1
            if facts > n:
                continue
        out.append(h)
    return out
