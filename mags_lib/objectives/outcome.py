"""The write model rewarded by its outcome: what the memory it leaves lets recall answer.

`engram_reward` pays the write model for matching a gold annotation (soft F1), which teaches it
one annotation style and cannot find a better write than the gold one. `write_outcome_reward`
instead applies the sampled `<engram>` actions to a real `LiquidMemory` holding what a perfect
memory held before the turn (`gold["memory_before"]`, notebook 01), with the closed loop's
memory settings and embedder, and then asks the memory the row's probe questions
(`gold["probes"]`: one per rule known after the turn, in the training phrasings, see
`synth.chains.outcome_probes`):

    reward = held - mu * stale - lam * extra

* `held`: the share of probes whose recall (top `k`, `learn=False`) returns a *valid* fact that
  names the probe's creature, condition and current item (the prediction term);
* `stale`: the share of probes whose rule still has an older version valid anywhere in memory
  (the memory term: a change that was not superseded);
* `extra`: nodes added beyond what the turn needs (one for a rule stated or changed, none for
  a repeat, a feedback verdict or a distractor; the graph regulariser).

Malformed output (no complete `<engram>` block) gets `format_penalty` and changes nothing; a
write whose `forget` or `link` names no node in memory gets at most 0 (see `combine`), counted
in `reward_guard.REWARD_ISSUES`, as is a row whose memory cannot be built (0, by
`GuardedReward`). Rows without probes (ask and answer rows, and write rows from before the
probes) get None, so a mixed dataset can share the reward list. Ground truth only scores here: the probes' items and words
never reach the model's prompt.

Cost: the memory of a row is built once and cached (by a hash of its facts); each completion is
applied after a `snapshot()` and undone with `rollback()`, and texts are embedded once per
process (`MemoEmbedder`), so a reward costs milliseconds once the row's memory exists.

    >>> gold = {"memory_before": [{"text": "On rainy turns, the purple glarb eats only the stone.",
    ...                            "block": "semantic"}],
    ...         "probes": [{"question": "It is rainy. What does the purple glarb eat?",
    ...                     "creature": "purple glarb", "condition": "rainy",
    ...                     "item": "copper", "stale": ["stone"]}], "op": "update"}
    >>> write_outcome_reward(
    ...     ["<engram>\\nupdate semantic 0.9: On rainy turns, the purple glarb eats only the "
    ...      "copper.\\n</engram>", "<engram>\\n</engram>", "no block"], gold=[gold] * 3,
    ...     embedder="hashing")
    [1.0, -0.5, -1.0]
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from mags_lib.actions.parser import parse_actions
from mags_lib.objectives.completions import completion_text
from mags_lib.objectives.data import batch_column, gold_of
from mags_lib.objectives.reward_guard import REWARD_ISSUES

MU, LAM, FORMAT_PENALTY = 0.5, 0.1, -1.0  # the defaults of write_outcome_reward
_CACHE: OrderedDict[str, tuple[Any, int]] = OrderedDict()
CACHE_SIZE = 64
_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=4)
def _embedder(name: str):
    """The rewards' embedder with a text -> vector cache (completions repeat across rows)."""
    from mags_lib.embed import MemoEmbedder
    from mags_lib.objectives.rewards import reward_embedder

    return MemoEmbedder(reward_embedder(name))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def row_memory(facts: list[dict[str, Any]], embedder: str = "embedded",
               overrides: dict[str, Any] | None = None):
    """(memory, snapshot id): a `LiquidMemory` with the closed loop's settings (and
    `overrides`, `MemoryConfig` fields) holding `facts` (as observed, no keys: a model's writes
    in play carry none), built once and cached."""
    key = hashlib.sha256(json.dumps([facts, embedder, overrides or {}],
                                    sort_keys=True).encode()).hexdigest()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    from mags_lib.memory import LiquidMemory, MemoryConfig
    from mags_lib.memory.config import LOOP_MEMORY_DEFAULTS

    memory = LiquidMemory(MemoryConfig.from_dict({**LOOP_MEMORY_DEFAULTS, **(overrides or {})}),
                          embedder=_embedder(embedder), clock=lambda: 0.0)
    memory.observe_many([{"text": f["text"], "block": f.get("block", "semantic")}
                         for f in facts])
    _CACHE[key] = (memory, memory.snapshot())
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return _CACHE[key]


def _states(text: str, probe: dict[str, Any]) -> tuple[bool, bool]:
    """(names the probe's current rule, names one of its older versions) for one fact text."""
    words = _words(text)
    rule = _words(probe["creature"]) | {probe["condition"]} <= words
    return (rule and probe["item"] in words,
            rule and any(s in words and probe["item"] not in words for s in probe["stale"]))


def outcome_terms(text: str, gold: dict[str, Any], k: int = 3,
                  embedder: str = "embedded") -> dict[str, float] | None:
    """held / stale / extra (see the module doc) after applying `text`'s engram actions; None
    when the row has no probes or the output does not parse."""
    probes = gold.get("probes")
    if not probes or "memory_before" not in gold:
        return None
    parsed = parse_actions(text, kind="engram")
    if not parsed.complete:
        return None
    memory, snap = row_memory(gold["memory_before"], embedder)
    try:
        report = memory.apply(parsed.actions)
        held = sum(any(h.valid and _states(h.text, p)[0]
                       for h in memory.recall(p["question"], k, learn=False))
                   for p in probes)
        valid = [d["text"] for _, d in memory.graph.nodes(data=True) if d["valid_to"] is None]
        stale = sum(any(_states(t, p)[1] for t in valid) for p in probes)
        needed = 1 if gold.get("op") in ("add", "update") else 0
        return {"held": held / len(probes), "stale": stale / len(probes),
                "extra": float(max(0, len(report.added) - needed)),
                "skipped": float(len(report.skipped))}
    finally:
        memory.rollback(snap)


def combine(terms: dict[str, float] | None, mu: float = MU, lam: float = LAM,
            format_penalty: float = FORMAT_PENALTY) -> float:
    """held - mu * stale - lam * extra, or `format_penalty` for output that did not parse. A
    write with an action that names no node in memory (a `forget` or `link` of nothing) gets
    at most 0: a flat 0 would pay it more than an honest empty block on a change row, which
    scores as low as -mu."""
    if terms is None:
        return format_penalty
    value = terms["held"] - mu * terms["stale"] - lam * terms["extra"]
    return min(0.0, value) if terms.get("skipped") else value


def write_outcome_reward(completions: list, gold: list | None = None, k: int = 3,
                         mu: float = MU, lam: float = LAM, format_penalty: float = FORMAT_PENALTY,
                         embedder: str = "embedded", **kwargs) -> list[float | None]:
    """held - mu * stale - lam * extra of each completion's write (see the module doc);
    `format_penalty` for output without a complete `<engram>` block; None for rows without
    probes."""
    golds = batch_column(gold, len(completions))
    out: list[float | None] = []
    for c, raw in zip(completions, golds, strict=True):
        g = gold_of(raw)
        if isinstance(raw, str) and not g:  # the row's snapshot does not load
            REWARD_ISSUES["write_outcome_reward: gold is not a JSON object"] += 1
            out.append(0.0)
            continue
        if not g.get("probes") or "memory_before" not in g:
            out.append(None)
            continue
        terms = outcome_terms(completion_text(c), g, k, embedder)
        if terms is not None and terms.get("skipped"):
            REWARD_ISSUES["write_outcome_reward: an action names no node in memory"] += 1
        out.append(combine(terms, mu, lam, format_penalty))
    return out
