"""Moving working-memory items into long-term memory (the rule itself is in `working.py`).

`perceive` embeds a turn and appends it to `memory.working`; items pushed out by the capacity
bound are consolidated at once. `consolidate` (called by `step()`) handles the items that are
`working_ttl` steps old, or all of them with `flush=True`. Stored items go through the normal
write path (`engram.write_items`), so a consolidated fact can still merge or supersede.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mags_lib.memory.engram import as_write_item, write_items
from mags_lib.memory.working import (
    WorkingItem,
    consolidation_decision,
    consolidation_score,
    surprise,
)

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

NEAREST = 5  # stored nodes looked at for surprise; the first valid one counts


def perceive(mem: LiquidMemory, text: str, *, block: str = "episodic",
             source: str | int | None = None, time: float | None = None,
             importance: float = 0.5, confidence: float | None = None, key: str | None = None,
             embedding: Any = None) -> list[int]:
    """Add a turn to working memory; consolidate what overflows. Returns written node ids."""
    checked = as_write_item({"text": text, "block": block, "source": source, "time": time,
                             "importance": importance, "confidence": confidence, "key": key})
    vec = mem._encode([text])[0] if embedding is None else mem._as_vectors(embedding, 1)[0]
    item = WorkingItem(text=checked.text, embedding=vec, step=mem.step_count,
                       block=checked.block, source=checked.source, time=checked.time,
                       importance=importance, confidence=checked.confidence, key=checked.key)
    return consolidate_items(mem, mem.working.add(item))


def consolidate(mem: LiquidMemory, flush: bool = False) -> list[int]:
    """Consolidate due working items (all of them with `flush`); returns written node ids."""
    if flush:
        items = mem.working.pop_all()
    else:
        items = mem.working.pop_expired(mem.step_count, mem.config.consolidation.working_ttl)
    return consolidate_items(mem, items)


def consolidate_items(mem: LiquidMemory, items: list[WorkingItem]) -> list[int]:
    """Store, reinforce (redundant) or drop each item by `consolidation_decision`."""
    cfg = mem.config.consolidation
    written: list[int] = []
    if not cfg.consolidate:
        return written
    for item in items:
        nearest = [(j, c) for j, c in mem._search(item.embedding, NEAREST)
                   if mem.graph.nodes[j]["valid_to"] is None][:1]
        novelty = surprise(nearest[0][1] if nearest else None)
        score = consolidation_score(
            item.uses, novelty, item.importance, use_weight=cfg.consolidate_use_weight,
            surprise_weight=cfg.consolidate_surprise_weight,
            importance_weight=cfg.consolidate_importance_weight,
            use_saturation=cfg.use_saturation)
        decision = consolidation_decision(score, novelty, threshold=cfg.consolidate_threshold,
                                          redundancy=cfg.redundancy_surprise)
        if decision == "redundant":
            mem._mark_used(nearest[0][0])
        elif decision == "store":
            record = {"text": item.text, "block": item.block, "source": item.source,
                      "time": item.time, "confidence": item.confidence, "key": item.key,
                      "importance": item.importance}
            written.append(write_items(mem, [record], item.embedding[None, :])[0].node_id)
    return written
