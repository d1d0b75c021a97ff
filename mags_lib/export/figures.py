"""The export figure: file size against speed, and agreement with the checkpoint, per GGUF type.

    fig = size_speed_agreement(metrics)          # metrics from export_and_verify
    save_figure(fig, results_dir("04_export_gguf") / "size_speed_agreement.png")
"""

from __future__ import annotations

from mags_lib.plots import AGENT_COLOURS, use_style


def size_speed_agreement(metrics: dict):
    """Left: size (MiB) vs generated tokens/s, one point per model and type (transformers for
    scale). Right: first-token, shared-prefix and exact-text agreement per type, mean over
    models."""
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    use_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    summary = metrics["summary"]
    types = sorted((q for q in summary if q != "transformers"),
                   key=lambda q: -summary[q]["size_mb"])
    colour = {q: AGENT_COLOURS[i % len(AGENT_COLOURS)]
              for i, q in enumerate(["transformers", *types])}
    markers = "osD^v<>p*h"
    for j, (name, r) in enumerate(metrics["models"].items()):
        v = r.get("verify")
        if not v:
            continue
        for q, m in [("transformers", v["transformers"]), *v["quants"].items()]:
            left.scatter(m["size_mb"], m["tokens_per_s"], color=colour[q],
                         marker=markers[j % len(markers)], s=50)
            if j == 0:
                left.annotate(q, (m["size_mb"], m["tokens_per_s"]), textcoords="offset points",
                              xytext=(6, 4), fontsize=8, color=colour[q])
        left.plot([], [], markers[j % len(markers)], color="grey", label=name)
    left.set_xscale("log")
    left.xaxis.set_major_formatter(ticker.ScalarFormatter())
    left.xaxis.set_minor_formatter(ticker.NullFormatter())
    sizes = [m["size_mb"] for m in summary.values()]
    left.set_xticks([t for t in (25, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
                     if min(sizes) / 2 <= t <= max(sizes) * 2])
    left.set_ylim(bottom=0)
    left.set_xlabel("file size (MiB, log scale)")
    left.set_ylabel("generated tokens / s (CPU, prompt included)")
    left.legend(fontsize=8, loc="lower left")
    width = 0.27
    for k, (key, label) in enumerate([("first_token_agreement", "first token"),
                                      ("prefix_agreement", "shared prefix"),
                                      ("exact_match", "exact text")]):
        xs = [i + (k - 1) * width for i in range(len(types))]
        right.bar(xs, [summary[q][key] for q in types], width, label=label,
                  color=AGENT_COLOURS[k], alpha=0.85)
    right.set_xticks(range(len(types)), types)
    right.set_ylim(0, 1.05)
    right.set_ylabel("agreement with the checkpoint (greedy)")
    right.legend(fontsize=8, loc="lower left")
    return fig
