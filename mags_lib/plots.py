"""One figure style for every notebook, and drawings of the memory graph.

    from mags_lib.plots import use_style, draw_memory, save_figure
    use_style()
    fig = draw_memory(memory.to_networkx(valid_only=False), highlight=[h.node_id for h in hits])
    save_figure(fig, results_dir("05_graph_dynamics") / "graph.png")

matplotlib loads on first use, with the Agg backend outside notebooks.
"""

from __future__ import annotations

from pathlib import Path

BLOCK_COLOURS = {"episodic": "#4C72B0", "semantic": "#DD8452"}
KIND_STYLES = {"supersedes": "dashed", "temporal": "dotted"}
AGENT_COLOURS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3",
                 "#8C8C8C", "#CCB974", "#64B5CD"]


def use_style() -> None:
    """The shared style: readable at notebook width, colour-blind-safe palette."""
    import matplotlib as mpl

    mpl.rcParams.update({
        "figure.figsize": (7.0, 4.0), "figure.dpi": 110, "savefig.dpi": 150,
        "savefig.bbox": "tight", "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 10,
        "axes.prop_cycle": mpl.cycler(color=AGENT_COLOURS), "legend.frameon": False,
    })


def save_figure(fig, path: str | Path) -> Path:
    """Save as PNG (and keep the figure open for the notebook to display)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def draw_memory(graph, *, highlight=(), max_nodes: int = 80, labels: bool = True, ax=None,
                seed: int = 0, title: str | None = None):
    """Draw (a readable part of) a memory graph.

    Nodes are coloured by block (episodic blue, semantic orange); superseded nodes are grey;
    solid nodes have a black rim; edge width follows weight; supersedes edges are dashed and
    temporal ones dotted; `highlight` node ids (e.g. the hits of a recall) are drawn larger.
    Graphs larger than `max_nodes` are cut to the highlighted nodes plus the heaviest ones.
    """
    import matplotlib.pyplot as plt
    import networkx as nx

    highlight = set(highlight)
    if graph.number_of_nodes() > max_nodes:
        strength = dict(graph.degree(weight="weight"))
        keep = set(n for n in highlight if n in graph)
        for n in sorted(strength, key=lambda n: (-strength[n], n)):
            if len(keep) >= max_nodes:
                break
            keep.add(n)
        graph = graph.subgraph(keep)
    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 7))
    else:
        fig = ax.figure
    ax.set_axis_off()
    if graph.number_of_nodes() == 0:
        ax.text(0.5, 0.5, "empty memory", ha="center", va="center")
        return fig
    pos = nx.spring_layout(graph, seed=seed, weight="weight")
    nodes = list(graph.nodes)
    colours = [BLOCK_COLOURS.get(graph.nodes[n].get("block"), "#999999")
               if graph.nodes[n].get("valid_to") is None else "#BBBBBB" for n in nodes]
    sizes = [420 if n in highlight else 140 for n in nodes]
    rims = ["black" if graph.nodes[n].get("solid") else "white" for n in nodes]
    for style in ("solid", "dashed", "dotted"):
        edges = [(u, v) for u, v, d in graph.edges(data=True)
                 if KIND_STYLES.get(d.get("kind"), "solid") == style]
        if edges:
            widths = [0.5 + 3.0 * graph.edges[e].get("weight", 0.5) for e in edges]
            nx.draw_networkx_edges(graph, pos, edgelist=edges, width=widths, style=style,
                                   alpha=0.5, ax=ax, arrows=False)
    nx.draw_networkx_nodes(graph, pos, nodelist=nodes, node_color=colours, node_size=sizes,
                           edgecolors=rims, linewidths=1.2, ax=ax)
    if labels:
        shown = {n: _short(str(graph.nodes[n].get("text", n))) for n in nodes
                 if n in highlight or len(nodes) <= 30}
        nx.draw_networkx_labels(graph, pos, labels=shown, font_size=7, ax=ax)
    if title:
        ax.set_title(title)
    return fig
