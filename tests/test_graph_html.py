"""The interactive graph page (pyvis): what it draws, offline, and how it scales."""

from __future__ import annotations

import json
import re

import networkx as nx

from mags_lib.embed import HashingEmbedder
from mags_lib.graph_html import (
    BLOCK_COLOURS,
    LABEL_LIMIT,
    build_network,
    graph_html,
    iframe,
    write_graph_html,
)
from mags_lib.memory import LiquidMemory


def _memory() -> LiquidMemory:
    m = LiquidMemory(embedder=HashingEmbedder())
    m.observe("The purple glarb eats carrots on rainy turns.", block="semantic",
              source="turn:1", key="glarb|rainy")
    m.step()
    m.observe("We talked about the garden.", block="episodic", source="chat:2")
    m.step()
    m.observe("The purple glarb now eats turnips on rainy turns.", block="semantic",
              source="turn:3", key="glarb|rainy")
    m.step()
    m.perceive("a turn still in working memory")
    return m


def _nodes(page: str) -> list[dict]:
    return json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S)[1])


def test_page_draws_blocks_superseded_working_and_provenance():
    m = _memory()
    page = graph_html(m, highlight=[2])
    nodes = {n["id"]: n for n in _nodes(page)}
    assert set(nodes) == {0, 1, 2, "w0"}
    old, episode, new = nodes[0], nodes[1], nodes[2]
    assert not old["valid"] and "valid steps 0-2" in old["label"]
    assert old["color"]["background"].startswith("rgba(") and old["shapeProperties"][
        "borderDashes"]
    assert new["valid"] and new["color"]["background"] == BLOCK_COLOURS["semantic"]
    assert episode["color"]["background"] == BLOCK_COLOURS["episodic"]
    assert nodes["w0"]["color"] == BLOCK_COLOURS["working"] and nodes["w0"]["shape"] == "square"
    assert "provenance: turn:3" in new["title"] and "superseded by #2" in old["title"]
    assert new["borderWidth"] > episode["borderWidth"]  # the highlighted hit
    # opens offline: no stylesheet or script is fetched (the inlined library's comments name
    # URLs, so look at the tags)
    assert not re.search(r"<(link|script)[^>]+(href|src)=", page)
    assert "window.magsDrawn" in page


def test_valid_only_leaves_superseded_facts_out():
    ids = {n["id"] for n in _nodes(graph_html(_memory(), valid_only=True))}
    assert 0 not in ids and 2 in ids


def test_large_graphs_get_a_fixed_layout_and_a_node_cap():
    g = nx.path_graph(60)
    for n in g:
        g.nodes[n].update(text=f"fact {n}", block="semantic", valid_to=None, uses=n % 3,
                          created=n)
    for u, v in g.edges:
        g.edges[u, v].update(weight=0.5, kind="similar")
    small = build_network(g, physics_limit=100)
    assert small.options.physics.enabled
    big = build_network(g, physics_limit=10, max_nodes=40)
    assert not big.options.physics.enabled
    assert len(big.nodes) == 40 and all("x" in n and "y" in n for n in big.nodes)
    assert "20 least used nodes not shown" in big.mags_heading
    assert LABEL_LIMIT >= 60 and all(n["label"] for n in small.nodes)


def test_write_is_atomic_and_iframe_escapes(tmp_path):
    path = write_graph_html(_memory(), tmp_path / "g.html")
    assert path.read_text().startswith("<html>") and not list(tmp_path.glob("*.tmp*"))
    frame = iframe("<b>\"x\"</b>")
    assert "&lt;b&gt;&quot;x&quot;" in frame and frame.startswith("<iframe srcdoc=")
