"""Figures of notebook 01: rows per task and split, diversity by row origin, nearest-neighbour
cosines. Each function takes `SynthResult` fields (plain dicts / lists) and returns a figure.

    from mags_lib.synth.figures import rows_figure
    save_figure(rows_figure(result.counts), results_dir("01_synthesize_dataset") / "rows.png")
"""

from __future__ import annotations

from mags_lib.plots import use_style

METRICS = ("distinct_1", "distinct_2", "distinct_3", "near_dup_rate")


def rows_figure(counts: dict[str, dict[str, int]]):
    """Grouped bars: rows per task, one bar per split."""
    import matplotlib.pyplot as plt
    import numpy as np

    use_style()
    tasks = list(counts)
    splits = list(next(iter(counts.values()))) if counts else []
    fig, ax = plt.subplots()
    width = 0.8 / max(len(splits), 1)
    for i, split in enumerate(splits):
        x = np.arange(len(tasks)) + i * width
        values = [counts[t][split] for t in tasks]
        bars = ax.bar(x, values, width, label=split)
        ax.bar_label(bars, fontsize=8)
    ax.set_xticks(np.arange(len(tasks)) + width * (len(splits) - 1) / 2, tasks)
    ax.set_ylabel("rows")
    ax.set_title("Rows per task and split")
    ax.legend()
    return fig


def diversity_figure(div: dict[str, dict[str, dict[str, float]]],
                     groups: tuple[str, ...] = ("chain", "expanded", "seed", "final_train")):
    """One panel per metric (distinct-1/2/3 of completions, near-duplicate rate of rows):
    bars per task, one per row origin (chain rows, LLM-expanded rows, hand-written seeds, the
    final train set); the near-duplicate panel adds the train candidates before dedupe."""
    import matplotlib.pyplot as plt
    import numpy as np

    use_style()
    tasks = list(div)
    fig, axes = plt.subplots(1, len(METRICS), figsize=(13, 3.6), sharey=False)
    for ax, metric in zip(axes, METRICS, strict=True):
        shown = ("candidates", *groups) if metric == "near_dup_rate" else groups
        width = 0.8 / len(shown)
        top = 0.0
        for i, group in enumerate(shown):
            values = [div[t].get(group, {}).get(metric, np.nan) if div[t].get(group, {}).get("n")
                      else np.nan for t in tasks]
            top = max([top, *(v for v in values if v == v)])
            bars = ax.bar(np.arange(len(tasks)) + i * width, values, width, label=group,
                          color=None if group != "candidates" else "#8C8C8C")
            if group == "candidates":
                ax.legend(handles=[bars], fontsize=8, loc="upper left")
        ax.set_xticks(np.arange(len(tasks)) + width * (len(shown) - 1) / 2, tasks)
        ax.set_ylim(0, max(1.3 * top, 0.05))
        ax.set_title(metric.replace("_", "-"))
    axes[0].legend(fontsize=8)
    fig.suptitle("Diversity by row origin (distinct-n of completions at matched sample size; "
                 "near-dup rate of rows, candidates = chain rows before dedupe)")
    fig.tight_layout()
    return fig


def nn_cosine_figure(nn: dict[str, list[float]], threshold: float):
    """Histogram of each final train row's highest cosine with another row, per task."""
    import matplotlib.pyplot as plt

    use_style()
    fig, ax = plt.subplots()
    for task, values in nn.items():
        if values:
            ax.hist(values, bins=40, range=(min(0.5, min(values)), 1.0), alpha=0.5, label=task)
    ax.axvline(threshold, color="black", linestyle="--", linewidth=1, label="near-dup threshold")
    ax.set_xlabel("nearest-neighbour cosine")
    ax.set_ylabel("train rows")
    ax.set_title("How close each train row is to its nearest other row")
    ax.legend()
    return fig
