"""How much the answer model's choice follows the options' order: notebook 01's answer rows asked
again with the options rotated in the question.

    rows, _ = load_jsonl(SYNTH_DATA_DIR / "answer" / "val.jsonl", task="answer")
    probe = order_probe(llm, rows)  # every completion-format row, every rotation, scored
    probe.summary    # accuracy by the right item's place (first / middle / last named), by the
                     # memory a row shows (gold / stale / none), order-consistent rows, how often
                     # a row with no rule line gets the last-named option, the debiased accuracy
    probe.records    # one per (row, rotation): the right item's place, the choice, the scores

The loop's decisions showed the bias (docs/journal.md, 2026-11-27 (day)): the oracle was wrong on
37 of 99 decisions whose right item came first and on 2 of 101 where it came later. The probe
measures it without playing: each row's memory lines stay as they were, only the options' places
in its question move (`option_order.rotations`), so an order-blind model makes the same choice in
every rotation and is as accurate at every place. Choices are read off `llm.score` (the option
whose `<answer>item</answer>` is likeliest), which llama.cpp and transformers both give, so the
probe runs on a GPU's transformers checkpoint and on a CPU's GGUF alike; the loop's greedy
decision decodes under a grammar instead, which picks the same option unless two options share
their first token and the likelier first token leads to the less likely option.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mags_lib.errors import MagsError

PLACES = ("first", "middle", "last")


@dataclass
class OrderProbe:
    """The probe's records and their summary (see the module docstring)."""

    records: list[dict[str, Any]]
    summary: dict[str, Any]
    debiased: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "records": self.records, "debiased": self.debiased}


def row_parts(row: dict[str, Any]) -> tuple[list[str], str, str] | None:
    """(memory lines, question, prompt format) of an answer row, rebuilt from its prompt; None
    when the prompt is not exactly what `completion_prompt` / `chat_messages` make of them."""
    from mags_lib.agents.prompt import ANSWER_STEM, chat_messages, completion_prompt

    gold = row.get("gold") or {}
    question, fmt = gold.get("observation"), gold.get("prompt_format")
    messages = row.get("prompt") or []
    user = next((m.get("content", "") for m in messages if m.get("role") == "user"), None)
    if not question or user is None:
        return None
    if fmt == "completion":
        tail = f"{question}\n{ANSWER_STEM}"
        head = user[: -len(tail)] if user.endswith(tail) else None
        if head is None or (head and not head.endswith("\n")):
            return None
        lines = head[:-1].split("\n") if head else []
        return (lines, question, fmt) if completion_prompt(lines, question) == user else None
    if fmt == "chat":
        notes = user.split("Notes:\n", 1)[-1].split("\n\n" + question, 1)[0]
        lines = [] if notes == "(no notes)" else notes.split("\n")
        return (lines, question, fmt) if chat_messages(lines, question) == messages else None
    return None


def place(question: str, options: tuple[str, ...], item: str) -> str | None:
    """Where `item` stands among the options named in `question`: first, middle or last."""
    from mags_lib.agents.option_order import text_order

    order = text_order(question, options)
    if order is None or item not in order:
        return None
    i = order.index(item)
    return "first" if i == 0 else "last" if i == len(order) - 1 else "middle"


