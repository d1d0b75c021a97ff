"""The headline of notebook 06: every agent on every surface in one table, and the targets.

    rows = headline_rows({"varied": summary_varied, "fixed": summary_fixed})
    targets = closed_loop_targets(summary_varied)

Upper bounds (agents handed the game's ground truth: `mags_scripted`, its ablations and the
oracle) are labelled as such in every row, so a reader never takes them for MAGS.
"""

from __future__ import annotations

from typing import Any

LABELS = {
    "mags": "MAGS (closed loop: trained ask + write models)",
    "mags_prompted": "MAGS, base model prompted (no training)",
    "mags_consolidated": "MAGS, recalled hits consolidated into contexts",
    "mags_working": "MAGS, a recent turn from the working-memory block shown",
    "mags_verbatim": "MAGS without its write model (every information turn stored as it came)",
    "mags_episodic": "MAGS, every turn also kept as said (episodic) and the question recalled",
    "mags_scripted": "upper bound: perfect writer, game structure given",
    "oracle": "upper bound: the rules in force",
    "static_rag": "static RAG (same embedder and hybrid retriever, raw text)",
    "static_rag_bm25": "static RAG, BM25 only",
    "full_context": "full context (recent turns in the window)",
    "bare": "no memory",
    "mem0": "Mem0-style: base model prompted to add / update / delete facts",
    "gold_writes": "upper bound: the gold facts written, same reader",
}


def label(agent: str) -> str:
    if agent.startswith("mags_scripted_"):
        return f"upper bound ablation: {agent.removeprefix('mags_scripted_')}"
    return LABELS.get(agent, agent)


def headline_rows(summaries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (surface, agent): accuracy and after-drift accuracy with 95% intervals,
    per-seed spread, memory quality, loop validity, prompt tokens."""
    rows = []
    for surface, summary in summaries.items():
        for agent, a in summary["agents"].items():
            drift = a.get("after_drift") or {}
            quality = a.get("memory_quality") or {}
            loop = a.get("loop") or {}
            rows.append({
                "surface": surface, "agent": agent, "label": label(agent),
                "accuracy": a["accuracy"], "ci_low": a["ci_low"], "ci_high": a["ci_high"],
                "seed_mean": a["seeds"]["mean"], "seed_std": a["seeds"]["std"],
                "n_seeds": len(a["seeds"].get("per_seed") or {}),
                "after_drift": drift.get("accuracy"), "after_drift_ci_low": drift.get("ci_low"),
                "after_drift_ci_high": drift.get("ci_high"), "after_drift_n": drift.get("n"),
                "governing_recalled": a.get("recall_accuracy"),
                "stale_recalled": a.get("stale_recall_rate"),
                "governing_held_valid": quality.get("governing_held_valid"),
                "stale_held_valid": quality.get("stale_held_valid"),
                "write_validity": loop.get("write_validity"),
                "write_fidelity": loop.get("write_fidelity"),
                "ask_validity": loop.get("ask_validity"),
                "tokens_per_decision": (a.get("efficiency") or {}).get("tokens_per_decision"),
            })
    return rows


def closed_loop_targets(summary: dict[str, Any]) -> dict[str, Any]:
    """The closed-loop issue's targets on one surface (the varied, held-out one):
    after-drift accuracy of `mags` at least static RAG's + 0.10; overall at least 0.9 x
    `mags_scripted`; `mags` above `mags_prompted`. None where an agent is missing."""
    agents = summary["agents"]

    def acc(name: str) -> float | None:
        return agents[name]["accuracy"] if name in agents else None

    def drift(name: str) -> float | None:
        return (agents[name].get("after_drift") or {}).get("accuracy") if name in agents else None

    out: dict[str, Any] = {}
    m, rag = drift("mags"), drift("static_rag")
    out["after_drift_mags_minus_static_rag"] = None if m is None or rag is None else m - rag
    out["after_drift_target"] = 0.10
    m, up = acc("mags"), acc("mags_scripted")
    out["mags_over_scripted"] = None if m is None or not up else m / up
    out["mags_over_scripted_target"] = 0.9
    m, pr = acc("mags"), acc("mags_prompted")
    out["mags_minus_prompted"] = None if m is None or pr is None else m - pr
    out["met"] = {
        "after_drift": _ge(out["after_drift_mags_minus_static_rag"], 0.10),
        "vs_scripted": _ge(out["mags_over_scripted"], 0.9),
        "vs_prompted": None if out["mags_minus_prompted"] is None
        else out["mags_minus_prompted"] > 0,
    }
    return out


def _ge(x: float | None, target: float) -> bool | None:
    return None if x is None else x >= target - 1e-12


def headline_markdown(rows: list[dict[str, Any]]) -> str:
    """The headline table as Markdown (one line per surface and agent)."""
    def f(x: Any, d: int = 3) -> str:
        return "–" if x is None else f"{x:.{d}f}"

    out = ["| surface | agent | what it is | accuracy (95% CI) | per seed | after drift (95% CI) "
           "| rule held valid | stale recalled | write valid | stored rule right |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| {r['surface']} | {r['agent']} | {r['label']} | {f(r['accuracy'])} "
            f"({f(r['ci_low'])}–{f(r['ci_high'])}) | {f(r['seed_mean'])} ± {f(r['seed_std'])} "
            f"| {f(r['after_drift'])} ({f(r['after_drift_ci_low'])}–"
            f"{f(r['after_drift_ci_high'])}) | {f(r['governing_held_valid'])} "
            f"| {f(r['stale_recalled'])} | {f(r['write_validity'])} "
            f"| {f(r.get('write_fidelity'))} |")
    return "\n".join(out)
