"""Figures of the mechanism study (notebook 09): the effect heat map and graph growth."""

from __future__ import annotations

from typing import Any


def effect_heatmap(rows: list[dict[str, Any]], agent: str = "mags_scripted") -> Any:
    """Regime x mechanism: effect of switching the mechanism off (full minus ablation), a
    ring around the cells that separate (>= min effect, non-overlapping intervals)."""
    import matplotlib.pyplot as plt
    import numpy as np

    mine = [r for r in rows if r["agent"] == agent and r.get("effect") is not None]
    regimes = list(dict.fromkeys(r["regime"] for r in mine))
    mechanisms = list(dict.fromkeys(r["mechanism"] for r in mine))
    grid = np.full((len(regimes), len(mechanisms)), np.nan)
    fig, ax = plt.subplots(figsize=(1.1 * len(mechanisms) + 2.5, 0.6 * len(regimes) + 1.8))
    for r in mine:
        i, j = regimes.index(r["regime"]), mechanisms.index(r["mechanism"])
        grid[i, j] = r["effect"]
        ax.text(j, i, f"{r['effect']:+.2f}", ha="center", va="center", fontsize=8,
                fontweight="bold" if r["separated"] else "normal")
        if r["separated"]:
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2, ec="black"))
    lim = max(0.05, float(np.nanmax(np.abs(grid))) if mine else 0.05)
    im = ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(mechanisms)), mechanisms, rotation=35, ha="right")
    ax.set_yticks(range(len(regimes)), regimes)
    ax.set_title(f"{agent}: accuracy lost when the mechanism is off (blue = it helps)")
    fig.colorbar(im, ax=ax, shrink=0.8, label="full - ablated")
    fig.tight_layout()
    return fig


def growth(games: list[dict[str, Any]], agent: str = "mags_scripted") -> Any:
    """Nodes over the game per regime (the full memory, first seed)."""
    import matplotlib.pyplot as plt

    mine = [g for g in games if g["agent"] == agent and g["mechanism"] == "none"]
    regimes = list(dict.fromkeys(g["regime"] for g in mine))
    fig, axes = plt.subplots(1, max(1, len(regimes)), figsize=(3.2 * max(1, len(regimes)), 2.8),
                             squeeze=False)
    for ax, regime in zip(axes[0], regimes, strict=False):
        first = min((g for g in mine if g["regime"] == regime), key=lambda g: g["seed"])
        sizes = first["cost"]["sizes"]
        ax.plot([s["turn"] for s in sizes], [s["nodes"] for s in sizes], label="nodes")
        ax.plot([s["turn"] for s in sizes], [s["valid_nodes"] for s in sizes], label="valid")
        ax.set_title(regime, fontsize=9)
        ax.set_xlabel("turn")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig
