"""Figures of an evaluation, drawn from `GameRecord`s (or `games.jsonl`) and the summary.

    from mags_lib.evaluation import figures
    fig = figures.accuracy_over_time(result.games)
    save_figure(fig, out / "accuracy_over_time.png")

All use `mags_lib.plots.use_style` and give every agent the same colour in every figure.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from mags_lib.plots import AGENT_COLOURS, use_style


def _colours(names: list[str]) -> dict[str, str]:
    return {n: AGENT_COLOURS[i % len(AGENT_COLOURS)] for i, n in enumerate(names)}


def _agents(games: list[Any]) -> list[str]:
    return list(dict.fromkeys(g.agent for g in games))


def accuracy_over_time(games: list[Any], bin_turns: int = 20, agents: list[str] | None = None):
    """Accuracy per span of `bin_turns` turns (seeds pooled), rule changes as dotted lines."""
    import matplotlib.pyplot as plt

    use_style()
    names = agents or _agents(games)
    colours = _colours(_agents(games))
    fig, ax = plt.subplots(figsize=(8, 4))
    for name in names:
        bins: dict[int, list[bool]] = defaultdict(list)
        for g in games:
            if g.agent == name:
                for d in g.decisions:
                    bins[d["turn"] // bin_turns].append(bool(d["correct"]))
        xs = sorted(bins)
        ax.plot([(x + 0.5) * bin_turns for x in xs], [sum(bins[x]) / len(bins[x]) for x in xs],
                marker="o", ms=3, label=name, color=colours[name])
    changes = sorted({t for g in games for t, _ in g.changes})
    for t in changes:
        ax.axvline(t, color="grey", ls=":", lw=0.8)
    ax.set_xlabel(f"turn (bins of {bin_turns}; dotted: rule changes and additions)")
    ax.set_ylabel("decision accuracy")
    ax.set_ylim(0, 1.05)
    ax.legend(ncol=3, fontsize=8)
    return fig


def accuracy_bars(summary: dict[str, Any]):
    """Pooled accuracy per agent with Wilson 95% intervals; dots are single seeds."""
    import matplotlib.pyplot as plt

    use_style()
    agents = summary["agents"]
    names = list(agents)
    colours = _colours(names)
    fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(names) + 2), 4))
    for i, name in enumerate(names):
        a = agents[name]
        if a["accuracy"] is None:
            continue
        ax.bar(i, a["accuracy"], color=colours[name])
        ax.errorbar(i, a["accuracy"], yerr=[[a["accuracy"] - a["ci_low"]],
                                            [a["ci_high"] - a["accuracy"]]], color="black",
                    capsize=3)
        seeds = list(a["seeds"]["per_seed"].values())
        ax.scatter([i] * len(seeds), seeds, color="black", s=8, zorder=3)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("decision accuracy (95% CI)")
    ax.set_ylim(0, 1.05)
    gap = summary.get("oracle_vs_bare_gap")
    if gap is not None:
        ax.set_title(f"oracle - bare = {gap:+.3f} "
                     f"({'valid' if summary.get('evaluation_valid') else 'NOT valid'})")
    return fig


def cost_per_decision(games: list[Any], agents: list[str] | None = None):
    """Prompt tokens and seconds per decision against the turn: full context grows, memory
    agents should stay flat."""
    import matplotlib.pyplot as plt

    use_style()
    names = agents or _agents(games)
    colours = _colours(_agents(games))
    fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(10, 4))
    for name in names:
        ds = sorted((d for g in games if g.agent == name for d in g.decisions),
                    key=lambda d: d["turn"])
        turns = [d["turn"] for d in ds]
        ax_t.scatter(turns, [d["prompt_tokens"] for d in ds], s=6, color=colours[name],
                     label=name)
        ax_s.scatter(turns, [d["seconds"] for d in ds], s=6, color=colours[name])
    ax_t.set_xlabel("turn")
    ax_t.set_ylabel("prompt tokens per decision")
    ax_s.set_xlabel("turn")
    ax_s.set_ylabel("seconds per decision (memory + LLM)")
    ax_t.legend(fontsize=8, markerscale=2)
    return fig


def ablation_figure(summary: dict[str, Any]):
    """The ablation table as grouped bars: accuracy, recall accuracy, stale recall rate."""
    import matplotlib.pyplot as plt

    use_style()
    rows = summary["ablation"]
    metrics = [("accuracy", "accuracy"), ("recall_accuracy", "recall accuracy"),
               ("stale_recall_rate", "stale recall rate")]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows) + 2), 4))
    width = 0.8 / len(metrics)
    for j, (key, label) in enumerate(metrics):
        xs = [i + (j - 1) * width for i in range(len(rows))]
        ax.bar(xs, [r[key] or 0.0 for r in rows], width, label=label)
    ax.set_xticks(range(len(rows)), [r["agent"] for r in rows], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    return fig
