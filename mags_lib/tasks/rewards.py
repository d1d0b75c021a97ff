"""Reward functions for GRPO (and scores for evaluation): small, pure, registered by name.

Every function has TRL's signature `f(completions, **kwargs) -> list[float | None]`.
`completions` holds strings, or message lists (`[{"role": "assistant", "content": ...}]`) for
conversational datasets; dataset columns (`task`, `gold`, ...) arrive as keyword lists aligned
with `completions`. `None` means "does not apply to this row" (TRL turns it into NaN and leaves
it out of the weighted sum), so a mixed ask/write/answer dataset can share one reward list.
Keyword parameters with defaults (`k`, `max_queries`, ...) are set from a config with
`functools.partial` (see `build_rewards`).

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
import re
from collections import Counter, OrderedDict
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from mags_lib.actions.parser import parse_actions
from mags_lib.actions.types import Connect, EngramAdd, EngramUpdate, Forget, Link, RecallQuery
from mags_lib.embed import tokenize
from mags_lib.tasks.data import TASK_KIND, gold_of

Reward = Callable[..., list]

# ----- shared helpers ----------------------------------------------------------------------


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or the contents of a message list joined.

    >>> completion_text([{"role": "assistant", "content": "hi"}])
    'hi'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, (list, tuple)):
        return "".join(completion_text(m) for m in completion)
    return ""


def _column(kwargs: dict, name: str, n: int, default: Any = None) -> list:
    value = kwargs.get(name)
    return list(value) if isinstance(value, (list, tuple)) and len(value) == n else [default] * n


def _norm(text: str) -> str:
    return " ".join(tokenize(text))


def _overlap(a: str, b: str) -> float:
    """Token-set Dice similarity in [0, 1] of two texts (1.0 for equal normalised texts)."""
    ta, tb = set(tokenize(a)), set(tokenize(b))
    if not ta or not tb:
        return float(ta == tb)
    return 2 * len(ta & tb) / (len(ta) + len(tb))


_ANSWER = re.compile(r"<answer>(.*?)(</answer>|$)", re.DOTALL | re.IGNORECASE)


def parse_answer(text: str) -> tuple[str | None, bool]:
    """The chosen option in `<answer>...</answer>` and whether the tag was closed.

    >>> parse_answer("<answer> B </answer>")
    ('B', True)
    >>> parse_answer("I think B")
    (None, False)
    """
    m = _ANSWER.search(text)
    if not m or not m[1].strip():
        return None, False
    return m[1].strip(), bool(m[2])


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
    tasks = _column({"task": task}, "task", len(completions))
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
    by_text = {_norm(it["text"]): i for it, i in zip(items, ids, strict=True)}
    by_key = {it["key"]: i for it, i in zip(items, ids, strict=True)}
    _MEMORY_CACHE[key] = (memory, by_text, by_key)
    if len(_MEMORY_CACHE) > MEMORY_CACHE_SIZE:
        _MEMORY_CACHE.popitem(last=False)
    return _MEMORY_CACHE[key]


def recall_queries(text: str) -> list[str]:
    """The retrieval strings of a completion: each query, and each connect's two ends joined.

    >>> recall_queries("<recall>\\nquery: glarb diet\\nconnect: glarb -> rain\\n</recall>")
    ['glarb diet', 'glarb rain']
    """
    out = []
    for a in parse_actions(text, kind="recall").actions:
        if isinstance(a, RecallQuery):
            out.append(a.text)
        elif isinstance(a, Connect):
            out.append(f"{a.a} {a.b}")
    return out


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
        gold_id = by_text.get(_norm(target))
    out, seen = [], set()
    for query in recall_queries(text)[:max_queries]:
        norm = _norm(query)
        out.append(norm not in seen and any(
            hit.node_id == gold_id or (target and _norm(hit.text) == _norm(target))
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
    golds = _column({"gold": gold}, "gold", len(completions))
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
    golds = _column({"gold": gold}, "gold", len(completions))
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
    golds = _column({"gold": gold}, "gold", len(completions))
    out: list[float | None] = []
    for c, g in zip(completions, golds, strict=True):
        want = [q for q in gold_of(g).get("queries") or [] if isinstance(q, str)]
        if not want:
            out.append(None)
            continue
        got = recall_queries(completion_text(c))
        if not got:
            out.append(0.0)
            continue
        precision = sum(max(_overlap(q, w) for w in want) for q in got) / len(got)
        recall = sum(max(_overlap(w, q) for q in got) for w in want) / len(want)
        out.append(0.0 if precision + recall == 0 else
                   2 * precision * recall / (precision + recall))
    return out


# ----- engram ------------------------------------------------------------------------------

_OPS = {EngramAdd: "add", EngramUpdate: "update", Forget: "forget", Link: "link"}


def engram_ops(actions: list) -> list[tuple[str, str]]:
    """(op, text) pairs of engram actions; a link's text is 'A -> B'."""
    out = []
    for a in actions:
        op = _OPS.get(type(a))
        if op == "link":
            out.append((op, f"{a.a} -> {a.b}"))
        elif op:
            out.append((op, a.text))
    return out


