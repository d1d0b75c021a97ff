"""Dynamics over turns: reward, decay and pruning, solidification, k-core and capacity,
working-memory consolidation and metrics (mags_lib.memory.maintenance, consolidation)."""

from __future__ import annotations

import pytest

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.memory import LiquidMemory, MemoryConfig


def make_memory(**overrides) -> LiquidMemory:
    return LiquidMemory(MemoryConfig.from_dict(overrides), embedder=HashingEmbedder(),
                        clock=lambda: 1000.0)


def test_unused_edges_decay_then_get_pruned_then_isolated_nodes_die():
    mem = make_memory(decay_rate=0.1, maintenance_every=10, isolated_grace=30)
    a = mem.observe("the glarb crossed the red bridge")
    b = mem.observe("the glarb crossed the blue bridge")
    w0 = mem.edge_weight(a, b)
    assert w0 > 0.5
    weights = []
    for _ in range(150):
        mem.step()
        weights.append(mem.edge_weight(a, b))
        if not mem.graph.has_edge(a, b):
            break
    assert all(x > y for x, y in zip(weights, weights[1:], strict=False) if y > 0)
    assert not mem.graph.has_edge(a, b)  # pruned below prune_threshold
    for _ in range(40):
        mem.step()
    assert a not in mem and b not in mem and len(mem) == 0


def test_used_edges_survive_decay():
    mem = make_memory(decay_rate=0.05, maintenance_every=10)
    a = mem.observe("the glarb crossed the red bridge")
    b = mem.observe("the glarb crossed the blue bridge")
    mem._connect(a, b, 0.8, "link")
    for _ in range(100):
        mem._touch_edge(a, b)
        mem.step()
    assert mem.edge_weight(a, b) > 0.5


def test_solid_edges_are_never_pruned_and_protect_their_nodes():
    mem = make_memory(decay_rate=0.5, maintenance_every=5, isolated_grace=1,
                      inactive_after=1)
    a = mem.observe("glarb one")
    b = mem.observe("zorp two")
    c = mem.observe("vorl three")
    mem._connect(a, b, 0.5, "link", solid=True)
    weight = mem.edge_weight(a, b)
    for _ in range(50):
        mem.step()
    assert mem.graph.has_edge(a, b) and mem.edge_weight(a, b) == weight
    assert c not in mem and a in mem and b in mem


def test_strong_edges_solidify():
    mem = make_memory(maintenance_every=1, solidify_threshold=0.9)
    a = mem.observe("glarb one")
    b = mem.observe("zorp two")
    mem._connect(a, b, 0.95, "link")
    assert mem.graph.edges[a, b]["solid"]


def test_reward_reinforces_recalled_paths():
    mem = make_memory(reward_rate=0.5, min_edge_weight=0.99, temporal_weight=0.99,
                      decay_rate=0.0)
    a = mem.observe("The glarb guards the bridge.", block="semantic")
    b = mem.observe("Quartz crystals shimmer violet.", block="semantic")
    mem._connect(a, b, 0.5, "link")
    hits = mem.recall("who guards the bridge", k=5)
    assert any(h.path == [a, b] for h in hits)
    mem.step(reward=1.0)
    assert mem.edge_weight(a, b) == pytest.approx(0.75)
    mem.recall("who guards the bridge", k=5)
    mem.step(reward=-1.0)
    assert mem.edge_weight(a, b) == pytest.approx(0.375)
    mem.step(reward=1.0)  # no recall since the last step: nothing to reward
    assert mem.edge_weight(a, b) == pytest.approx(0.375)
    with pytest.raises(MagsError):
        mem.step(reward=float("nan"))


def test_k_core_members_survive_inactivity():
    mem = make_memory(decay_rate=0.0, maintenance_every=5, inactive_after=10,
                      min_edge_weight=0.99, temporal_weight=0.99, core_keep_k=3)
    clique = mem.observe_many([f"clique node {w}" for w in ("alpha", "beta", "gamma", "delta")],
                              )
    pendant = mem.observe("a lonely pendant", block="semantic")
    for i, u in enumerate(clique):
        for v in clique[i + 1:]:
            mem._connect(u, v, 0.5, "link")
    mem._connect(pendant, clique[0], 0.5, "link")
    for _ in range(20):
        mem.step()
    assert all(n in mem for n in clique) and pendant not in mem
    assert mem.node(clique[0])["importance"] > 0


