"""The conversation issue's targets, read off a conversation study's result (notebook 13).

    targets = conversation_targets(result, agents=("mags", "mags_episodic"))
    targets["mags"]["locomo_evidence@10"]   # {"value": 0.61, "target": ">= 0.75", "met": False}

Each target is judged for each named MAGS agent (never for an upper bound): LoCoMo evidence
turn-recall@10 at least 0.75, LoCoMo QA F1 above `static_rag` and above `full_context`;
persona current-fact accuracy at least 0.85, stale answers at most 0.05, F1 above the
Mem0-style `mem0`; and, from the judged write model alone, op accuracy at least 0.90 on the
persona turns. A target whose numbers are missing (an agent not run, LoCoMo absent) is
`met: None`, with `value: None`.
"""

from __future__ import annotations

from typing import Any

LOCOMO_RECALL10 = 0.75
PERSONA_CURRENT = 0.85
PERSONA_STALE = 0.05
WRITE_OP = 0.90


def _qa(result: dict[str, Any], source: str) -> dict[str, Any]:
    return (((result.get(source) or {}).get("qa") or {}).get("summary")) or {}


def _entry(value: float | None, target: str, met: bool | None) -> dict[str, Any]:
    return {"value": None if value is None else round(value, 4), "target": target,
            "met": None if value is None else met}


def _above(qa: dict[str, Any], agent: str, other: str, key: str) -> dict[str, Any]:
    """`agent`'s `key` minus `other`'s, met when > 0."""
    a, b = (qa.get(agent) or {}).get(key), (qa.get(other) or {}).get(key)
    diff = None if a is None or b is None else a - b
    return _entry(diff, f"{key} above {other} (> 0)", None if diff is None else diff > 0)


def conversation_targets(result: dict[str, Any], agents: tuple[str, ...] = ("mags",),
                         judged: dict[str, Any] | None = None) -> dict[str, Any]:
    """{agent: {target name: {value, target, met}}} plus "write_op_accuracy" from `judged`
    (the write model alone on the persona turns, `role_judge.judge_write`'s result)."""
    locomo, persona = _qa(result, "locomo"), _qa(result, "persona")
    out: dict[str, Any] = {}
    for agent in agents:
        lo = locomo.get(agent) or {}
        pe = (persona.get(agent) or {}).get("persona") or {}
        r10, cur, stale = lo.get("recall@10"), pe.get("current_accuracy"), pe.get("stale_rate")
        out[agent] = {
            "locomo_evidence@10": _entry(r10, f">= {LOCOMO_RECALL10}",
                                         None if r10 is None else r10 >= LOCOMO_RECALL10),
            "locomo_f1_vs_static_rag": _above(locomo, agent, "static_rag", "f1"),
            "locomo_f1_vs_full_context": _above(locomo, agent, "full_context", "f1"),
            "persona_current": _entry(cur, f">= {PERSONA_CURRENT}",
                                      None if cur is None else cur >= PERSONA_CURRENT),
            "persona_stale": _entry(stale, f"<= {PERSONA_STALE}",
                                    None if stale is None else stale <= PERSONA_STALE),
            "persona_f1_vs_mem0": _above(persona, agent, "mem0", "f1"),
        }
    op = ((judged or {}).get("write") or {}).get("op_accuracy")
    out["write_op_accuracy"] = _entry(op, f">= {WRITE_OP}", None if op is None else op >= WRITE_OP)
    return out


def targets_markdown(targets: dict[str, Any]) -> str:
    """One row per (agent, target): value, target, met."""
    def f(x: Any) -> str:
        return "–" if x is None else (f"{x:+.3f}" if isinstance(x, float) and x < 0 else
                                      f"{x:.3f}" if isinstance(x, float) else str(x))

    rows = ["| agent | target | value | wanted | met |", "|---|---|---|---|---|"]
    for agent, entries in targets.items():
        if "value" in entries:  # the write model's row
            rows.append(f"| write model | {agent} | {f(entries['value'])} | {entries['target']} "
                        f"| {f(entries['met'])} |")
            continue
        for name, e in entries.items():
            rows.append(f"| `{agent}` | {name} | {f(e['value'])} | {e['target']} | "
                        f"{f(e['met'])} |")
    return "\n".join(rows)