def order_probe(llm: Any, rows: list[dict[str, Any]]) -> OrderProbe:
    """Score every option of every completion-format row of `rows` as `llm`'s answer
    (`<answer>item</answer>`, `llm.score`) in every rotation of the options' places: the
    option scored best in a rotation is that rotation's choice (the greedy choice, read off the
    scores), the best mean over the rotations the row's order-debiased choice (the loop's
    `debias_order`). Scoring works on llama.cpp and transformers alike."""
    from mags_lib.agents.option_order import rotation_scores, rotations
    from mags_lib.agents.prompt import ANSWER_CLOSE, ANSWER_OPEN, completion_prompt

    records: list[dict[str, Any]] = []
    debiased: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    t0 = time.perf_counter()
    for n, row in enumerate(rows):
        parts = row_parts(row)
        gold = row.get("gold") or {}
        options = tuple(gold.get("options") or ())
        why = ("prompt not rebuilt" if parts is None else "chat format" if parts[2] != "completion"
               else "fewer than 2 options" if len(options) < 2
               else "answer not an option" if gold.get("answer") not in options else None)
        asked = rotations(parts[1], options) if why is None else []
        if why is None and len(asked) < 2:
            why = "options not each named once"
        if why is not None:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        lines = parts[0]
        totals = [0.0] * len(options)
        scored = rotation_scores(llm, [completion_prompt(lines, q) + ANSWER_OPEN for q in asked],
                                 [o + ANSWER_CLOSE for o in options])
        for k, (q, scores) in enumerate(zip(asked, scored, strict=True)):
            totals = [t + x for t, x in zip(totals, scores, strict=True)]
            choice = options[max(range(len(options)), key=lambda i: (scores[i], -i))]
            records.append({"row": n, "rotation": k, "memory": gold.get("memory"),
                            "n_options": len(options), "answer": gold["answer"],
                            "place": place(q, options, gold["answer"]),
                            "chosen_place": place(q, options, choice), "choice": choice,
                            "correct": choice == gold["answer"],
                            "scores": [round(x, 4) for x in scores]})
        best = options[max(range(len(options)), key=lambda i: (totals[i], -i))]
        debiased.append({"row": n, "memory": gold.get("memory"), "answer": gold["answer"],
                         "choice": best, "correct": best == gold["answer"]})
    if not records:
        raise MagsError(f"the order probe found no answer row it could rotate ({skipped})",
                        "pass notebook 01's answer rows (data/synth/answer/*.jsonl), which "
                        "hold completion-format rows")
    summary = summarize(records, debiased)
    summary.update(skipped_rows=skipped, seconds=round(time.perf_counter() - t0, 1))
    return OrderProbe(records=records, summary=summary, debiased=debiased)


def _share(hits: list[bool]) -> dict[str, Any]:
    return {"n": len(hits), "accuracy": round(sum(hits) / len(hits), 4) if hits else None}


def summarize(records: list[dict[str, Any]], debiased: list[dict[str, Any]] | None = None
              ) -> dict[str, Any]:
    """Accuracy overall, by the right item's place, by memory x place; order-consistent rows;
    the share of no-rule rows answered with the last-named option (and its chance level).

    >>> recs = [{"row": 0, "memory": "gold", "place": "first", "choice": "b", "correct": False,
    ...          "chosen_place": "last", "n_options": 2},
    ...         {"row": 0, "memory": "gold", "place": "last", "choice": "a", "correct": True,
    ...          "chosen_place": "last", "n_options": 2}]
    >>> s = summarize(recs)
    >>> s["by_place"]["first"]["accuracy"], s["by_place"]["last"]["accuracy"], s["consistent"]
    (0.0, 1.0, 0.0)
    """
    by_row: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        by_row.setdefault(r["row"], []).append(r)
    memories = sorted({r["memory"] for r in records if r.get("memory")})
    none = [r for r in records if r.get("memory") == "none"]
    out: dict[str, Any] = {
        "rows": len(by_row), "decisions": len(records),
        "accuracy": _share([r["correct"] for r in records])["accuracy"],
        "by_place": {p: _share([r["correct"] for r in records if r["place"] == p])
                     for p in PLACES},
        "by_memory": {m: {"all": _share([r["correct"] for r in records if r["memory"] == m]),
                          **{p: _share([r["correct"] for r in records
                                        if r["memory"] == m and r["place"] == p])
                             for p in PLACES}} for m in memories},
        "consistent": round(sum(len({r["choice"] for r in rs}) == 1 for rs in by_row.values())
                            / len(by_row), 4),
        "no_rule_last_named": round(sum(r["chosen_place"] == "last" for r in none) / len(none), 4)
        if none else None,
        "no_rule_last_named_chance": round(sum(1 / r["n_options"] for r in none) / len(none), 4)
        if none else None,
    }
    out["first_minus_last"] = (
        round(out["by_place"]["first"]["accuracy"] - out["by_place"]["last"]["accuracy"], 4)
        if out["by_place"]["first"]["n"] and out["by_place"]["last"]["n"] else None)
    if debiased:
        out["debiased"] = {"all": _share([d["correct"] for d in debiased]),
                           **{m: _share([d["correct"] for d in debiased if d["memory"] == m])
                              for m in memories}}
    return out
