"""The memory as an interactive graph in the browser (pyvis / vis-network), one function.

    from mags_lib.graph_html import graph_html, write_graph_html
    write_graph_html(memory, "results/05_graph_dynamics/graph.html", highlight=[3, 7])
    html = graph_html(memory)          # the same page as a string (the explorer's iframe)

What is drawn:

* a node per memory fact, coloured by block (episodic blue, semantic orange); the working-memory
  buffer (recent turns not yet consolidated) as green squares without edges;
* superseded facts faded, dashed, with their validity interval (`valid steps 3-17`) in the
  label; the version chain (`supersedes` edges) dashed; labels only up to `LABEL_LIMIT` nodes
  (above it they would overlap; the tooltips keep every text);
* edge width by current (decayed) weight; solid (consolidated) edges dark;
* a tooltip per node: text, block, provenance, when written (step and time), validity, uses,
  last use, importance, confidence; per edge: kind and weight;
* physics (live force layout) only up to `physics_limit` nodes; above it, positions come from a
  networkx spring layout computed once, so large graphs stay responsive. Above `max_nodes` the
  most used and most recent facts are kept and the heading says how many were left out.

The page is self-contained (vis-network inlined; the CDN links pyvis adds for Bootstrap are
removed), so it opens offline. The vis `network` and `nodes` objects are globals of the page:
`nodes.length` is what the browser test reads, after `window.magsDrawn` turns true (the first
frame is drawn).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BLOCK_COLOURS = {"episodic": "#4C72B0", "semantic": "#DD8452", "working": "#55A868"}
FADED_ALPHA = 0.3
PHYSICS_LIMIT = 300
STABILIZATION_ITERATIONS = 200  # layout steps before the first drawing (vis default 1000)
MAX_NODES = 2_000
LABEL_CHARS = 28
LABEL_LIMIT = 100  # above this many nodes labels are left to the tooltips (they would overlap)
_CDN = re.compile(r"<(link|script)[^>]*cdn\.jsdelivr\.net[^>]*>(\s*</script>)?", re.S)
_EMPTY = re.compile(r"<!--.*?-->|<center>\s*<h1>\s*</h1>\s*</center>", re.S)  # pyvis leftovers
_DRAWN_HOOK = ("<script>network.once('afterDrawing', function () { window.magsDrawn = true; "
               "});</script>")  # set after the first frame (after stabilisation): tests wait on it
_TOOLTIP_CSS = ("<style>.vis-tooltip{white-space:pre-wrap!important;max-width:420px;"
                "font-family:sans-serif!important;font-size:12px!important}</style>")


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _short(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _when(t: float) -> str:
    """A wall-clock time as a UTC date, a game or test clock as a number.

    >>> _when(1795605992.4), _when(12.0)
    ('2026-11-25 11:26 UTC', 't=12.0')
    """
    import time

    if t > 1e9:  # seconds since 1970: a real clock
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))
    return f"t={t:.1f}"


def node_tooltip(node_id: Any, data: dict[str, Any]) -> str:
    """Plain-text tooltip of one node (shown pre-wrapped by the page's CSS).

    >>> print(node_tooltip(3, {"text": "a fact", "block": "semantic", "sources": ["turn:4"],
    ...                        "created": 4, "valid_from": 4, "valid_to": None, "uses": 2}))
    #3 semantic
    a fact
    provenance: turn:4
    written: step 4
    valid: from step 4
    uses: 2
    """
    lines = [f"#{node_id} {data.get('block', '?')}", str(data.get("text", ""))]
    sources = [str(s) for s in data.get("sources") or []]
    if sources:
        more = f" (+{len(sources) - 6} more)" if len(sources) > 6 else ""
        lines.append("provenance: " + ", ".join(sources[:6]) + more)
    if "created" in data:
        when = f"written: step {data['created']}"
        if data.get("created_at") is not None:
            when += f", {_when(float(data['created_at']))}"
        lines.append(when)
    if "valid_from" in data:
        end = data.get("valid_to")
        lines.append(f"valid: from step {data['valid_from']}"
                     + ("" if end is None else f" to step {end} (superseded"
                        + (f" by #{data['superseded_by']})" if data.get("superseded_by")
                           is not None else ")")))
    if "uses" in data:
        lines.append(f"uses: {data['uses']}" + (f", last at step {data['used']}"
                                                 if data.get("used") is not None else ""))
    for name in ("importance", "confidence"):
        if data.get(name) is not None:
            lines.append(f"{name}: {float(data[name]):.2f}")
    if data.get("solid"):
        lines.append("solidified")
    return "\n".join(lines)


def _graph_of(memory: Any, valid_only: bool) -> tuple[Any, list[Any]]:
    """(networkx graph, working-memory items) of a LiquidMemory, or (graph, []) for a graph."""
    if hasattr(memory, "to_networkx"):
        return memory.to_networkx(valid_only=valid_only), list(getattr(memory, "working", []))
    return memory, []


def _keep(graph: Any, max_nodes: int, highlight: set) -> list[Any]:
    """Every node, or the `max_nodes` most used / most recent (highlighted ones first)."""
    nodes = list(graph.nodes)
    if len(nodes) <= max_nodes:
        return nodes
    rank = sorted(nodes, key=lambda n: (n not in highlight, -graph.nodes[n].get("uses", 0),
                                        -graph.nodes[n].get("created", 0)))
    return rank[:max_nodes]


def _layout(graph: Any) -> dict[Any, tuple[float, float]]:
    import networkx as nx

    scale = 40.0 * max(graph.number_of_nodes(), 1) ** 0.5
    pos = nx.spring_layout(graph, iterations=30, seed=0, scale=scale)
    return {n: (float(x), float(y)) for n, (x, y) in pos.items()}


def build_network(memory: Any, *, valid_only: bool = False, highlight: Iterable[Any] = (),
                  query: str | None = None, physics_limit: int = PHYSICS_LIMIT,
                  max_nodes: int = MAX_NODES, title: str = "", height: str = "720px"):
    """A pyvis `Network` of a memory (a LiquidMemory, or a networkx graph with its node
    attributes); see the module docstring. `query` marks nodes whose text contains it."""
    from pyvis.network import Network

    graph, working = _graph_of(memory, valid_only)
    marked = set(highlight)
    needle = (query or "").strip().lower()
    keep = _keep(graph, max_nodes, marked)
    sub = graph.subgraph(keep)
    physics = len(keep) + len(working) <= physics_limit
    pos = {} if physics else _layout(sub)
    labelled = len(keep) <= LABEL_LIMIT
    left_out = graph.number_of_nodes() - len(keep)
    heading = title + (f" ({left_out} least used nodes not shown)" if left_out else "")
    net = Network(height=height, width="100%", cdn_resources="in_line")
    net.mags_heading = heading  # drawn by graph_html (pyvis prints its own heading twice)
    for node_id in keep:
        data = sub.nodes[node_id]
        colour = BLOCK_COLOURS.get(data.get("block", ""), "#8C8C8C")
        valid = data.get("valid_to") is None
        label = _short(str(data.get("text", ""))) if labelled else ""
        if not valid and labelled:
            label += f"\n[valid steps {data.get('valid_from')}-{data.get('valid_to')}]"
        hit = node_id in marked or (needle and needle in str(data.get("text", "")).lower())
        extra = {"x": pos[node_id][0], "y": pos[node_id][1]} if pos else {}
        net.add_node(
            node_id, label=label, title=node_tooltip(node_id, data),
            color={"background": colour if valid else _rgba(colour, FADED_ALPHA),
                   "border": "#C44E52" if hit else (colour if valid
                                                     else _rgba(colour, FADED_ALPHA))},
            borderWidth=4 if hit else 1, shapeProperties={"borderDashes": not valid},
            font={"color": "#222" if valid else "rgba(34,34,34,0.45)"},
            size=10 + 4 * min(int(data.get("uses", 0)), 5), valid=valid,
            block=data.get("block"), **extra)
    for i, item in enumerate(working):
        extra = {"x": -300.0, "y": 40.0 * i} if not physics else {}
        net.add_node(f"w{i}", label=_short(item.text) if labelled else "", shape="square",
                     title=f"working memory (step {item.step})\n{item.text}",
                     color=BLOCK_COLOURS["working"], size=10, valid=True,
                     block="working", **extra)
    for u, v, data in sub.edges(data=True):
        weight = float(data.get("weight", 0.0))
        kind = data.get("kind", "")
        net.add_edge(u, v, width=0.5 + 6.0 * max(min(weight, 1.0), 0.0),
                     title=f"{kind} weight {weight:.3f}" + (" solid" if data.get("solid") else ""),
                     dashes=kind == "supersedes",
                     color="#333333" if data.get("solid") else "#9a9a9a")
    net.toggle_physics(physics)
    net.options.physics.stabilization.iterations = STABILIZATION_ITERATIONS
    if sub.number_of_edges() > 200:  # straight edges: curved ones cost a physics body each
        net.options.edges.smooth = {"enabled": False}
    return net


def graph_html(memory: Any, **kwargs: Any) -> str:
    """The self-contained HTML page of `build_network(memory, **kwargs)`."""
    net = build_network(memory, **kwargs)
    page = _EMPTY.sub("", _CDN.sub("", net.generate_html()))
    page = page.replace("</head>", _TOOLTIP_CSS + "</head>", 1)
    page = page.replace("<body>", "<body>" + legend(net.mags_heading), 1)
    return page.replace("</body>", _DRAWN_HOOK + "</body>", 1)


def legend(heading: str = "") -> str:
    """The page's header: a title line and the colour key."""
    keys = "".join(f'<span style="margin-right:14px"><span style="display:inline-block;width:11px;'
                   f'height:11px;border-radius:6px;background:{c};margin-right:4px"></span>'
                   f"{b}</span>" for b, c in BLOCK_COLOURS.items())
    faded = (f'<span><span style="display:inline-block;width:11px;height:11px;border-radius:6px;'
             f'border:1px dashed #888;background:{_rgba(BLOCK_COLOURS["semantic"], FADED_ALPHA)};'
             'margin-right:4px"></span>superseded (valid steps shown)</span>')
    title = f"<b>{html.escape(heading)}</b><br>" if heading else ""
    return (f'<div id="mags-legend" style="font:13px sans-serif;padding:4px 8px">{title}'
            f"{keys}{faded}</div>")


def write_graph_html(memory: Any, path: str | Path, **kwargs: Any) -> Path:
    """Write `graph_html(memory, **kwargs)` to `path` (atomically); returns the path."""
    from mags_lib.atomic import write_text

    path = Path(path)
    write_text(path, graph_html(memory, **kwargs))
    return path


def iframe(page: str, height: int = 640) -> str:
    """`page` inside an iframe (srcdoc), for notebook output and ipywidgets.HTML."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" style="width:100%;'
            f'height:{height}px;border:1px solid #ddd" sandbox="allow-scripts"></iframe>')
