"""Figures of a role's training run, in the shared style (mags_lib.plots).

    fig = plot_role_training(report)          # SFT loss | GRPO rewards | stage comparison
    save_figure(fig, results_dir("02_train_ask_model") / "ask_curves.png")

The curves come from the trainers' `log_history` (the same numbers TensorBoard shows under
`models/<role>-{sft,grpo}/tensorboard/`).
"""

from __future__ import annotations

from typing import Any

from mags_lib.train.report import STAGE_LABELS, STAGES


def _series(curve: list[dict], key: str) -> tuple[list[float], list[float]]:
    pts = [(e["step"], e[key]) for e in curve if e.get(key) is not None and "step" in e]
    return [p[0] for p in pts], [p[1] for p in pts]


def _plot_loss(ax, curve: list[dict]) -> None:
    x, y = _series(curve, "loss")
    ax.plot(x, y, marker="o" if len(x) < 20 else None, ms=3)
    ax.set(title="SFT loss (completion tokens)", xlabel="step", ylabel="loss")


def _plot_rewards(ax, curve: list[dict]) -> None:
    x, y = _series(curve, "reward")
    ax.plot(x, y, lw=2, color="black", label="weighted sum")
    names = sorted({k.split("/")[1] for e in curve for k in e
                    if k.startswith("rewards/") and k.endswith("/mean")})
    for name in names:
        xs, ys = _series(curve, f"rewards/{name}/mean")
        ax.plot(xs, ys, lw=1, alpha=0.8, label=name.replace("_reward", "").replace("_", " "))
    ax.set(title="GRPO reward per step", xlabel="step", ylabel="mean reward")
    if names:
        ax.legend(fontsize=7, loc="lower left", ncol=2)


def _plot_stages(ax, report: Any) -> None:
    rows = report.table()
    labels = [f"{r['stage']}\n{r['task']}" if len(report.tasks) > 1 else r["stage"] for r in rows]
    xs = range(len(rows))
    adherence = [r["adherence"] or 0.0 for r in rows]
    accuracy = [r["accuracy"] or 0.0 for r in rows]
    bars = [ax.bar([x - 0.2 for x in xs], adherence, width=0.4, label="adherence"),
            ax.bar([x + 0.2 for x in xs], accuracy, width=0.4,
                   label=rows[0]["accuracy_name"] if len(report.tasks) == 1 else "task accuracy")]
    for b in bars:
        ax.bar_label(b, fmt="%.2f", fontsize=7)
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set(title=f"{report.role}: val split, greedy, no grammar", ylim=(0, 1.15))
    ax.legend(fontsize=7, loc="upper left")


def plot_role_training(report: Any):
    """Three panels for a `RoleReport`: SFT loss, GRPO rewards (sum and each function), and
    adherence / accuracy of base, SFT and SFT+GRPO."""
    import matplotlib.pyplot as plt

    from mags_lib.plots import use_style

    use_style()
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    _plot_loss(axes[0], report.loss_curve)
    _plot_rewards(axes[1], report.reward_curve)
    _plot_stages(axes[2], report)
    fig.suptitle(f"{report.role} model: " + " -> ".join(STAGE_LABELS[s] for s in STAGES))
    fig.tight_layout()
    return fig
