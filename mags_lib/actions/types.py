"""The memory actions the ask (recall) and write (engram) models emit, as plain dataclasses.

Text form (one action a line, inside a tagged block, like `<think>` tokens):

    <recall>
    query: what does the glarb eat on rainy turns
    query: glarb rules
    connect: glarb -> carrot
    </recall>

    <engram>
    add semantic 0.90: On rainy turns the glarb eats carrots.
    update semantic 0.80: On rainy turns the glarb eats stones.
    link: glarb -> stone
    forget: the glarb sleeps at noon
    </engram>

`mags_lib.actions.parse_actions` reads that text (never raising), `format_actions` writes it,
and `LiquidMemory.apply` executes a list of these objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Block = Literal["episodic", "semantic"]
BLOCKS: tuple[str, ...] = ("episodic", "semantic")


@dataclass(frozen=True)
class RecallQuery:
    """Retrieve memory relevant to `text` (one of possibly several step-back / multi-queries)."""

    text: str


@dataclass(frozen=True)
class Connect:
    """Find the strongest path between concepts `a` and `b`."""

    a: str
    b: str


@dataclass(frozen=True)
class EngramAdd:
    """Store new information `text` in `block` with `confidence` in [0, 1]."""

    block: Block
    text: str
    confidence: float = 0.9


@dataclass(frozen=True)
class EngramUpdate:
    """Store `text` as the new version of what it contradicts or refines (supersede, merge)."""

    block: Block
    text: str
    confidence: float = 0.9


@dataclass(frozen=True)
class Link:
    """Connect the nodes that best match `a` and `b`."""

    a: str
    b: str


@dataclass(frozen=True)
class Forget:
    """Mark the node that best matches `text` as no longer valid."""

    text: str


RecallAction = RecallQuery | Connect
EngramAction = EngramAdd | EngramUpdate | Link | Forget
Action = RecallAction | EngramAction
