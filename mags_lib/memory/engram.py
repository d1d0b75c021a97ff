"""Engram: how a new item enters long-term memory (merge, supersede or neurogenesis).

For every item, in order, against its nearest valid nodes (by cosine):

1. Contradiction (semantic facts, or any item with an explicit `key`): with a key, the valid
   node holding the same key and another text is contradicted; without, the memory's
   `ContradictionDetector` checks the `contradiction_candidates` most similar valid semantic
   nodes (cosine >= `contradiction_min_cosine`, text not identical). Contradicted nodes are
   superseded: marked invalid (`valid_to`, `superseded_by`, confidence down) and linked from the
   new node by a `supersedes` edge (solid when `keep_history`).
2. Otherwise merge: if the closest valid node of the same block has cosine >=
   `merge_threshold` (or holds the same key and text), the item merges into it: confidence by
   noisy-or (1 - (1 - c_old)(1 - c_new)), the source appended, one use counted.
3. Otherwise neurogenesis: a new node. `EngramUpdate` (mode "update") first supersedes the
   closest valid same-block node with cosine >= `update_supersede_threshold`, if any (with a
   judge, the first of the nearest ones the judge says it replaces: `update_target`).

A new node connects to its top-m valid neighbours (any block) with attention weights, see
`attention_weights`, and an episode to the previous episode in time (`temporal` edge).

With `episode_context` n > 0 an episode's vector is the normalised sum of two embeddings: of its
own text, and of its text after the texts of the n episodes before it (`context_texts`), so the
vector index finds a reply by what it answers and a self-contained statement still by its own
words; its text, its BM25 entry and what a reader is shown stay its own. Such an episode merges
only into a node with the same text (step 2 also asks for equal normalised text). Items
written with a precomputed embedding keep it.

`observe_many` searches the index for a whole chunk at once and compares the chunk's items with
each other by one matrix product, which gives exactly the neighbours that one-by-one writes
would see.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from mags_lib.actions.types import BLOCKS
from mags_lib.errors import MagsError
from mags_lib.memory.config import MAX_EPISODE_CONTEXT
from mags_lib.memory.contradiction import different_subjects, normalise_text, shared_words
from mags_lib.memory.types import MAX_ITEM_CHARS, Source, WriteOutcome

if TYPE_CHECKING:
    from mags_lib.memory.store import LiquidMemory

Mode = Literal["add", "update"]
KEYED_SUPERSEDE_WEIGHT = 0.5  # supersedes edge to a keyed fact not among the neighbours


@dataclass(frozen=True)
class WriteItem:
    """One thing to store; see `LiquidMemory.observe` for the fields."""

    text: str
    block: str = "episodic"
    source: Source | None = None
    time: float | None = None
    confidence: float | None = None
    key: str | None = None
    importance: float | None = None


def as_write_item(item: str | dict[str, Any] | WriteItem) -> WriteItem:
    """Validate a string, dict or WriteItem; raise MagsError naming the bad field."""
    if isinstance(item, WriteItem):
        data = item.__dict__
    elif isinstance(item, str):
        data = {"text": item}
    elif isinstance(item, dict):
        unknown = set(item) - set(WriteItem.__dataclass_fields__)
        if unknown:
            raise MagsError(f"unknown item fields {sorted(unknown)}",
                            "use text, block, source, time, confidence, key, importance")
        data = {k: v for k, v in item.items() if v is not None}
    else:
        raise MagsError(f"cannot store a {type(item).__name__}", "pass a str or a dict")
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        raise MagsError(f"item text must be a non-empty string, got {text!r}", "give it text")
    if len(text) > MAX_ITEM_CHARS:
        raise MagsError(f"item text is {len(text):,} characters, above the limit of "
                        f"{MAX_ITEM_CHARS:,} (memory.types.MAX_ITEM_CHARS)",
                        "store facts, not documents: split the text or summarise it first")
    block = data.get("block", "episodic")
    if block not in BLOCKS:
        raise MagsError(f"unknown block {block!r}", f"use one of {list(BLOCKS)}")
    for name in ("confidence", "importance"):
        value = data.get(name)
        if value is not None and not (_number(value) and 0.0 <= value <= 1.0):
            raise MagsError(f"{name} must be a number in [0, 1], got {value!r}", "clip it")
    time = data.get("time")
    if time is not None and not (_number(time) and math.isfinite(time)):
        raise MagsError(f"time must be a finite number, got {time!r}", "pass seconds or a turn")
    source = data.get("source")
    if source is not None and (isinstance(source, bool) or not isinstance(source, str | int)):
        raise MagsError(f"source must be a str or an int, got {source!r}", "use an input id")
    key = data.get("key")
    if key is not None and not isinstance(key, str):
        raise MagsError(f"key must be a string, got {key!r}", 'use e.g. "glarb|rainy|eats"')
    return WriteItem(text=text, block=block, source=source,
                     time=None if time is None else float(time),
                     confidence=None if data.get("confidence") is None
                     else float(data["confidence"]),
                     key=key, importance=None if data.get("importance") is None
                     else float(data["importance"]))


def attention_weights(cosines: np.ndarray | list[float], temperature: float,
                      min_weight: float) -> np.ndarray:
    """Edge weights for a new node's neighbours, inspired by graph attention.

    softmax(c / T) over the neighbours' cosines c, rescaled so the best neighbour's weight is
    its (clipped) cosine: w_i = c_max * exp((c_i - c_max) / T). Weights below `min_weight`
    become 0 (no edge). All weights are in [0, 1].

    >>> attention_weights([0.8, 0.7, 0.1], temperature=0.1, min_weight=0.05).round(3).tolist()
    [0.8, 0.294, 0.0]
    """
    return np.asarray(_attention_list([float(c) for c in cosines], temperature, min_weight),
                      dtype=np.float64)


def _attention_list(cosines: list[float], temperature: float, min_weight: float) -> list[float]:
    """`attention_weights` on a short list in plain Python (a write calls it once per new node,
    where numpy's per-call overhead on 5 numbers cost more than the arithmetic)."""
    c = [min(1.0, max(0.0, x)) for x in cosines]
    if not c:
        return []
    best = max(c)
    out = []
    for x in c:
        w = best * math.exp((x - best) / temperature)
        out.append(min(w, 1.0) if w >= min_weight else 0.0)
    return out


def write_items(mem: LiquidMemory, items: list[Any], embeddings: Any | None = None,
                mode: Mode = "add") -> list[WriteOutcome]:
    """Write `items` in order (see the module docstring); one outcome per item."""
    batch = [as_write_item(item) for item in items]
    if not batch:
        return []
    if embeddings is None:
        vectors = embed_items(mem, batch)
    else:
        vectors = mem._as_vectors(embeddings, len(batch))
    cfg = mem.config
    k = cfg.engram.attention_top_m + cfg.engram.write_overquery
    outcomes: list[WriteOutcome] = []
    for start in range(0, len(batch), cfg.engram.write_chunk):
        chunk = vectors[start:start + cfg.engram.write_chunk]
        found = mem._search_many(chunk, k, expansion=cfg.index.hnsw_expansion_write)
        sims = np.round((chunk @ chunk.T).astype(np.float64), 6).astype(np.float32)  # as index
        earlier = _EarlierRows(sims, k)
        new_rows: list[int] = []
        new_ids: list[int] = []
        node_of_row: dict[int, int] = {}
        for row, item in enumerate(batch[start:start + cfg.engram.write_chunk]):
            cands = found[row]  # ranked by (-cosine, id) already
            if new_rows:
                # every id made in this chunk is above every id found in the index, and both
                # lists rank ties by id, so a stable sort on the cosine keeps (-cosine, id)
                cands = sorted(cands + earlier.nearest_new(row, node_of_row, new_rows, new_ids),
                               key=itemgetter(1), reverse=True)[:k]
            outcome = write_one(mem, item, cands, mode, vector=chunk[row])
            outcomes.append(outcome)
            if item.block == "episodic":
                mem._recent_episodes.append(item.text)
            mem._tally.engrams += 1
            if outcome.kind != "merged":
                new_rows.append(row)
                new_ids.append(outcome.node_id)
                node_of_row[row] = outcome.node_id
                if mem.edge_scorer is not None:  # a scorer reads the candidates' vectors
                    assert mem.index is not None
                    mem.index.add(np.asarray([outcome.node_id], dtype=np.int64),
                                  chunk[row:row + 1])
                    mem.lexical.add_many([outcome.node_id], [item.text])
        if new_ids and mem.edge_scorer is None:
            assert mem.index is not None
            mem.index.add(np.asarray(new_ids, dtype=np.int64), chunk[new_rows])
            mem.lexical.add_many(new_ids, [batch[start + row].text for row in new_rows])
    return outcomes


def context_texts(mem: LiquidMemory, batch: list[WriteItem]) -> list[str | None]:
    """For each item: under `episode_context` n > 0, an episode's text after the texts of the n
    episodes before it (the memory's latest, then this batch's earlier ones), oldest first,
    joined by spaces; None for anything else and for an episode with none before it."""
    n = mem.config.engram.episode_context
    if n == 0:
        return [None] * len(batch)
    recent = list(mem._recent_episodes)
    out: list[str | None] = []
    for item in batch:
        if item.block != "episodic":
            out.append(None)
            continue
        out.append(" ".join([*recent[-n:], item.text]) if recent else None)
        recent.append(item.text)
    return out


def embed_items(mem: LiquidMemory, batch: list[WriteItem]) -> np.ndarray:
    """Unit vectors of the items: their own texts embedded, and for an episode with context
    (`context_texts`) the normalised sum of that and its context's embedding. Two embedder
    calls at most per batch."""
    vectors = mem._encode([item.text for item in batch])
    contexts = context_texts(mem, batch)
    rows = [i for i, c in enumerate(contexts) if c is not None]
    if rows:
        blended = vectors[rows] + mem._encode([contexts[i] for i in rows])
        norms = np.linalg.norm(blended, axis=1, keepdims=True)
        ok = norms[:, 0] > 1e-6  # a context exactly opposite its turn keeps the turn's vector
        vectors[np.asarray(rows)[ok]] = blended[ok] / norms[ok]
    return vectors


def recent_episodes(mem: LiquidMemory) -> list[str]:
    """The texts of the memory's latest episodic nodes, oldest first (ids grow with every new
    node): how `_recent_episodes` is rebuilt when a state is restored or loaded, where the
    texts of repeats that merged into older nodes are not known."""
    nodes = mem.graph._node
    latest = sorted(n for n, d in nodes.items() if d["block"] == "episodic")
    return [nodes[n]["text"] for n in latest[-MAX_EPISODE_CONTEXT:]]


class _EarlierRows:
    """The nearest earlier rows of a chunk, for each row, among those that became new nodes.

    One argsort per chunk ranks every row's earlier rows by (cosine desc, row asc), which is
    the order the index ranks by; a row then walks its ranking past the rows that merged
    instead. When a row's window of `k + 16` runs out before k new rows, it sorts all of them."""

    def __init__(self, sims: np.ndarray, k: int):
        n = len(sims)
        masked = np.where(np.tri(n, k=-1, dtype=bool), sims, -np.inf)
        order = np.argsort(-masked, axis=1, kind="stable")[:, :min(n, k + 16)]
        self.sims, self.k = sims, k
        self.order = order.tolist()
        self.scores = np.take_along_axis(masked, order, axis=1).tolist()

    def nearest_new(self, row: int, node_of_row: dict[int, int], new_rows: list[int],
                    new_ids: list[int]) -> list[tuple[int, float]]:
        picks: list[tuple[int, float]] = []
        for j, score in zip(self.order[row], self.scores[row], strict=True):
            if score == -math.inf:  # every earlier row seen
                return picks
            node = node_of_row.get(j)
            if node is not None:
                picks.append((node, score))
                if len(picks) == self.k:
                    return picks
        if len(picks) == len(new_rows):
            return picks
        s = self.sims[row, new_rows]  # the window ran out: rank all earlier new rows
        top = np.argsort(-s, kind="stable")[:self.k]
        return [(new_ids[j], float(s[j])) for j in top.tolist()]


def write_one(mem: LiquidMemory, item: WriteItem, cands: list[tuple[int, float]],
              mode: Mode = "add", vector: np.ndarray | None = None) -> WriteOutcome:
    """Merge, supersede or add one item given its nearest nodes `cands` (id, cosine)."""
    cfg = mem.config
    nodes = mem.graph._node  # networkx's node-attribute dict: a plain dict, no view per lookup
    valid: list[tuple[int, float]] = []
    same: list[tuple[int, float]] = []
    for pair in cands:
        data = nodes[pair[0]]
        if data["valid_to"] is None:
            valid.append(pair)
            if data["block"] == item.block:
                same.append(pair)
    confidence = cfg.engram.default_confidence if item.confidence is None else item.confidence
    old_ids = contradicted_nodes(mem, item, same)
    if not old_ids:
        target = merge_target(mem, item, same)
        if target is not None:
            merge_into(mem, target, item, confidence)
            return WriteOutcome(target, "merged", [])
        if mode == "update":
            old_ids = update_target(mem, item, same)
    key = item.key
    if key is None and old_ids:
        key = nodes[old_ids[0]]["key"]
    new = mem._add_node(item.text, item.block, confidence=confidence,
                        importance=0.5 if item.importance is None else item.importance,
                        sources=[] if item.source is None else [item.source],
                        created_at=mem._now() if item.time is None else item.time, key=key)
    cosine = dict(cands)
    for old in old_ids:
        supersede(mem, old, new, cosine.get(old, KEYED_SUPERSEDE_WEIGHT))
    if mem.edge_scorer is not None and vector is not None:
        neighbours, weights = scored_neighbours(mem, new, vector,
                                                [(j, c) for j, c in valid if j not in old_ids])
    else:
        neighbours = [(j, c) for j, c in valid if j not in old_ids][:cfg.engram.attention_top_m]
        weights = _attention_list([c for _, c in neighbours], cfg.engram.attention_temperature,
                                  cfg.engram.min_edge_weight)
    mem._connect_new(new, [(j, w) for (j, _), w in zip(neighbours, weights, strict=True)
                           if w > 0], "similarity")
    if item.block == "episodic":
        link_episode(mem, new)
    return WriteOutcome(new, "superseded" if old_ids else "added", list(old_ids))


def scored_neighbours(mem: LiquidMemory, new: int, vector: np.ndarray,
                      pool: list[tuple[int, float]]
                      ) -> tuple[list[tuple[int, float]], list[float]]:
    """`mem.edge_scorer`'s pick among all valid candidates: the top-m weights at or above
    `min_edge_weight` (the others 0), in the candidates' order."""
    cfg = mem.config.engram
    raw = mem.edge_scorer.weights(mem, new, vector, pool) if pool else []
    keep = set(sorted(range(len(pool)), key=lambda i: -raw[i])[:cfg.attention_top_m])
    weights = [min(1.0, float(w)) if i in keep and w >= cfg.min_edge_weight else 0.0
               for i, w in enumerate(raw)]
    return pool, weights


def update_target(mem: LiquidMemory, item: WriteItem, same: list[tuple[int, float]]
                  ) -> list[int]:
    """The fact an `EngramUpdate` replaces when no detector flagged one: the nearest same-block
    fact above `update_supersede_threshold` (with `subject_check`, none that opens with another
    name: `contradiction.different_subjects`; with `update_shared_words`, not even that one if
    it shares fewer content words with the update besides the name: `contradiction.
    shared_words`), or, with `mem.judge`, the first of the
    `update_judge_candidates` nearest that the judge says the update replaces (none: an add)."""
    cfg = mem.config
    nodes = mem.graph._node
    near = (j for j, c in same if c >= cfg.engram.update_supersede_threshold
            and not (cfg.engram.subject_check and different_subjects(nodes[j]["text"], item.text)))
    if mem.judge is None:
        shared = cfg.engram.update_shared_words
        return [j for j in islice(near, 1)
                if shared <= 0 or shared_words(nodes[j]["text"], item.text) >= shared]
    for j in islice(near, cfg.engram.update_judge_candidates):
        if mem.judge.contradicts(nodes[j]["text"], item.text):
            return [j]
    return []


def contradicted_nodes(mem: LiquidMemory, item: WriteItem,
                       same: list[tuple[int, float]]) -> list[int]:
    """Valid nodes of the item's block that the item states another value for."""
    nodes = mem.graph.nodes
    text = normalise_text(item.text)
    if item.key is not None:
        current = mem._keys.get(item.key)
        if (current is not None and nodes[current]["valid_to"] is None
                and normalise_text(nodes[current]["text"]) != text):
            return [current]
        return []
    if item.block != "semantic":
        return []
    cfg = mem.config
    out = []
    for j, c in same[:cfg.engram.contradiction_candidates]:
        if c < cfg.engram.contradiction_min_cosine:
            break
        old_text = nodes[j]["text"]
        if cfg.engram.subject_check and different_subjects(old_text, item.text):
            continue
        if normalise_text(old_text) != text and mem.detector.contradicts(old_text, item.text):
            out.append(j)
    return out


def merge_target(mem: LiquidMemory, item: WriteItem,
                 same: list[tuple[int, float]]) -> int | None:
    """The node the item repeats: same key and text, or cosine >= merge_threshold with a node
    whose key is the item's or unset (a keyed item never merges into another key's node) and,
    for an episode embedded with its context, whose text is the item's."""
    nodes = mem.graph.nodes
    contextual = item.block == "episodic" and mem.config.engram.episode_context > 0
    if item.key is not None:
        current = mem._keys.get(item.key)
        if current is not None and normalise_text(nodes[current]["text"]) == normalise_text(
                item.text):
            return current
    for j, c in same:
        if c < mem.config.engram.merge_threshold:
            break
        other_key = nodes[j]["key"]
        if contextual and normalise_text(nodes[j]["text"]) != normalise_text(item.text):
            continue
        if item.key is None or other_key is None or other_key == item.key:
            return j
    return None


def merge_into(mem: LiquidMemory, target: int, item: WriteItem, confidence: float) -> None:
    """Fold a repeated item into `target`: confidence up (noisy-or), source added, one use."""
    data = mem.graph.nodes[target]
    data["confidence"] = 1.0 - (1.0 - data["confidence"]) * (1.0 - confidence)
    sources = data["sources"]
    if item.source is not None and item.source not in sources:
        sources.append(item.source)
        if len(sources) > mem.config.engram.max_sources:
            del sources[1]  # keep the origin and the newest ones
    if item.importance is not None:
        data["importance"] = max(data["importance"], item.importance)
    if item.key is not None and data["key"] is None:
        data["key"] = item.key
        mem._keys[item.key] = target
    mem._mark_used(target)
    if item.block == "episodic":
        link_episode(mem, target)


def supersede(mem: LiquidMemory, old: int, new: int, cosine: float) -> None:
    """`new` is the current version of `old`: invalidate old, keep the link to it."""
    mem._invalidate(old, by=new)
    mem._connect(new, old, max(cosine, mem.config.engram.min_edge_weight), "supersedes",
                 solid=mem.config.engram.keep_history)


def link_episode(mem: LiquidMemory, node: int) -> None:
    """Temporal edge from the previous episode to `node`, which becomes the latest episode."""
    last = mem._last_episode
    if last is not None and last != node and last in mem.graph:
        mem._connect(node, last, mem.config.engram.temporal_weight, "temporal")
    mem._last_episode = node


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)
