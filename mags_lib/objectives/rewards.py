"""Reward functions for GRPO (and scores for evaluation): small, pure, registered by name.

Every function has TRL's signature `f(completions, **kwargs) -> list[float | None]`.
`completions` holds strings, or message lists (`[{"role": "assistant", "content": ...}]`) for
conversational datasets; dataset columns (`task`, `gold`, ...) arrive as keyword lists aligned
with `completions`. `None` means "does not apply to this row" (TRL turns it into NaN and leaves
it out of the weighted sum), so a mixed ask/write/answer dataset can share one reward list.
Keyword parameters with defaults (`k`, `max_queries`, ...) are set from a config with
`functools.partial` (see `build_rewards`, which also wraps each in `reward_guard.GuardedReward`).
What an output says is read in `completions`; the write model's evaluation metrics (op
confusion, exact fact) are in `write_metrics`, its outcome reward in `outcome`.

    >>> text = "<recall>\\nquery: glarb diet\\n</recall>"
    >>> format_reward([text, "hello"], task=["ask", "ask"])
    [1.0, 0.0]
    >>> sorted(REWARDS)[:5], sorted(REWARDS)[5:]
    (['answer_reward', 'ask_f1_reward', 'budget_penalty', 'engram_reward', 'format_reward'], ['guardrail_reward', 'recall_precision_reward', 'recall_reward', 'write_outcome_reward'])

`recall_reward` and `recall_precision_reward` are the only ones with state: they build a real
`LiquidMemory` from the row's `gold["memory_facts"]` and cache it by a hash of the facts, so the
G generations of one prompt (and every later visit, by either reward) share one memory; recall
runs with `learn=False`, so scoring never changes it.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from mags_lib.actions.parser import parse_actions, query_texts
from mags_lib.actions.types import Connect, RecallQuery
from mags_lib.embed import tokenize
from mags_lib.objectives.completions import (
    completion_text,
    engram_ops,
    gold_ops,
    norm_text,
    parse_answer,
)
from mags_lib.objectives.data import TASK_KIND, batch_column, gold_of
from mags_lib.objectives.reward_guard import GuardedReward, Reward


def _overlap(a: str, b: str) -> float:
    """Token-set Dice similarity in [0, 1] of two texts (1.0 for equal normalised texts)."""
    ta, tb = set(tokenize(a)), set(tokenize(b))
    if not ta or not tb:
        return float(ta == tb)
    return 2 * len(ta & tb) / (len(ta) + len(tb))


# ----- format ------------------------------------------------------------------------------


def _format_score(text: str, kind: str) -> float:
    if kind == "answer":
        choice, closed = parse_answer(text)
        return 0.0 if choice is None else 1.0 if closed else 0.5
    result = parse_actions(text, kind=kind)
    if result.complete:
        return 1.0
    if result.blocks == 0:
        return 0.0
    ok, bad = len(result.actions), len(result.errors)
    return 0.2 + 0.6 * ok / (ok + bad)


def format_reward(completions: list, task: list | None = None, **kwargs) -> list[float]:
    """1.0 if the completion parses completely as its task's output (ask: a `<recall>` block,
    write: an `<engram>` block, answer: `<answer>X</answer>`), 0.0 if no such block is there,
    and partial credit in [0.2, 0.8] for a block with errors (share of good lines), or 0.5
    for an unclosed answer. Rows without a task accept either action block.

    >>> format_reward(["<engram>\\nadd semantic 0.9: Glarbs eat stones.\\n</engram>",
    ...                "<engram>\\nadd semantic 0.9: Glarbs eat stones.\\nbad line\\n</engram>",
    ...                "<recall>\\nquery: x\\n</recall>"], task=["write"] * 3)
    [1.0, 0.5, 0.0]
    """
    tasks = batch_column(task, len(completions))
    return [_format_score(completion_text(c), TASK_KIND.get(t, "any"))
            for c, t in zip(completions, tasks, strict=True)]


# ----- recall ------------------------------------------------------------------------------

_MEMORY_CACHE: OrderedDict[str, tuple[Any, dict[str, int], dict[str, int]]] = OrderedDict()
MEMORY_CACHE_SIZE = 256


@lru_cache(maxsize=4)
def reward_embedder(name: str):
    """The embedder a reward recalls with: "hashing" (fast, lexical) or a sentence-transformers
    model ("embedded" = MiniLM, as in play); one per process."""
    from mags_lib.embed import HashingEmbedder, default_embedder

    return HashingEmbedder() if name == "hashing" else default_embedder(name)


def _fact_item(fact: Any, i: int) -> dict[str, Any]:
    if isinstance(fact, str):
        fact = {"text": fact}
    # Every fact gets an identity key: the memory merges and supersedes only within a key, so
    # a near-duplicate distractor can never swallow or replace the gold fact. Facts that share
    # an explicit key are versions of one fact (the later supersedes the earlier).
    return {"text": str(fact.get("text", "")), "block": fact.get("block", "semantic"),
            "key": str(fact["key"]) if fact.get("key") else f"_fact{i}"}


def memory_for(facts: list, embedder: str = "hashing"):
    """A `LiquidMemory` holding `facts` (strings or {"text", "block", "key"} dicts) as listed,
    built once per (facts, embedder) and cached; returns (memory, node id by normalised text,
    node id by key)."""
    key = hashlib.sha256(json.dumps([facts, embedder], sort_keys=True).encode()).hexdigest()
    if key in _MEMORY_CACHE:
        _MEMORY_CACHE.move_to_end(key)
        return _MEMORY_CACHE[key]
    from mags_lib.memory import LiquidMemory

    items = [_fact_item(f, i) for i, f in enumerate(facts)]
    memory = LiquidMemory(embedder=reward_embedder(embedder))
    ids = memory.observe_many(items)
    by_text = {norm_text(it["text"]): i for it, i in zip(items, ids, strict=True)}
    by_key = {it["key"]: i for it, i in zip(items, ids, strict=True)}
    _MEMORY_CACHE[key] = (memory, by_text, by_key)
    if len(_MEMORY_CACHE) > MEMORY_CACHE_SIZE:
        _MEMORY_CACHE.popitem(last=False)
    return _MEMORY_CACHE[key]


def query_hits(text: str, gold: dict, k: int = 5, max_queries: int = 4,
               embedder: str = "hashing") -> list[bool] | None:
    """For each of the completion's first `max_queries` recall queries: does it retrieve the
    gold fact in the top `k`? A query that repeats an earlier one of the block (same tokens)
    counts as a miss: it reads nothing new. None for rows without memory facts (see
    `recall_reward`).

    >>> gold = {"memory_facts": ["The purple glarb eats stones.", "The red fox sleeps."],
    ...         "gold_node_text": "The purple glarb eats stones."}
    >>> query_hits("<recall>\\nquery: glarb food\\nquery: Glarb food!\\nquery: fox\\n</recall>",
    ...            gold, k=1)
    [True, False, False]
    """
    facts, target = gold.get("memory_facts"), gold.get("gold_node_text")
    if not facts or not (target or gold.get("gold_key")):
        return None
    memory, by_text, by_key = memory_for(facts, embedder)
    gold_id = by_key.get(gold.get("gold_key")) if gold.get("gold_key") else None
    if gold_id is None and target:
        gold_id = by_text.get(norm_text(target))
    out, seen = [], set()
    for query in query_texts(text, distinct=False)[0][:max_queries]:
        norm = norm_text(query)
        out.append(norm not in seen and any(
            hit.node_id == gold_id or (target and norm_text(hit.text) == norm_text(target))
            for hit in memory.recall(query, k=k, learn=False)))
        seen.add(norm)
    return out


def _recall_hit(text: str, gold: dict, k: int, max_queries: int, embedder: str) -> float | None:
    hits = query_hits(text, gold, k, max_queries, embedder)
    return None if hits is None else float(any(hits))


def recall_reward(completions: list, gold: list | None = None, k: int = 5, max_queries: int = 4,
                  embedder: str = "hashing", **kwargs) -> list[float | None]:
    """1.0 if any of the completion's first `max_queries` recall queries retrieves the gold
    fact in the top `k` of a `LiquidMemory` holding `gold["memory_facts"]`, else 0.0; None for
    rows without memory facts. `embedder`: "hashing" (fast, lexical) or "embedded" (MiniLM).

    >>> gold = {"memory_facts": ["The purple glarb eats stones on rainy turns.",
    ...                          "The red fox sleeps at noon.", "Kashtiro lies by the sea."],
    ...         "gold_node_text": "The purple glarb eats stones on rainy turns."}
    >>> recall_reward(["<recall>\\nquery: what does the glarb eat when rainy\\n</recall>",
    ...                "<recall>\\nquery: where is the sea\\n</recall>", "no block"],
    ...               gold=[gold] * 3, k=1)
    [1.0, 0.0, 0.0]
    """
    golds = batch_column(gold, len(completions))
    return [_recall_hit(completion_text(c), gold_of(g), k, max_queries, embedder)
            for c, g in zip(completions, golds, strict=True)]


def recall_precision_reward(completions: list, gold: list | None = None, k: int = 5,
                            max_queries: int = 4, embedder: str = "hashing",
                            **kwargs) -> list[float | None]:
    """The share of the completion's first `max_queries` recall queries that retrieve the gold
    fact in the top `k` (0.0 when it has none); None for rows without memory facts.

    `recall_reward` pays a block as soon as one query hits, so a block whose second query
    misses (it names the creature but not the weather, say) scores like a perfect one although
    the miss still costs a memory read and brings wrong lines into the answer's context. This
    term tells such blocks apart, which is most of the reward spread GRPO gets once the SFT
    model already hits with some query on nearly every row. A query repeated in the block
    counts as a miss (`query_hits`): otherwise repeating the one good query would pay like a
    second good one (GRPO found that).

    >>> gold = {"memory_facts": ["On rainy turns, the purple glarb eats only the stone.",
    ...                          "On sunny turns, the purple glarb eats only the copper."],
    ...         "gold_node_text": "On rainy turns, the purple glarb eats only the stone."}
    >>> recall_precision_reward(["<recall>\\nquery: purple glarb rainy\\n</recall>",
    ...                          "<recall>\\nquery: purple glarb rainy\\nquery: sunny\\n</recall>",
    ...                          "<recall>\\nquery: glarb rainy\\nquery: glarb rainy\\n</recall>",
    ...                          "no block"], gold=[gold] * 4, k=1)
    [1.0, 0.5, 0.5, 0.0]
    """
    golds = batch_column(gold, len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        hits = query_hits(completion_text(c), gold_of(g), k, max_queries, embedder)
        out.append(None if hits is None else sum(hits) / len(hits) if hits else 0.0)
    return out


def ask_f1_reward(completions: list, gold: list | None = None, **kwargs) -> list[float | None]:
    """Soft F1 of the completion's recall queries against a gold annotation's
    (`gold["queries"]`): each query is matched to its most similar query on the other side
    (token-set Dice, `_overlap`); precision is the mean over the completion's queries, recall
    the mean over the gold ones. 0.0 without a `<recall>` block or query; None for rows
    without gold queries. The imitation objective the ask model's outcome rewards
    (`recall_reward`, `recall_precision_reward`) are compared with (notebook 11): it pays
    for saying what the annotator said, not for finding the rule.

    >>> g = {"queries": ["what the glarb eats when it is rainy"]}
    >>> [round(x, 3) for x in ask_f1_reward(
    ...     ["<recall>\\nquery: what the glarb eats when it is rainy\\n</recall>",
    ...      "<recall>\\nquery: glarb rainy\\nquery: what the glarb eats when rainy\\n</recall>",
    ...      "<recall>\\n</recall>", "no block"], gold=[g] * 4)]
    [1.0, 0.725, 0.0, 0.0]
    """
    golds = batch_column(gold, len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        want = [q for q in gold_of(g).get("queries") or [] if isinstance(q, str)]
        if not want:
            out.append(None)
            continue
        got, _ = query_texts(completion_text(c), distinct=False)  # a repeat counts again
        if not got:
            out.append(0.0)
            continue
        precision = sum(max(_overlap(q, w) for w in want) for q in got) / len(got)
        recall = sum(max(_overlap(w, q) for q in got) for w in want) / len(want)
        out.append(0.0 if precision + recall == 0 else
                   2 * precision * recall / (precision + recall))
    return out


# ----- engram ------------------------------------------------------------------------------

SWAP_CREDIT = 0.0  # credit for add <-> update swapped (was 0.5): the wrong op earns nothing


def _pair_credit(pred: tuple[str, str], gold: tuple[str, str], min_overlap: float,
                 swap_credit: float = SWAP_CREDIT) -> float:
    sim = _overlap(pred[1], gold[1])
    if sim < min_overlap:
        return 0.0
    if pred[0] == gold[0]:
        return sim
    return swap_credit * sim if {pred[0], gold[0]} == {"add", "update"} else 0.0


def ops_f1(pred: list[tuple[str, str]], gold: list[tuple[str, str]],
           min_overlap: float = 0.5, swap_credit: float = SWAP_CREDIT) -> float:
    """Soft F1 of predicted vs gold (op, text) pairs, greedily matched one to one.

    A pair's credit is the token overlap of the texts (0 below `min_overlap`), times
    `swap_credit` when add and update are swapped (right fact, wrong call on superseding; 0 by
    default: a reward must not pay for the wrong op), 0 for other op mismatches. Both empty:
    1.0 (correctly storing nothing).

    >>> ops_f1([("add", "Glarbs eat stones")], [("update", "glarbs eat stones.")])
    0.0
    >>> ops_f1([("add", "Glarbs eat stones")], [("update", "glarbs eat stones.")], swap_credit=0.5)
    0.5
    """
    if not pred and not gold:
        return 1.0
    pairs = sorted(((_pair_credit(p, g, min_overlap, swap_credit), i, j)
                    for i, p in enumerate(pred)
                    for j, g in enumerate(gold)), reverse=True)
    used_p, used_g, total = set(), set(), 0.0
    for credit, i, j in pairs:
        if credit > 0 and i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            total += credit
    if total == 0:
        return 0.0
    precision, recall = total / len(pred), total / len(gold)
    return 2 * precision * recall / (precision + recall)


def engram_reward(completions: list, gold: list | None = None, min_overlap: float = 0.5,
                  swap_credit: float = SWAP_CREDIT, **kwargs) -> list[float | None]:
    """Soft F1 (see `ops_f1`) of the completion's engram ops against `gold["ops"]`; 0.0 when no
    `<engram>` block is found, None for rows without gold ops. An add where the gold updates
    (or the reverse) earns `swap_credit` x overlap (0 by default).

    >>> g = {"ops": "<engram>\\nupdate semantic 0.90: On rainy turns the glarb eats stones.\\n</engram>"}
    >>> engram_reward(["<engram>\\nupdate semantic 0.8: on rainy turns, the glarb eats stones\\n</engram>",
    ...                "<engram>\\nadd semantic 0.8: On rainy turns the glarb eats stones.\\n</engram>",
    ...                "<engram>\\n</engram>", "nothing"], gold=[g] * 4)
    [1.0, 0.0, 0.0, 0.0]
    """
    golds = batch_column(gold, len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        g = gold_of(g)
        if "ops" not in g:
            out.append(None)
            continue
        result = parse_actions(completion_text(c), kind="engram")
        out.append(ops_f1(engram_ops(result.actions), gold_ops(g["ops"]), min_overlap,
                          swap_credit) if result.blocks else 0.0)
    return out


# ----- budget and guardrails ---------------------------------------------------------------


def budget_penalty(completions: list, max_queries: int = 3, max_ops: int = 4,
                   cost: float = 0.25, floor: float = -1.0, **kwargs) -> list[float]:
    """The graph-regularisation term of the objective (J = reward - lambda * recalls -
    mu * engrams): 0.0 within budget, `-cost` per recall action over `max_queries` and per
    engram op over `max_ops`, never below `floor`.

    >>> many = "<recall>\\n" + "".join(f"query: q{i}\\n" for i in range(5)) + "</recall>"
    >>> budget_penalty(["<recall>\\nquery: a\\n</recall>", many])
    [0.0, -0.5]
    """
    out = []
    for c in completions:
        actions = parse_actions(completion_text(c), kind="any").actions
        n_recall = sum(isinstance(a, (RecallQuery, Connect)) for a in actions)
        n_engram = len(actions) - n_recall
        over = max(0, n_recall - max_queries) + max(0, n_engram - max_ops)
        out.append(max(floor, -cost * over) if over else 0.0)
    return out


def _guardrail_checks(text: str, max_chars: int, min_ascii: float) -> list[bool]:
    if not text.strip():
        return [False]
    printable = sum(32 <= ord(ch) < 127 or ch in "\n\t\r" for ch in text)
    lines = [ln.strip().lower() for ln in text.splitlines() if ln.strip()]
    return [printable / len(text) >= min_ascii, len(lines) == len(set(lines)),
            len(text) <= max_chars]


def guardrail_reward(completions: list, max_chars: int = 600, min_ascii: float = 0.98,
                     **kwargs) -> list[float]:
    """Share of three checks passed: mostly printable ASCII (no byte garbage), no repeated
    line (a sign of degenerate loops), at most `max_chars` characters; 0.0 for empty text.

    >>> guardrail_reward(["<recall>\\nquery: a\\n</recall>", "x\\nx\\n", "\\u00e9\\u00e9\\u00e9"])
    [1.0, 0.6666666666666666, 0.6666666666666666]
    """
    return [sum(checks) / len(checks) for checks in
            (_guardrail_checks(completion_text(c), max_chars, min_ascii) for c in completions)]


# ----- answer ------------------------------------------------------------------------------

_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _option_index(choice: str, options: list[str]) -> int | None:
    label = choice.strip().rstrip(").:").strip().upper()
    if len(label) == 1 and label in _LABELS[: len(options) or len(_LABELS)]:
        return _LABELS.index(label)
    norm = [norm_text(o) for o in options]
    return norm.index(norm_text(choice)) if norm_text(choice) in norm else None


def answer_correct(choice: str | None, gold: dict) -> bool:
    """Whether a chosen option (label like 'B' or option text) is `gold["answer"]`."""
    if choice is None:
        return False
    options = [str(o) for o in gold.get("options") or []]
    want = str(gold.get("answer", ""))
    got_i, want_i = _option_index(choice, options), _option_index(want, options)
    if got_i is not None and want_i is not None:
        return got_i == want_i
    return norm_text(choice) == norm_text(want) != ""


def answer_reward(completions: list, gold: list | None = None, **kwargs) -> list[float | None]:
    """1.0 if the option in `<answer>...</answer>` equals `gold["answer"]` (by label or by
    text), else 0.0; None for rows without an answer in gold.

    >>> g = {"answer": "B", "options": ["eat the stone", "wait a turn"]}
    >>> answer_reward(["<answer>B</answer>", "<answer>wait a turn</answer>", "<answer>A</answer>"],
    ...               gold=[g] * 3)
    [1.0, 1.0, 0.0]
    """
    golds = batch_column(gold, len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        g = gold_of(g)
        if "answer" not in g:
            out.append(None)
            continue
        out.append(float(answer_correct(parse_answer(completion_text(c))[0], g)))
    return out


# ----- registry ----------------------------------------------------------------------------

REWARDS: dict[str, Reward] = {
    "format_reward": format_reward,
    "recall_reward": recall_reward,
    "recall_precision_reward": recall_precision_reward,
    "ask_f1_reward": ask_f1_reward,
    "engram_reward": engram_reward,
    "budget_penalty": budget_penalty,
    "guardrail_reward": guardrail_reward,
    "answer_reward": answer_reward,
}


def _register_outcome() -> None:
    """The write model's outcome reward lives in `objectives.outcome` (it imports this module)."""
    from mags_lib.objectives.outcome import write_outcome_reward

    REWARDS["write_outcome_reward"] = write_outcome_reward


_register_outcome()


def build_rewards(names: list[str], params: dict[str, dict] | None = None) -> list[Reward]:
    """Reward functions by name, with keyword parameters bound from `params[name]`, each
    guarded (`GuardedReward`).

    >>> [f.__name__ for f in build_rewards(["format_reward"], {})]
    ['format_reward']
    """
    unknown = [n for n in names if n not in REWARDS]
    if unknown:
        from mags_lib.errors import MagsError

        raise MagsError(f"unknown reward function(s): {', '.join(unknown)}",
                        f"pick from {', '.join(sorted(REWARDS))}")
    params = params or {}
    return [GuardedReward(n, REWARDS[n], **params.get(n, {})) for n in names]
