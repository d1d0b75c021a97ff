"""Interactive views of a memory in JupyterLab (ipywidgets).

    from mags_lib.widgets import explore_memory, replay
    explore_memory(memory)        # type a query: hits with provenance + the recalled subgraph
    replay(frames)                # slide through saved per-step graph snapshots

Nothing here is needed headless: the notebooks save the same views as PNGs.
"""

from __future__ import annotations

import html


def hits_table(hits) -> str:
    """Recall hits as an HTML table: score, block, validity, text, path and provenance."""
    rows = "".join(
        f"<tr><td>{h.score:.3f}</td><td>{h.block}</td><td>{'yes' if h.valid else 'superseded'}</td>"
        f"<td>{html.escape(h.text)}</td><td>{' → '.join(map(str, h.path))}</td>"
        f"<td>{html.escape(', '.join(map(str, h.sources[:4])))}</td></tr>"
        for h in hits
    )
    return ("<table><tr><th>score</th><th>block</th><th>valid</th><th>text</th><th>path</th>"
            f"<th>sources</th></tr>{rows}</table>")


def explore_memory(memory, k: int = 8, max_nodes: int = 60):
    """A query box, k slider and 'show superseded' toggle over `memory.recall`.

    Exploring does not change the memory: each query runs on a snapshot that is rolled back, so
    Hebbian updates from the exploration do not leak into the experiment.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display

    from mags_lib.plots import draw_memory

    query = w.Text(placeholder="what does the purple glarb eat on rainy turns?",
                   description="query", layout=w.Layout(width="70%"))
    k_slider = w.IntSlider(value=k, min=1, max=30, description="k")
    invalid = w.Checkbox(value=False, description="show superseded")
    out = w.Output()

    def run(*_):
        out.clear_output()
        if not query.value.strip():
            return
        snap = memory.snapshot()
        try:
            hits = memory.recall(query.value, k=k_slider.value, include_invalid=invalid.value)
        finally:
            memory.rollback(snap)
        with out:
            display(HTML(hits_table(hits)))
            graph = memory.to_networkx(valid_only=not invalid.value)
            shown = {n for h in hits for n in h.path if n in graph}
            for n in list(shown):
                shown.update(graph.neighbors(n))
            fig = draw_memory(graph.subgraph(shown), highlight=[h.node_id for h in hits],
                              max_nodes=max_nodes)
            plt.show(fig)

    query.on_submit(run)
    k_slider.observe(run, names="value")
    invalid.observe(run, names="value")
    return w.VBox([w.HBox([query, k_slider, invalid]), out])


def replay(frames: list, titles: list[str] | None = None, max_nodes: int = 60):
    """Slide through a list of networkx graphs (e.g. `memory.to_networkx()` every N steps)."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from mags_lib.plots import draw_memory

    def show(i: int):
        title = titles[i] if titles else f"frame {i}"
        fig = draw_memory(frames[i], max_nodes=max_nodes, labels=False, title=title)
        plt.show(fig)

    return w.interactive(show, i=w.IntSlider(min=0, max=max(len(frames) - 1, 0), value=0,
                                              description="step"))
