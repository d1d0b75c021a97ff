"""Interactive views of a memory in JupyterLab (ipywidgets).

    from mags_lib.widgets import explore_memory
    explore_memory(memory, frames=[(turn, graph), ...])   # recall, search, time slider

The graph is `mags_lib.graph_html` (pyvis) in an iframe. Nothing here is needed headless: the
notebooks save the same views as HTML files and PNGs.
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


def explore_memory(memory, frames: list | None = None, k: int = 8, height: int = 620):
    """The memory as an interactive graph (`graph_html`, pyvis) with a recall box, a search box,
    a 'show superseded' toggle and a time slider.

    `frames` is a list of `(label, graph)` pairs, e.g. `(turn, memory.to_networkx(False))`
    taken during play; the slider runs over them and ends at "now" (the live memory). A query
    recalls on the live memory and highlights the hits (red border) with their table; the
    search box marks every node whose text contains it, in any frame. Exploring does not change
    the memory: each query runs with `learn=False`.
    """
    import ipywidgets as w

    from mags_lib.graph_html import graph_html, iframe

    frames = list(frames or [])
    labels = [str(label) for label, _ in frames] + ["now"]
    query = w.Text(placeholder="recall: what does the purple glarb eat on rainy turns?",
                   description="recall", layout=w.Layout(width="55%"))
    search = w.Text(placeholder="mark nodes containing...", description="search",
                    layout=w.Layout(width="35%"))
    invalid = w.Checkbox(value=True, description="show superseded")
    time = w.SelectionSlider(options=list(range(len(labels))), value=len(labels) - 1,
                             description="time", readout=False,
                             layout=w.Layout(width="70%"))
    when = w.Label(value=labels[-1], layout=w.Layout(width="180px"))
    graph_view = w.HTML()
    table = w.HTML()
    status = w.Label()

    def draw(*_):
        i = time.value
        when.value = f"snapshot: {labels[i]}"
        live = i == len(frames)
        highlight = []
        table.value = ""
        if live and query.value.strip():
            hits = memory.recall(query.value, k=k, include_invalid=invalid.value, learn=False)
            highlight = [h.node_id for h in hits]
            table.value = hits_table(hits)
        source = memory if live else frames[i][1]
        page = graph_html(source, valid_only=not invalid.value, highlight=highlight,
                          query=search.value or None, height=f"{height - 60}px")
        graph = memory.to_networkx(valid_only=not invalid.value) if live else source
        status.value = f"{graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges"
        graph_view.value = iframe(page, height)

    for control in (query, search):
        control.on_submit(draw)
    for control in (invalid, time):
        control.observe(draw, names="value")
    draw()
    return w.VBox([w.HBox([query, search]), w.HBox([time, when, invalid]), status, table,
                   graph_view])
