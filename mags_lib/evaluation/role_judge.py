"""Judge a trained write or ask model on held-out rows, prompted and decoded exactly as in play.

    from mags_lib.evaluation.role_judge import judge_write, judge_ask
    report = judge_write(write_llm, rows)        # op confusion, F1, facts kept exact, samples
    report = judge_ask(ask_llm, rows, k=3)       # hit@k of the queries on the row's memory
    judged = judge_roles(roles, rows)            # both, as notebooks 12 and 13 report them
    print(judged_text(judged))

The rows are training-format rows (`objectives.data`) whose prompts are the loop's own messages
(`role_prompts.play_write_messages` / `play_ask_messages`: notebook 12 builds them from
conversations of a split that never enters a dataset). Decoding is the loop's: greedy, the
write model stopped at `</engram>` without a grammar, the ask model under the recall grammar
(`agents.loop.LoopConfig` defaults). A soft score can hide a model that does not work, so the
write report carries the op confusion matrix (gold op -> chosen op) beside the mean F1, and
both reports keep raw outputs to read.
"""

from __future__ import annotations

import time
from statistics import mean
from typing import Any

SAMPLES = 12  # raw outputs kept per report


def _generate(llm: Any, rows: list[dict], *, max_tokens: int, stop: list[str] | None,
              grammar: Any, close: str) -> tuple[list[str], list[float]]:
    from mags_lib.agents.loop import closed

    texts, seconds = [], []
    for row in rows:
        t0 = time.perf_counter()
        out = llm.chat(row["prompt"], max_tokens=max_tokens, temperature=0.0, seed=0, stop=stop,
                       grammar=grammar)
        seconds.append(out.generation_seconds(time.perf_counter() - t0))
        texts.append(closed(out, close))
    return texts, seconds


def _samples(rows: list[dict], texts: list[str], key: str) -> list[dict[str, Any]]:
    step = max(1, len(rows) // SAMPLES)
    return [{"observation": rows[i]["gold"].get("observation"), "gold": rows[i]["gold"].get(key),
             "output": texts[i]} for i in range(0, len(rows), step)][:SAMPLES]


def judge_write(llm: Any, rows: list[dict], max_tokens: int = 96, per_row: bool = False
                ) -> dict[str, Any]:
    """The write model's outputs on `rows`, scored: op accuracy and confusion, facts dropped,
    fact text exact, mean engram F1, parse rate, seconds a row, and raw samples. `per_row`:
    also "ops", each row's gold and chosen op (for intervals and paired comparisons)."""
    from mags_lib.actions import parse_actions
    from mags_lib.agents.loop import ENGRAM_CLOSE
    from mags_lib.objectives.completions import chosen_op
    from mags_lib.objectives.rewards import engram_reward
    from mags_lib.objectives.write_metrics import fact_exact, op_confusion

    texts, seconds = _generate(llm, rows, max_tokens=max_tokens, stop=[ENGRAM_CLOSE],
                               grammar=None, close=ENGRAM_CLOSE)
    golds = [r["gold"] for r in rows]
    ops = op_confusion(texts, golds)
    f1 = [s for s in engram_reward(texts, gold=golds) if s is not None]
    return {"n": len(rows), "op_accuracy": ops["accuracy"], "op_balanced": ops["balanced"],
            "op_confusion": ops["confusion"], "dropped": ops["dropped"],
            "fact_exact": fact_exact(texts, golds)["exact"], "f1": mean(f1) if f1 else None,
            "parsed": mean(float(parse_actions(t, kind="engram").complete) for t in texts)
            if texts else None,
            "seconds_p50": sorted(seconds)[len(seconds) // 2] if seconds else None,
            "samples": _samples(rows, texts, "ops"),
            **({"ops": [{"gold": g.get("op"), "chosen": chosen_op(t)}
                        for g, t in zip(golds, texts, strict=True)]} if per_row else {})}


def judge_ask(llm: Any, rows: list[dict], k: int = 3, max_tokens: int = 96) -> dict[str, Any]:
    """The ask model's outputs on `rows`: the share whose queries find a gold fact in the top
    `k` of a memory holding the row's facts (`recall_reward`, hashing embedder), per kind."""
    from mags_lib.actions import recall_grammar
    from mags_lib.objectives.rewards import recall_reward

    texts, seconds = _generate(llm, rows, max_tokens=max_tokens, stop=None,
                               grammar=recall_grammar(), close="</recall>")
    hits = recall_reward(texts, gold=[r["gold"] for r in rows], k=k)
    by_kind: dict[str, list[float]] = {}
    for r, h in zip(rows, hits, strict=True):
        if h is not None:
            by_kind.setdefault(str(r["gold"].get("kind") or r["gold"].get("source")), []).append(
                float(h == 1.0))
    scored = [float(h == 1.0) for h in hits if h is not None]
    return {"n": len(rows), "k": k, "hit": mean(scored) if scored else None,
            "by_kind": {kind: mean(v) for kind, v in sorted(by_kind.items())},
            "seconds_p50": sorted(seconds)[len(seconds) // 2] if seconds else None,
            "samples": _samples(rows, texts, "gold_node_text")}


def judge_roles(roles: dict[str, Any], rows: dict[str, list[dict]], k: int = 3
                ) -> dict[str, Any]:
    """The write and ask models of `roles` ({"write": llm, "ask": llm}, as
    `conversation_study.role_models` loads them) judged on `rows` ({"write": rows, "ask":
    rows}); {} where `roles` is empty (no trained models)."""
    if not roles:
        return {}
    return {"write": judge_write(roles["write"], rows["write"]),
            "ask": judge_ask(roles["ask"], rows["ask"], k=k)}


def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def judged_text(judged: dict[str, Any], samples: bool = True) -> str:
    """`judge_roles`'s reports as text: the write model's op accuracy, its confusion matrix
    (gold -> chosen), facts dropped and F1, the ask model's hit@k per kind, and the raw
    outputs kept."""
    import json

    lines = []
    w, a = judged.get("write"), judged.get("ask")
    if w:
        lines += [f"write: {w['n']} turns, op accuracy {_f(w['op_accuracy'])}, facts dropped "
                  f"{_f(w['dropped'])}, fact text exact {_f(w['fact_exact'])}, F1 {_f(w['f1'])}",
                  "op confusion (gold -> chosen): " + json.dumps(w["op_confusion"])]
    if a:
        lines.append(f"ask: {a['n']} questions, hit@{a.get('k', 3)} {_f(a['hit'])} "
                     + json.dumps({kind: round(v, 3) for kind, v in a.get("by_kind", {}).items()}))
    if samples:
        for s in (w or {}).get("samples", []) + (a or {}).get("samples", []):
            lines += [f"- {s['observation']}", f"  gold: {s['gold']}",
                      "  out:  " + s["output"].replace("\n", " | ")]
    return "\n".join(lines) or "no trained write or ask model judged"