def test_overcrowded_nodes_lose_their_weakest_edges():
    mem = make_memory(max_degree=2, maintenance_every=1, min_edge_weight=0.99,
                      temporal_weight=0.99, decay_rate=0.0)
    hub = mem.observe("hub", block="semantic")
    spokes = [mem.observe(f"spoke {w}", block="semantic") for w in ("aa", "bb", "cc", "dd")]
    for spoke, w in zip(spokes, (0.2, 0.4, 0.6, 0.8), strict=True):
        mem._connect(hub, spoke, w, "link")
    mem.step()
    assert sorted(mem.graph.adj[hub]) == spokes[2:]


def test_graph_stays_bounded_over_a_long_stream():
    mem = make_memory(max_nodes=200, maintenance_every=20, working_capacity=4)
    sizes = []
    for turn in range(3000):
        mem.observe(f"turn {turn}: the player met creature {turn % 97} in room {turn % 31} "
                    f"holding item {turn}", source=f"turn{turn}")
        if turn % 10 == 0:
            mem.recall(f"creature {turn % 97}", k=5)
        if turn % 50 == 0:
            mem.observe(f"Rule {turn % 7}: creature {turn % 97} fears item {turn}",
                        block="semantic")
        mem.step(reward=1.0 if turn % 3 == 0 else None)
        sizes.append(len(mem))
    assert max(sizes) <= 200
    assert min(sizes[500:]) >= 150  # capacity evicts down to the headroom, not to zero
    for u, v, d in mem.graph.edges(data=True):
        assert 0.0 < d["weight"] <= 1.0 and u in mem and v in mem


def test_working_memory_consolidation():
    mem = make_memory(working_capacity=3, working_ttl=2, consolidate_threshold=0.45)
    stored = mem.observe("alpha beta gamma delta epsilon zeta eta theta iota kappa")
    mem.perceive("a surprising brand new observation about vorls", importance=0.5)
    mem.perceive("alpha beta gamma delta epsilon zeta eta theta iota kappa")  # redundant
    mem.perceive("alpha beta gamma delta epsilon zeta eta xx yy zz", importance=0.0)  # dull
    assert mem.working.texts()[0].startswith("a surprising") and len(mem.working) == 3
    mem.step()
    assert len(mem) == 1
    mem.step()  # items are now working_ttl old: consolidated
    assert len(mem.working) == 0
    texts = {mem.node(n)["text"] for n in mem.graph}
    assert "a surprising brand new observation about vorls" in texts
    assert not any(t.endswith("zz") for t in texts) and len(mem) == 2
    assert mem.node(stored)["uses"] == 1  # the redundant repeat counted as a use


def test_working_memory_overflow_and_recall_uses():
    mem = make_memory(working_capacity=2, consolidate_threshold=0.3, working_use_cosine=0.5)
    mem.observe("something already known about glarbs")
    mem.perceive("the zorp sang at dawn near the river", importance=0.0)
    mem.recall("zorp sang at dawn", k=3)
    assert mem.working.items[0].uses == 1
    mem.perceive("second turn text")
    written = mem.perceive("third turn text pushes the first out")
    assert len(written) == 1 and mem.node(written[0])["text"].startswith("the zorp sang")
    assert mem.consolidate(flush=True) and len(mem.working) == 0


def test_metrics_report_counts_rates_and_objective():
    mem = make_memory(objective_lambda=0.1, objective_mu=0.2, objective_nu=0.01)
    mem.observe("fact one about glarbs", block="semantic")
    mem.observe("an episode with zorps")
    mem.recall("glarbs", 3)
    mem.step(reward=1.0)
    mem.step(reward=0.0)
    m = mem.metrics()
    assert m["nodes"] == 2 and m["nodes_by_block"] == {"episodic": 1, "semantic": 1}
    assert m["recalls_per_query"] == 0.5 and m["engrams_per_turn"] == 1.0
    assert m["task_term"] == 0.5 and m["step"] == 2
    expected = 0.5 - 0.1 * 0.5 - 0.2 * 1.0 - 0.01 * m["churn_per_step"]
    assert m["J"] == pytest.approx(expected)
    assert sum(m["edges_by_kind"].values()) == m["edges"]
