"""What the memory does with a write: the op carried out, beside the op the writer chose.

The write model chooses add, update or nothing, and in play the memory decides what that
write does (`LiquidMemory.apply`, the closed loop's settings): an add of a fact it already
holds is merged (nothing new is stored), an add that its contradiction detector pairs with a
held fact supersedes it (an update in effect), an update supersedes its pair, or else the
closest fact of its block at cosine `update_supersede_threshold` or more, or else is stored as
a new fact (an add in effect). So some of the writer's op errors cost nothing in play and
others cost more than they look: a repeat written as an add is merged away; a fact written as
an update can retire an unrelated one.

    effect = op_effect(reply, shown)          # 'none' | 'add' | 'update' | 'bad'
    table = effect_table(replies, shown_lines, gold_ops)   # as `ops_confusion`, effects chosen

The memory holds the lines the write prompt showed (a judge row's `memory_shown`) and nothing
else, with `objectives.outcome.row_memory`'s settings (`LOOP_MEMORY_DEFAULTS`); in play it
holds the whole history, and the loop's grounding check (names the turn does not have) is not
applied. This is **not** the write model's op accuracy (the issue's target measures the model's
own op): it says which of the model's op errors the memory absorbs and which it makes worse.
`tools/op_margin_study.py` reports it beside every writer's op table.

    >>> op_effect("<engram>\\n</engram>", ["Ana lives in Porto."])
    'none'
    >>> op_effect("<engram>\\nadd", [])
    'bad'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EFFECTS: tuple[str, ...] = ("none", "add", "update", "bad")
"""What a write did: stored nothing new (an empty block, or merged into a held fact), stored a
new fact, stored one that retired a held fact, or did not parse (changes nothing)."""


def effect_of(report: Any) -> str:
    """The effect of one applied block (`memory.types.ApplyReport`): 'update' when it retired a
    fact, else 'add' when it stored a new one, else 'none' (merged, skipped or empty)."""
    if report.superseded:
        return "update"
    return "add" if report.added else "none"


def op_effect(reply: str, shown: list[str], embedder: str = "embedded",
              memory: dict[str, Any] | None = None) -> str:
    """What `reply`'s add / update lines do to a memory that holds `shown` (see the module
    docstring; `memory`: `MemoryConfig` overrides on the loop's settings); the memory is rolled
    back afterwards, so rows can share it."""
    return effect_detail(reply, shown, embedder, memory)[0]


def effect_detail(reply: str, shown: list[str], embedder: str = "embedded",
                  memory: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    """(`op_effect`, the texts of the shown lines the write retired)."""
    from mags_lib.actions import EngramAdd, EngramUpdate, parse_actions
    from mags_lib.objectives.outcome import row_memory

    parsed = parse_actions(reply, "engram")
    if not parsed.complete:
        return "bad", []
    writes = [a for a in parsed.actions if isinstance(a, EngramAdd | EngramUpdate)]
    if not writes:
        return "none", []
    held, snap = row_memory([{"text": line} for line in shown], embedder, memory)
    try:
        report = held.apply(writes)
        return effect_of(report), [held.graph.nodes[old]["text"]
                                   for _, old in report.superseded]
    finally:
        held.rollback(snap)


def effect_table(replies: list[str], shown: list[list[str]], gold: list[str | None],
                 embedder: str = "embedded", gold_facts: list[str | None] | None = None,
                 same_fact: Callable[[str, str], bool] | None = None,
                 memory: dict[str, Any] | None = None) -> dict[str, Any]:
    """`objectives.write_metrics.ops_confusion` of the effects against the gold ops, each
    row's effect (`effects`) and what it retired (`retired`). With `gold_facts` (each row's
    gold fact text) and `same_fact(old, new)` (whether two texts state the same fact of the
    same person, e.g. `persona_phrases.fact_topic` equal), `retirements` counts the retired
    lines: `right` where the gold op is an update and the line is its old fact, `wrong` else
    (a fact that had not changed, retired: what a wrong update costs in play). `memory`:
    `MemoryConfig` overrides on the loop's settings."""
    from mags_lib.objectives.write_metrics import ops_confusion

    details = [effect_detail(r, s, embedder, memory)
               for r, s in zip(replies, shown, strict=True)]
    out = {**ops_confusion([e for e, _ in details], gold),
           "effects": [e for e, _ in details], "retired": [r for _, r in details]}
    if gold_facts is not None and same_fact is not None:
        right = wrong = 0
        for (_, retired), op, fact in zip(details, gold, gold_facts, strict=True):
            for line in retired:
                ok = op == "update" and fact is not None and same_fact(line, fact)
                right, wrong = right + ok, wrong + (not ok)
        out["retirements"] = {"right": right, "wrong": wrong}
    return out
