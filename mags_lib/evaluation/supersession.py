"""Supersession against the gold: when a fact changes, does the memory retire the old one, and
only then?

    from mags_lib.evaluation.supersession import gold_write_pairs, supersession_scores

    mem = LiquidMemory(embedder=emb)                        # the defaults, nothing tuned
    write_gold(mem, conv)                                   # the gold facts, in order
    supersession_scores(mem, gold_write_pairs(conv))        # precision, recall, F1

A predicted pair is (old text, new text) for every node the memory marked superseded by
another; a gold pair is (replaced fact, new fact) for every gold write with op 'update'. A merge
keeps the node's first text, so a pair is matched on normalised text; when raw turns are
written instead of facts, pairs are matched by the turns they came from (`by="source"`,
`gold_source_pairs`). Precision: the share of
the memory's supersessions that retire the fact the gold says; recall: the share of gold
updates the memory carried out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mags_lib.conversations.types import Conversation
from mags_lib.evaluation.qa_metrics import normalize

Pair = tuple[str, str]


def gold_write_pairs(conv: Conversation) -> list[Pair]:
    """(replaced, replacing) for every gold 'update' write of `conv`."""
    return [(o.replaces, o.text) for o in conv.gold_facts
            if o.op == "update" and o.replaces is not None]


def gold_source_pairs(conv: Conversation) -> list[Pair]:
    """(turn that stated the replaced value, turn that replaced it) for every gold update:
    the gold when raw turns, not facts, are written."""
    stated: dict[str, str] = {}
    out = []
    for o in conv.gold_facts:
        if o.op == "update" and o.replaces in stated:
            out.append((stated[o.replaces], o.evidence[0]))
        stated[o.text] = o.evidence[0]
    return out


def write_gold(mem: Any, conv: Conversation, block: str = "semantic") -> None:
    """Every gold fact of `conv` observed in order as plain text (no op, no key): what the
    memory makes of correct facts on its own."""
    mem.observe_many([{"text": o.text, "block": block, "source": o.evidence[0]}
                      for o in conv.gold_facts])


def predicted_pairs(mem: Any, by: str = "text",
                    source_name: Callable[[str], str] | None = None) -> list[Pair]:
    """(old, new) for every superseded node of `mem` (forgotten ones excluded): their texts,
    or with `by="source"` their first sources (the turns they were written from), renamed by
    `source_name` where the memory's sources are not the gold's ids ('turn:3' -> 'D1:4')."""
    graph = mem.to_networkx(valid_only=False)
    rename = source_name or str

    def name(data: dict[str, Any]) -> str:
        return data["text"] if by == "text" else rename(str((data["sources"] or [None])[0]))
    return [(name(data), name(graph.nodes[data["superseded_by"]]))
            for _, data in graph.nodes(data=True) if data.get("superseded_by") is not None]


def _key(pair: Pair) -> Pair:
    return normalize(pair[0]), normalize(pair[1])


def supersession_scores(mem: Any, gold: Iterable[Pair], by: str = "text",
                        source_name: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Precision, recall and F1 of the memory's supersessions against `gold` (pairs of texts,
    or of turn ids with `by="source"`), with counts and the pairs that went wrong."""
    pred = {_key(p): p for p in predicted_pairs(mem, by, source_name)}
    ref = {_key(p): p for p in gold}
    hits = pred.keys() & ref.keys()
    p = len(hits) / len(pred) if pred else None
    r = len(hits) / len(ref) if ref else None
    f1 = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return {"precision": p, "recall": r, "f1": f1, "predicted": len(pred), "gold": len(ref),
            "correct": len(hits),
            "false": [pred[k] for k in sorted(pred.keys() - hits)],
            "missed": [ref[k] for k in sorted(ref.keys() - hits)]}
