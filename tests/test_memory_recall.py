"""Reading the memory: hybrid anchors, traversal, Hebbian co-recall, connect, context items
(mags_lib.memory.recall, anchors, traversal)."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mags_lib.actions.types import Connect, Forget, RecallQuery
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError, UnknownNodeError
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.recall import has_content
from mags_lib.memory.state import capture
from mags_lib.memory.traversal import components, spread, strongest_path

CARROTS = "On rainy turns the purple glarb eats carrots."
STONES = "On rainy turns the purple glarb eats stones."


def make_memory(**overrides) -> LiquidMemory:
    return LiquidMemory(MemoryConfig.from_dict(overrides), embedder=HashingEmbedder(),
                        clock=lambda: 1000.0)


def _w(data):
    return data["weight"]


def test_changed_rule_is_recalled_in_its_new_form():
    mem = make_memory()
    old = mem.observe(CARROTS, block="semantic")
    mem.observe("The blue zorp sings at dawn.", block="semantic")
    new = mem.observe(STONES, block="semantic")
    for query in ("what does the glarb eat on rainy turns?", "glarb eats carrots"):
        hits = mem.recall(query, k=5)
        assert hits[0].node_id == new and hits[0].valid
        assert old not in {h.node_id for h in hits}
    with_old = mem.recall("glarb eats carrots", k=5, include_invalid=True)
    flagged = {h.node_id: h for h in with_old}
    assert flagged[old].valid is False and flagged[old].superseded_by == new
    assert flagged[new].valid is True


def test_forgotten_fact_is_not_recalled():
    mem = make_memory()
    a = mem.observe("The vorl hides under the old bridge.", block="semantic")
    mem.apply([Forget("vorl hides under bridge")])
    assert not mem.is_valid(a)
    assert all(h.node_id != a for h in mem.recall("where does the vorl hide", 5))


def test_hits_carry_provenance_and_paths_and_count_uses():
    mem = make_memory()
    a = mem.observe("The glarb lives in the northern swamp.", block="semantic", source="g1")
    hits = mem.recall("where does the glarb live", k=3)
    assert hits[0].node_id == a and hits[0].sources == ["g1"] and hits[0].path == [a]
    assert hits[0].block == "semantic" and 0 < hits[0].score <= 1
    assert mem.node(a)["uses"] == 1


def test_recall_edge_cases():
    mem = make_memory()
    assert mem.recall("anything", 5) == []
    mem.observe("a fact about glarbs", block="semantic")
    mem.observe("an episode about glarbs")
    assert mem.recall("glarbs", 0) == []
    assert {h.block for h in mem.recall("glarbs", 5, block="semantic")} == {"semantic"}


def test_learn_false_leaves_memory_untouched():
    mem = make_memory()
    mem.observe_many(["glarb eats carrots", "glarb sleeps at noon", "zorp sings at dawn"])
    before = capture(mem)
    mem.recall("glarb carrots noon", 5, learn=False)
    after = capture(mem)
    assert before.nodes == after.nodes and before.edges == after.edges
    assert before.tally == after.tally


def test_co_recalled_anchors_wire_together():
    mem = make_memory(min_edge_weight=0.99, temporal_weight=0.99, hebbian_min_score=0.2,
                      hebbian_init=0.1, hebbian_rate=0.5)
    a = mem.observe("the glarb eats carrots", block="semantic")
    b = mem.observe("the zorp sleeps at noon", block="semantic")
    assert not mem.graph.has_edge(a, b)
    mem.recall("glarb carrots zorp noon", k=5)
    assert mem.graph.edges[a, b]["kind"] == "hebbian"
    assert mem.edge_weight(a, b) == pytest.approx(0.1)
    mem.recall("glarb carrots zorp noon", k=5)
    assert mem.edge_weight(a, b) == pytest.approx(0.1 + 0.5 * 0.9)
    for _ in range(20):
        mem.recall("glarb carrots zorp noon", k=5)
    assert 0.0 < mem.edge_weight(a, b) <= 1.0
    assert mem.graph.edges[a, b]["solid"]  # strong enough to solidify


def test_traversal_respects_the_product_threshold():
    g = nx.Graph()
    for u, v in [("a", "b"), ("b", "c"), ("c", "d")]:
        g.add_edge(u, v, weight=0.5)
    reached = spread(g.adj, {"a": 1.0}, weight=_w, can_visit=lambda n: True,
                     block_of=lambda n: "semantic", min_product=0.2, max_visited=100)
    assert set(reached) == {"a", "b", "c"}
    assert reached["c"].product == pytest.approx(0.25) and reached["c"].path == ["a", "b", "c"]
    limited = spread(g.adj, {"a": 1.0}, weight=_w, can_visit=lambda n: True,
                     block_of=lambda n: "semantic", min_product=0.0, max_visited=2)
    assert set(limited) == {"a", "b"}


def test_traversal_routes_between_blocks_and_skips_invalid():
    g = nx.Graph()
    g.add_edge("e1", "s1", weight=0.8)
    g.add_edge("e1", "e2", weight=0.8)
    g.add_edge("e2", "x", weight=0.9)
    blocks = {"e1": "episodic", "e2": "episodic", "s1": "semantic", "x": "episodic"}
    reached = spread(g.adj, {"e1": 1.0}, weight=_w, can_visit=lambda n: n != "x",
                     block_of=blocks.get, min_product=0.1, max_visited=10, cross_block=0.5)
    assert reached["e2"].score == pytest.approx(0.8)
    assert reached["s1"].score == pytest.approx(0.4)  # crossing blocks costs the factor
    assert "x" not in reached


def test_recall_reaches_linked_nodes_by_traversal():
    mem = make_memory(min_path_product=0.1)
    a = mem.observe("The glarb guards the bridge.", block="semantic")
    b = mem.observe("Quartz crystals shimmer violet.", block="semantic")
    mem._connect(a, b, 0.9, "link")
    hits = {h.node_id: h for h in mem.recall("who guards the bridge", k=5)}
    assert hits[b].path == [a, b]
    assert hits[b].score == pytest.approx(hits[a].score * 0.9)


def test_strongest_path_prefers_strong_detours():
    g = nx.Graph()
    g.add_edge(1, 2, weight=0.9)
    g.add_edge(2, 3, weight=0.9)
    g.add_edge(1, 3, weight=0.5)
    path, product = strongest_path(g.adj, 1, 3, weight=_w, can_visit=lambda n: True,
                                   max_visited=100)
    assert path == [1, 2, 3] and product == pytest.approx(0.81)
    assert strongest_path(g.adj, 1, 3, weight=_w, can_visit=lambda n: n != 2,
                          max_visited=100)[0] == [1, 3]
    g.add_node(4)
    assert strongest_path(g.adj, 1, 4, weight=_w, can_visit=lambda n: True,
                          max_visited=100) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.floats(0.01, 1.0)),
                min_size=1, max_size=15))
def test_strongest_path_is_the_max_product_path(edges):
    g = nx.Graph()
    g.add_nodes_from(range(7))
    for u, v, w in edges:
        if u != v:
            g.add_edge(u, v, weight=w)
    found = strongest_path(g.adj, 0, 6, weight=_w, can_visit=lambda n: True, max_visited=100)
    products = [math.prod(g.edges[p[i], p[i + 1]]["weight"] for i in range(len(p) - 1))
                for p in nx.all_simple_paths(g, 0, 6)]
    if not products:
        assert found is None
    else:
        assert found is not None and found[1] == pytest.approx(max(products))


def test_connect_finds_the_strongest_path_between_concepts():
    mem = make_memory(min_edge_weight=0.99, temporal_weight=0.99)
    a = mem.observe("The glarb guards the bridge.", block="semantic")
    b = mem.observe("Quartz crystals shimmer violet.", block="semantic")
    c = mem.observe("Violet dragons fear the sea.", block="semantic")
    d = mem.observe("Dragons nest on cliffs.", block="semantic")
    mem._connect(a, b, 0.9, "link")
    mem._connect(b, c, 0.9, "link")
    mem._connect(a, d, 0.3, "link")
    mem._connect(d, c, 0.3, "link")
    hits = mem.connect("glarb guards bridge", "dragons fear the sea")
    assert [h.node_id for h in hits] == [a, b, c]
    assert hits[-1].score == pytest.approx(0.81) and hits[-1].path == [a, b, c]
    assert mem.connect("glarb", "qqqqzzzz") == []
    report = mem.apply([Connect("glarb bridge", "dragons sea"), RecallQuery("quartz")])
    assert [h.node_id for h in report.connections[0][1]] == [a, b, c]
    assert report.recalls[0][1][0].node_id == b


def test_recall_context_merges_connected_hits():
    mem = make_memory(min_edge_weight=0.99, temporal_weight=0.99, hebbian_min_score=1.0)
    a = mem.observe("glarb apple orchard north", block="semantic")
    b = mem.observe("glarb cave swamp south", block="semantic")
    c = mem.observe("glarb tower river east", block="semantic")
    mem._connect(a, b, 0.8, "link")
    items = mem.recall_context("glarb", k=5)
    groups = sorted(it.node_ids for it in items)
    assert groups == [[a, b], [c]]
    merged = next(it for it in items if it.node_ids == [a, b])
    assert merged.text == "glarb apple orchard north glarb cave swamp south" and merged.blocks == ["semantic"]
    assert components(mem.graph.adj, [a, b, c]) == [[a, b], [c]]


def test_to_networkx_is_a_current_copy():
    mem = make_memory(decay_rate=0.1)
    old = mem.observe(CARROTS, block="semantic")
    new = mem.observe(STONES, block="semantic")
    mem.observe("the glarb ate stones on turn one")
    for _ in range(5):
        mem.step()
    g = mem.to_networkx()
    assert old not in g and new in g
    full = mem.to_networkx(valid_only=False)
    assert full.has_edge(new, old)
    u, v = next(iter(g.edges()))
    assert g.edges[u, v]["weight"] == pytest.approx(mem.edge_weight(u, v))
    g.nodes[new]["sources"].append("mutated")
    assert mem.node(new)["sources"] == []  # a copy, not a view


# ---------------------------------------------------------------- input edges (issue 41, item 4)


def _glarb_memory() -> LiquidMemory:
    mem = make_memory()
    mem.observe_many(["glarb eats carrots", "glarb sleeps at noon", "zorp sings at dawn"])
    mem.perceive("the zorp hums a tune")  # working memory holds an item the query could touch
    mem.recall("glarb carrots", 5)  # paths kept for the next step
    return mem


def _same_state(a, b) -> bool:
    return (a.nodes == b.nodes and a.edges == b.edges and a.tally == b.tally
            and a.working == b.working and a.last_paths == b.last_paths
            and a.counters == b.counters)


def test_recall_of_an_unknown_block_is_an_error_like_a_write_of_one():
    mem = _glarb_memory()
    with pytest.raises(MagsError, match="unknown block 'bogus'") as write:
        mem.observe("x", block="bogus")
    with pytest.raises(MagsError, match="unknown block 'bogus'") as read:
        mem.recall("glarb", 5, block="bogus")
    assert type(read.value) is type(write.value)
    with pytest.raises(MagsError, match="unknown block"):
        mem.recall_context("glarb", 5, block="Semantic")
    with pytest.raises(MagsError, match="unknown block"):
        make_memory().recall("glarb", 5, block="bogus")  # even on an empty memory
    assert mem.recall("glarb", 5, block="semantic") == []  # a known block with no hits is fine


@pytest.mark.parametrize("query", ["", "   ", "!!!", "?!... \n\t", "🙂", "—«»—", "\u3002"])
def test_a_query_without_a_letter_or_digit_recalls_nothing_and_learns_nothing(query):
    mem = _glarb_memory()
    before = capture(mem)
    assert mem.recall(query, 5) == []
    assert mem.recall_context(query, 5) == []
    assert mem.connect(query, "glarb carrots") == []
    assert mem.apply([RecallQuery(query), Forget(query)]).recalls == [(query, [])]
    assert _same_state(before, capture(mem))


def test_a_query_with_a_letter_or_digit_in_any_script_is_a_query():
    assert all(has_content(q) for q in ("a", "7", "Zoë", "東京", "٣", "!!x!!"))
    assert not any(has_content(q) for q in ("", " ", "!!!", "🙂", "\u0301"))
    mem = _glarb_memory()
    assert mem.recall("glarb?", 5)[0].text.startswith("glarb")


def test_an_embedding_is_the_query_when_the_text_is_empty():
    mem = _glarb_memory()
    vector = HashingEmbedder().encode(["glarb eats carrots"])[0]
    hits = mem.recall("", 3, query_embedding=vector)
    assert hits and hits[0].text == "glarb eats carrots"


def test_an_unknown_node_id_is_a_mags_error_that_is_also_a_key_error():
    mem = _glarb_memory()
    for call in (mem.node, mem.history, mem.forget, mem.is_valid):
        with pytest.raises(UnknownNodeError) as err:
            call(999)
        assert isinstance(err.value, MagsError) and isinstance(err.value, KeyError)
        assert str(err.value).startswith("no node 999 in memory\n  fix: ")  # not repr()'d
    with pytest.raises(KeyError, match="no node 'x'"):  # old `except KeyError` callers still work
        mem.node("x")  # type: ignore[arg-type]
    assert mem.node(0)["id"] == 0 and 0 in [h.node_id for h in mem.history(0)]
