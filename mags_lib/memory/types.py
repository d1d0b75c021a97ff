"""Plain result types of the memory: what recall, apply, connect and diff hand back.

All are dataclasses of JSON-friendly values (ints, floats, strings, lists), so a notebook can
`dataclasses.asdict` them straight into `metrics.json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

MAX_ITEM_CHARS = 8_192
"""Longest text one memory item (or recall query) may have: a fact, not a document. Longer
input is refused with an error (split it into facts, or summarise it first)."""

Source = str | int
"""Provenance entry: an input id such as "game3/turn12", or the id of an episode node."""

WriteKind = Literal["added", "merged", "superseded"]


@dataclass
class Hit:
    """One recalled node. `path` runs from the anchor the node was reached from to the node
    itself (`[node_id]` for an anchor); `valid` is False only for superseded or forgotten nodes,
    which recall returns only with `include_invalid=True`."""

    node_id: int
    text: str
    score: float
    block: str
    sources: list[Source] = field(default_factory=list)
    path: list[int] = field(default_factory=list)
    valid: bool = True
    superseded_by: int | None = None
    confidence: float = 1.0


@dataclass
class ContextItem:
    """Hits that are connected among themselves in the recalled subgraph, merged into one
    context entry: texts in the order they were written (oldest first)."""

    node_ids: list[int]
    text: str
    score: float
    blocks: list[str]


@dataclass
class WriteOutcome:
    """What one write did: `node_id` is the node now holding the text; `others` are the nodes
    it superseded (kind "superseded") or the node merged into equals `node_id` (kind "merged")."""

    node_id: int
    kind: WriteKind
    others: list[int] = field(default_factory=list)


@dataclass
class ApplyReport:
    """Result of `LiquidMemory.apply(actions)`, one list per kind of effect.

    `recalls` pairs each RecallQuery text with its hits, `connections` each Connect's (a, b)
    with the hits along the strongest path (empty when no path). `skipped` holds a line per
    action that could not be executed (e.g. Link to a string that matches no node)."""

    added: list[int] = field(default_factory=list)
    merged: list[int] = field(default_factory=list)
    superseded: list[tuple[int, int]] = field(default_factory=list)
    linked: list[tuple[int, int]] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)
    recalls: list[tuple[str, list[Hit]]] = field(default_factory=list)
    connections: list[tuple[tuple[str, str], list[Hit]]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def n_engrams(self) -> int:
        return len(self.added) + len(self.merged) + len(self.superseded) + len(self.forgotten)


@dataclass
class MemoryDiff:
    """Difference between two states (snapshots or the current state).

    `nodes_changed` maps a node id to the names of the attributes that differ; edges are
    `(u, v)` with u < v; `edges_reweighted` maps an edge to (old weight, new weight), both
    decayed to their own state's step."""

    nodes_added: list[int] = field(default_factory=list)
    nodes_removed: list[int] = field(default_factory=list)
    nodes_changed: dict[int, list[str]] = field(default_factory=dict)
    edges_added: list[tuple[int, int]] = field(default_factory=list)
    edges_removed: list[tuple[int, int]] = field(default_factory=list)
    edges_reweighted: dict[tuple[int, int], tuple[float, float]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.nodes_added or self.nodes_removed or self.nodes_changed
                    or self.edges_added or self.edges_removed or self.edges_reweighted)