WRITE_OPS = ("add", "update", "none")  # the discrete choice of a write: store new, replace, skip


def chosen_op(text: Any) -> str:
    """The op a write output chose: its first add / update, "none" for an empty block, "bad"
    when no complete block parses, "other" for forget / link only.

    >>> chosen_op("<engram>\\nupdate semantic 0.9: X.\\n</engram>"), chosen_op("<engram>\\n</engram>")
    ('update', 'none')
    """
    parsed = parse_actions(completion_text(text), kind="engram")
    if not parsed.complete:
        return "bad"
    ops = [op for op, _ in engram_ops(parsed.actions)]
    if not ops:
        return "none"
    return next((op for op in ops if op in ("add", "update")), "other")


def op_confusion(completions: list, gold: list[dict]) -> dict[str, Any]:
    """The op confusion of write outputs against their rows' gold op (gold op -> chosen op ->
    count; chosen ops also "bad" and "other") and the op accuracy over the rows with a gold op.
    `dropped`: of the rows whose gold stores a fact (add / update), the share where the output
    stores nothing (an empty block, no parsable one, or only forget / link lines). Op accuracy
    counts every error alike, but in play a dropped fact is lost (a changed rule stays stale),
    where an update written as add is superseded by the memory's contradiction detector.

    >>> op_confusion(["<engram>\\n</engram>", "x"], [{"op": "none"}, {"op": "add"}])["accuracy"]
    0.5
    >>> op_confusion(["<engram>\\n</engram>", "x"], [{"op": "none"}, {"op": "add"}])["dropped"]
    1.0
    >>> op_confusion(["<engram>\\n</engram>"] * 4, [{"op": "none"}] * 3 + [{"op": "add"}])["balanced"]
    0.5
    """
    confusion: dict[str, dict[str, int]] = {op: {} for op in WRITE_OPS}
    n = right = 0
    for text, g in zip(completions, gold, strict=True):
        want = (g or {}).get("op")
        if want not in confusion:
            continue
        got = chosen_op(text)
        confusion[want][got] = confusion[want].get(got, 0) + 1
        n += 1
        right += got == want
    per_op = [confusion[op].get(op, 0) / sum(confusion[op].values())
              for op in WRITE_OPS if confusion[op]]
    # balanced: the mean per-op recall, so that writing nothing on rows that are mostly "none"
    # cannot look good (a model that never stores scores 1/3, whatever the mix)
    due = [confusion[op] for op in ("add", "update")]
    n_due = sum(sum(c.values()) for c in due)
    dropped = sum(c.get(got, 0) for c in due for got in ("none", "bad", "other"))
    return {"n": n, "accuracy": right / n if n else None, "confusion": confusion,
            "balanced": sum(per_op) / len(per_op) if per_op else None,
            "dropped": dropped / n_due if n_due else None}


def fact_exact(completions: list, gold: list[dict]) -> dict[str, Any]:
    """Whether a write output stores the gold fact's text exactly (after tokenising: case and
    punctuation ignored), over the rows whose gold stores one (op add or update): the share of
    those rows where the output's first add / update text equals the gold text. Token-overlap
    F1 pays a sentence with the wrong name in a slot almost fully; this does not.

    >>> g = {"op": "add", "ops": "<engram>\\nadd semantic 0.9: On rainy turns, the glarb eats only the stone.\\n</engram>"}
    >>> fact_exact(["<engram>\\nadd semantic 0.5: on rainy turns the glarb eats only the stone\\n</engram>",
    ...             "<engram>\\nadd semantic 0.9: On rainy turns, the stone eats only the stone.\\n</engram>"],
    ...            [g, g])
    {'n': 2, 'exact': 0.5}
    """
    n = right = 0
    for text, g in zip(completions, gold, strict=True):
        want = [t for op, t in gold_ops((g or {}).get("ops")) if op in ("add", "update")]
        if not want:
            continue
        n += 1
        got = [t for op, t in engram_ops(parse_actions(completion_text(text), kind="engram")
                                         .actions) if op in ("add", "update")]
        right += bool(got) and _norm(got[0]) == _norm(want[0])
    return {"n": n, "exact": right / n if n else None}


