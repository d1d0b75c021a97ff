"""Figures of a memory-dynamics study (`evaluation.graph_study`, notebook 05).

    fig = graph_size_over_time(study.traces, study.changes)
    save_figure(fig, out / "graph_size.png")

Every variant keeps the same colour in every figure; rule changes of the first seed are dotted.
"""

from __future__ import annotations

from typing import Any

from mags_lib.plots import AGENT_COLOURS, use_style

Traces = dict[str, dict[int, list[dict[str, Any]]]]


def _colour(i: int) -> str:
    return AGENT_COLOURS[i % len(AGENT_COLOURS)]


def _mark_changes(ax, changes: dict[int, list[int]]) -> None:
    if changes:
        for turn in next(iter(changes.values())):
            ax.axvline(turn, color="grey", lw=0.6, ls=":", zorder=0)


def graph_size_over_time(traces: Traces, changes: dict[int, list[int]]):
    """Nodes, edges and churn per turn (first seed of each variant)."""
    import matplotlib.pyplot as plt

    use_style()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for i, (variant, per_seed) in enumerate(traces.items()):
        rows = next(iter(per_seed.values()))
        turns = [r["turn"] for r in rows]
        for ax, key in zip(axes, ("nodes", "edges", "churn"), strict=True):
            ax.plot(turns, [r[key] for r in rows], color=_colour(i), lw=1.2, label=variant)
    for ax, title in zip(axes, ("nodes (valid + superseded)", "edges", "edge churn per step"),
                         strict=True):
        ax.set_title(title)
        ax.set_xlabel("turn")
        _mark_changes(ax, changes)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def recall_over_time(traces: Traces, changes: dict[int, list[int]], bin_turns: int = 50):
    """Share of decisions whose recall held the current rule (solid) or a stale one (dashed),
    per span of `bin_turns` turns, seeds pooled."""
    import matplotlib.pyplot as plt

    use_style()
    fig, ax = plt.subplots(figsize=(9, 3.8))
    for i, (variant, per_seed) in enumerate(traces.items()):
        bins: dict[int, list[tuple[bool, bool]]] = {}
        for rows in per_seed.values():
            for r in rows:
                if r.get("decision"):
                    bins.setdefault(r["turn"] // bin_turns, []).append((r["hit"], r["stale"]))
        xs = sorted(bins)
        mid = [(b + 0.5) * bin_turns for b in xs]
        ax.plot(mid, [sum(h for h, _ in bins[b]) / len(bins[b]) for b in xs], color=_colour(i),
                marker="o", ms=3, label=f"{variant}: current rule recalled")
        ax.plot(mid, [sum(s for _, s in bins[b]) / len(bins[b]) for b in xs], color=_colour(i),
                ls="--", lw=1)
    _mark_changes(ax, changes)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("turn")
    ax.set_ylabel("share of decisions")
    ax.set_title("recall of the governing rule (dashed: a superseded version recalled)")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def edge_kinds(traces: Traces):
    """Edges by kind at the end of the first seed's game, per variant (stacked bars)."""
    import matplotlib.pyplot as plt

    use_style()
    last = {v: next(iter(per_seed.values()))[-1]["edge_kinds"] for v, per_seed in traces.items()}
    kinds = sorted({k for counts in last.values() for k in counts})
    fig, ax = plt.subplots(figsize=(8, 3.8))
    bottom = [0] * len(last)
    for i, kind in enumerate(kinds):
        heights = [last[v].get(kind, 0) for v in last]
        ax.bar(list(last), heights, bottom=bottom, color=_colour(i), label=kind)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_ylabel("edges at the last turn")
    ax.legend(fontsize=8)
    ax.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    return fig
