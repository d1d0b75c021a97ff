"""The tasks side by side: one row per agent, one column group per task, from notebook 13's
result (the test splits, scored once).

    side_by_side_markdown(metrics)   # metrics: results/13_test_splits/metrics.json

The game's test bank gives accuracy and after-drift accuracy; the persona test set the
current-fact accuracy, the stale-answer rate and F1; LoCoMo's test conversations F1 and
evidence recall@10. Each main score carries its 95% interval where the run saved one (by seed
for the game, by bootstrap over conversations for the conversations). An agent not run on a
task shows "–". Upper bounds are labelled in the agent cell, so no row reads as MAGS.
"""

from __future__ import annotations

from typing import Any

from mags_lib.evaluation.headline import label

ORDER = ("bare", "full_context", "static_rag", "mem0", "mags_prompted", "mags",
         "mags_episodic", "gold_writes", "mags_scripted", "oracle")
"""Baselines first, then MAGS, then the upper bounds; agents not named here go before these."""

HEADER = ["agent", "what it is", "game: accuracy (95% CI)", "after drift",
          "persona: current (95% CI)", "stale", "F1", "LoCoMo: F1 (95% CI)", "evidence@10"]


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(value: Any, interval: Any) -> str:
    lo, hi = interval if isinstance(interval, (list, tuple)) and len(interval) == 2 else (None,
                                                                                           None)
    if value is None or lo is None or hi is None:
        return _f(value)
    return f"{_f(value)} ({lo:.2f}–{hi:.2f})"


def side_by_side_rows(metrics: dict[str, Any]) -> list[list[str]]:
    """The table's rows (cells as text) from notebook 13's metrics."""
    game = {r["agent"]: r for r in (metrics.get("game") or {}).get("headline") or []}
    persona = (((metrics.get("persona") or {}).get("qa") or {}).get("summary")) or {}
    locomo = (((metrics.get("locomo") or {}).get("qa") or {}).get("summary")) or {}
    agents = list(dict.fromkeys([*game, *persona, *locomo]))
    agents.sort(key=lambda a: ORDER.index(a) + 1 if a in ORDER else 0)
    rows = []
    for agent in agents:
        g, p, lo = game.get(agent) or {}, persona.get(agent) or {}, locomo.get(agent) or {}
        rates, rate_ci = p.get("persona") or {}, p.get("persona_ci95") or {}
        rows.append([
            f"`{agent}`", label(agent),
            _ci(g.get("accuracy"), [g.get("ci_low"), g.get("ci_high")]),
            _f(g.get("after_drift")),
            _ci(rates.get("current_accuracy"), rate_ci.get("current_accuracy")),
            _f(rates.get("stale_rate")), _f(p.get("f1")),
            _ci(lo.get("f1"), lo.get("f1_ci95")), _f(lo.get("recall@10")),
        ])
    return rows


def side_by_side_markdown(metrics: dict[str, Any]) -> str:
    """`side_by_side_rows` as a Markdown table ('' where the result holds no task)."""
    rows = side_by_side_rows(metrics)
    if not rows:
        return ""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