def gold_ops(ops: Any) -> list[tuple[str, str]]:
    """Gold ops as (op, text) pairs, from canonical engram text or a list of op dicts."""
    if isinstance(ops, str):
        return engram_ops(parse_actions(ops, kind="engram").actions)
    return [(str(o.get("op", "")).lower(), str(o.get("text", ""))) for o in ops or []
            if isinstance(o, dict)]


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
    golds = _column({"gold": gold}, "gold", len(completions))
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
    norm = [_norm(o) for o in options]
    return norm.index(_norm(choice)) if _norm(choice) in norm else None


def answer_correct(choice: str | None, gold: dict) -> bool:
    """Whether a chosen option (label like 'B' or option text) is `gold["answer"]`."""
    if choice is None:
        return False
    options = [str(o) for o in gold.get("options") or []]
    want = str(gold.get("answer", ""))
    got_i, want_i = _option_index(choice, options), _option_index(want, options)
    if got_i is not None and want_i is not None:
        return got_i == want_i
    return _norm(choice) == _norm(want) != ""


def answer_reward(completions: list, gold: list | None = None, **kwargs) -> list[float | None]:
    """1.0 if the option in `<answer>...</answer>` equals `gold["answer"]` (by label or by
    text), else 0.0; None for rows without an answer in gold.

    >>> g = {"answer": "B", "options": ["eat the stone", "wait a turn"]}
    >>> answer_reward(["<answer>B</answer>", "<answer>wait a turn</answer>", "<answer>A</answer>"],
    ...               gold=[g] * 3)
    [1.0, 1.0, 0.0]
    """
    golds = _column({"gold": gold}, "gold", len(completions))
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
    """The write model's outcome reward lives in `tasks.outcome` (it imports this module)."""
    from mags_lib.tasks.outcome import write_outcome_reward

    REWARDS["write_outcome_reward"] = write_outcome_reward


_register_outcome()


REWARD_ISSUES: Counter[str] = Counter()  # rewards set to 0 by `GuardedReward`, by reason


def take_reward_issues() -> dict[str, int]:
    """The rewards set to 0 since the last call, by reason (and the count starts again)."""
    issues = dict(REWARD_ISSUES)
    REWARD_ISSUES.clear()
    return issues


def _reason(name: str, exc: Exception) -> str:
    cause = getattr(exc, "cause", None) or f"{type(exc).__name__}: {exc}"
    return f"{name}: {str(cause).splitlines()[0][:120]}"


class GuardedReward:
    """A registered reward that never stops training: when a batch raises (a row whose gold
    memory cannot be built, a value of the wrong type), each completion is scored alone, and
    one that still raises gets 0.0 with the reason counted in `REWARD_ISSUES` (GRPO logs it
    and keeps it in the stage's metrics). Named like the reward it wraps, as TRL logs it.

    >>> _ = take_reward_issues()
    >>> bad = GuardedReward("write_outcome_reward", REWARDS["write_outcome_reward"])
    >>> bad(["<engram>\\n</engram>"] * 2, gold=[{"memory_before": [{"bogus": 1}],
    ...     "probes": [{"question": "q"}], "op": "none"}, {"op": "none"}])
    [0.0, None]
    >>> take_reward_issues()
    {"write_outcome_reward: KeyError: 'text'": 1}
    """

    def __init__(self, name: str, func: Reward, **params: Any):
        self.__name__ = name
        self.func = partial(func, **params) if params else func

    def __call__(self, completions: list, **kwargs: Any) -> list[float | None]:
        counted = Counter(REWARD_ISSUES)
        try:
            return self.func(completions, **kwargs)
        except Exception:  # noqa: BLE001 - one bad row must not stop training; scored alone below
            REWARD_ISSUES.clear()  # what the failed batch counted is counted again row by row
            REWARD_ISSUES.update(counted)
        n, out = len(completions), []
        for i, completion in enumerate(completions):
            row = {k: [v[i]] if isinstance(v, list) and len(v) == n else v
                   for k, v in kwargs.items()}
            try:
                out.extend(self.func([completion], **row))
            except Exception as exc:  # noqa: BLE001 - counted, and the reward is 0
                REWARD_ISSUES[_reason(self.__name__, exc)] += 1
                out.append(0.0)
        return out


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
