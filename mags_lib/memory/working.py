"""Working memory: a bounded buffer of recent turns, and the rule that consolidates them.

`LiquidMemory.perceive(text)` puts a turn here (embedded once). The prompt builder reads
`memory.working.texts()` as the recent context. A recall query similar to an item counts as a
use of it. Items leave the buffer when it overflows or when they are `working_ttl` steps old
(at `step()`); leaving, each is judged by `consolidation_decision`:

    score = use_w * min(uses / use_saturation, 1) + surprise_w * surprise + importance_w * importance
    surprise = 1 - max cosine to the nodes already stored

* surprise < redundancy_surprise: redundant (already known); dropped, and the nearest stored
  node gets a use instead (repetition is evidence that it matters);
* score >= consolidate_threshold: stored as a node through the normal write path (so it may
  still merge into or supersede a node);
* otherwise forgotten.

>>> consolidation_decision(0.9, 0.8, threshold=0.45, redundancy=0.05)
'store'
>>> consolidation_decision(0.9, 0.01, threshold=0.45, redundancy=0.05)
'redundant'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Decision = Literal["store", "redundant", "drop"]


@dataclass
class WorkingItem:
    """One recent turn: text, where it came from, and how it has been used so far."""

    text: str
    embedding: np.ndarray
    step: int
    block: str = "episodic"
    source: str | int | None = None
    time: float | None = None
    importance: float = 0.5
    confidence: float | None = None
    key: str | None = None
    uses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "embedding": [float(x) for x in self.embedding],
                "step": self.step, "block": self.block, "source": self.source,
                "time": self.time, "importance": self.importance,
                "confidence": self.confidence, "key": self.key, "uses": self.uses}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkingItem:
        return cls(**{**data, "embedding": np.asarray(data["embedding"], dtype=np.float32)})


@dataclass
class WorkingMemory:
    """Bounded FIFO of `WorkingItem`s (oldest first)."""

    capacity: int = 16
    items: list[WorkingItem] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def texts(self) -> list[str]:
        """The recent turns, oldest first: what a prompt shows as 'recent context'."""
        return [item.text for item in self.items]

    def add(self, item: WorkingItem) -> list[WorkingItem]:
        """Append `item`; return the items pushed out by the capacity bound (oldest first)."""
        self.items.append(item)
        overflow = len(self.items) - self.capacity
        if overflow <= 0:
            return []
        out, self.items = self.items[:overflow], self.items[overflow:]
        return out

    def pop_expired(self, step: int, ttl: int) -> list[WorkingItem]:
        """Remove and return the items at least `ttl` steps old."""
        out = [item for item in self.items if step - item.step >= ttl]
        self.items = [item for item in self.items if step - item.step < ttl]
        return out

    def pop_all(self) -> list[WorkingItem]:
        out, self.items = self.items, []
        return out

    def touch(self, query_vec: np.ndarray, min_cosine: float) -> int:
        """Count a use for every item at least `min_cosine` similar to the query; return how many."""
        if not self.items:
            return 0
        sims = np.stack([item.embedding for item in self.items]) @ query_vec
        hit = 0
        for item, sim in zip(self.items, sims.tolist(), strict=True):
            if sim >= min_cosine:
                item.uses += 1
                hit += 1
        return hit

    def to_dict(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "items": [item.to_dict() for item in self.items]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkingMemory:
        return cls(capacity=data["capacity"],
                   items=[WorkingItem.from_dict(item) for item in data["items"]])

    def copy(self) -> WorkingMemory:
        return WorkingMemory.from_dict(self.to_dict())


def surprise(max_cosine: float | None) -> float:
    """Novelty against what is stored: 1 - max cosine (1 for an empty memory), in [0, 1]."""
    if max_cosine is None:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - max_cosine)))


def consolidation_score(uses: int, surprise_value: float, importance: float, *,
                        use_weight: float, surprise_weight: float, importance_weight: float,
                        use_saturation: int) -> float:
    """Weighted sum of saturating usage, surprise and importance (see the module docstring)."""
    usage = min(uses / max(use_saturation, 1), 1.0)
    return (use_weight * usage + surprise_weight * surprise_value
            + importance_weight * min(max(importance, 0.0), 1.0))


def consolidation_decision(score: float, surprise_value: float, *, threshold: float,
                           redundancy: float) -> Decision:
    """'redundant' if already stored, 'store' if it scores enough, else 'drop'."""
    if surprise_value < redundancy:
        return "redundant"
    return "store" if score >= threshold else "drop"
