"""The transfer matrix of the write skill (notebook 14): write models trained on one side (the
game only, the conversations only) or on the mix, each judged alone, prompted and decoded as in
play (`role_judge.judge_write`), on every task's text that no dataset holds.

    result = transfer_matrix({"mix": "models/gguf/write-grpo-q8_0.gguf", "game": ...},
                             {"game, held-out phrasings": rows, "persona test": rows, ...})
    print(transfer_markdown(result))

A cell is the op accuracy (add / update / none chosen right) with a 95% interval by bootstrap
over conversations (games for the game's rows: rows of one conversation are not independent),
the op confusion matrix (a soft score can hide a writer that never stores), facts dropped and
engram F1. Each one-sided writer is also compared with the reference (the mix) on the same
rows: the paired difference of op accuracy, bootstrapped the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mags_lib.evaluation.evidence_recall import bootstrap_by_conversation

SAMPLES = 4  # raw outputs kept per cell (the judge keeps 12; the matrix has many cells)


def row_group(row: dict) -> str:
    """What a judged row's interval resamples: its conversation, else its game.

    >>> row_group({"gold": {"conversation": "persona-test-20001"}}), row_group({"game_seed": 7, "gold": {}})
    ('persona-test-20001', 'game-7')
    """
    return str(row["gold"].get("conversation") or f"game-{row.get('game_seed')}")


def _cell(judged: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    right = [{"conversation": g, "right": float(o["chosen"] == o["gold"])}
             for g, o in zip(groups, judged["ops"], strict=True) if o["gold"] is not None]
    keep = ("n", "op_accuracy", "op_balanced", "op_confusion", "dropped", "fact_exact", "f1",
            "parsed", "seconds_p50")
    return {**{k: judged.get(k) for k in keep},
            "op_ci95": list(bootstrap_by_conversation(right, "right")) if right else None,
            "groups": len(set(groups)), "samples": judged["samples"][:SAMPLES],
            "right": [r["right"] for r in right]}


def _paired(a: list[float], b: list[float], groups: list[str]) -> dict[str, Any]:
    rows = [{"conversation": g, "d": x - y} for g, x, y in zip(groups, a, b, strict=True)]
    lo, hi = bootstrap_by_conversation(rows, "d")
    return {"difference": sum(r["d"] for r in rows) / len(rows) if rows else None,
            "ci95": [lo, hi]}


def transfer_matrix(writers: dict[str, Any], surfaces: dict[str, list[dict]],
                    reference: str | None = "mix") -> dict[str, Any]:
    """Every writer of `writers` ({name: a .gguf path or a loaded LLM}) judged on every
    non-empty surface of `surfaces` ({name: write rows prompted as in play}); a surface
    without rows is listed under "skipped". With `reference` among the writers, each other
    writer's paired difference of op accuracy to it, per surface."""
    from mags_lib.evaluation.role_judge import judge_write
    from mags_lib.llm import LLMConfig, load_llm

    judged_on = {s: rows for s, rows in surfaces.items() if rows}
    groups = {s: [row_group(r) for r in rows if r["gold"].get("op") is not None]
              for s, rows in judged_on.items()}
    cells: dict[str, dict[str, Any]] = {}
    for name, spec in writers.items():
        llm = load_llm(LLMConfig(model=str(spec), n_ctx=1024)) \
            if isinstance(spec, str | Path) else spec
        cells[name] = {s: _cell(judge_write(llm, rows, per_row=True),
                                [row_group(r) for r in rows])
                       for s, rows in judged_on.items()}
    differences: dict[str, dict[str, Any]] = {}
    if reference in cells:
        for name in cells:
            if name != reference:
                differences[name] = {s: _paired(cells[name][s]["right"],
                                                cells[reference][s]["right"], groups[s])
                                     for s in judged_on}
    for by_surface in cells.values():
        for cell in by_surface.values():
            cell.pop("right")
    return {"writers": {n: str(w) if isinstance(w, str | Path) else type(w).__name__
                        for n, w in writers.items()},
            "surfaces": {s: len(rows) for s, rows in judged_on.items()},
            "skipped": sorted(s for s, rows in surfaces.items() if not rows),
            "reference": reference if reference in cells else None,
            "cells": cells, "differences": differences}


def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def _ci(ci: Any) -> str:
    return "" if not ci or ci[0] is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def transfer_markdown(result: dict[str, Any], trained_on: dict[str, str] | None = None) -> str:
    """The matrix as Markdown: op accuracy [95% CI] per writer (rows) and surface (columns),
    the paired difference to the reference, and each cell's op confusion (gold -> chosen)."""
    surfaces = list(result["surfaces"])
    if not surfaces or not result["cells"]:
        return "No transfer matrix: no writer or no rows judged."
    trained_on = trained_on or {}
    head = ["trained on"] + [f"{s} ({result['surfaces'][s]} turns)" for s in surfaces]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, by_surface in result["cells"].items():
        label = trained_on.get(name, name)
        lines.append("| " + " | ".join([label] + [
            _f(by_surface[s]["op_accuracy"]) + _ci(by_surface[s]["op_ci95"])
            + f", bal. {_f(by_surface[s].get('op_balanced'))}" for s in surfaces]) + " |")
    out = ["Write-model op accuracy (add / update / none chosen right) [95% CI, bootstrap over "
           "conversations or games], and balanced (the mean recall over the gold ops: where "
           "most turns hold nothing to store, a writer that stores nothing scores high on the "
           "first and about 1 / (ops present) on the second):", "", *lines]
    ref = result.get("reference")
    if result["differences"]:
        out += ["", f"Paired difference to `{ref}` on the same rows [95% CI]:", "",
                "| writer | " + " | ".join(surfaces) + " |", "|" + "---|" * (len(surfaces) + 1)]
        for name, by_surface in result["differences"].items():
            out.append("| " + " | ".join([trained_on.get(name, name)] + [
                (f"{by_surface[s]['difference']:+.3f}" + _ci(by_surface[s]["ci95"]))
                for s in surfaces]) + " |")
    out += ["", "Op confusion (gold -> chosen), facts dropped, engram F1:", ""]
    for name, by_surface in result["cells"].items():
        for s in surfaces:
            c = by_surface[s]
            conf = "; ".join(f"{want}: " + ", ".join(f"{got} {n}" for got, n in sorted(
                row.items())) for want, row in c["op_confusion"].items() if row)
            out.append(f"- {trained_on.get(name, name)} on {s}: {conf}; dropped "
                       f"{_f(c['dropped'])}; F1 {_f(c['f1'])}")
    if result["skipped"]:
        out += ["", "Not judged (no rows): " + ", ".join(result["skipped"])]
    return "\n".join(out)
