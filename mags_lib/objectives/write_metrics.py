"""How good a batch of write outputs is against its rows' gold: evaluation metrics of the write
model, not rewards (a reward scores one completion for GRPO, see `rewards`; these summarise
many for a judge or a report).

* `op_confusion`: which op (add / update / none) each output chose against the gold op, the op
  accuracy, its per-op balanced mean and the share of due facts dropped (`ops_confusion`: the
  same for ops already chosen, as `evaluation.op_effect` gives them);
* `fact_exact`: whether the stored sentence is the gold sentence (tokens equal).

    >>> gold = [{"op": "add", "ops": "<engram>\\nadd semantic 0.9: Glarbs eat stones.\\n</engram>"}]
    >>> out = ["<engram>\\nadd semantic 0.9: glarbs eat stones\\n</engram>"]
    >>> op_confusion(out, gold)["accuracy"], fact_exact(out, gold)["exact"]
    (1.0, 1.0)
"""

from __future__ import annotations

from typing import Any

from mags_lib.actions.parser import parse_actions
from mags_lib.objectives.completions import (
    WRITE_OPS,
    chosen_op,
    completion_text,
    engram_ops,
    gold_ops,
    norm_text,
)


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
    return ops_confusion([chosen_op(text) for text in completions],
                         [(g or {}).get("op") for g in gold])


def ops_confusion(chosen: list[str], wanted: list[str | None]) -> dict[str, Any]:
    """`op_confusion` of ops already chosen (add / update / none, or anything else, counted as
    such) against gold ops (rows whose gold op is not a write op are left out): the op
    accuracy, its balanced mean, the share of due facts dropped, the confusion.

    >>> ops_confusion(["add", "none", "none"], ["add", "update", "none"])["accuracy"]
    0.6666666666666666
    """
    confusion: dict[str, dict[str, int]] = {op: {} for op in WRITE_OPS}
    n = right = 0
    for got, want in zip(chosen, wanted, strict=True):
        if want not in confusion:
            continue
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
        right += bool(got) and norm_text(got[0]) == norm_text(want[0])
    return {"n": n, "exact": right / n if n else None}
