"""Pure rules of the memory: decay, Hebbian / reward updates, importance, k-core, attention
weights, anchor coverage and consolidation (mags_lib.memory.dynamics, engram, anchors, working)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.memory import LiquidMemory
from mags_lib.memory.anchors import select_anchors
from mags_lib.memory.dynamics import (
    capped_core_numbers,
    check_reward,
    decayed_weight,
    decayed_weights,
    hebbian_update,
    node_importance,
    reward_update,
)
from mags_lib.memory.engram import attention_weights
from mags_lib.memory.state import capture
from mags_lib.memory.working import consolidation_decision, consolidation_score, surprise

weights = st.floats(min_value=1e-6, max_value=1.0)
steps = st.integers(min_value=0, max_value=10_000)


@given(w=weights, used=steps, a=steps, b=steps, c=steps,
       rate=st.floats(0.0, 0.1), h=st.floats(0.5, 100.0))
def test_lazy_decay_composes_exactly(w, used, a, b, c, rate, h):
    t0, t1, t2 = sorted((a, b, c))
    used = min(used, t0)
    direct = decayed_weight(w, t0, used, t2, rate, h)
    stepped = decayed_weight(decayed_weight(w, t0, used, t1, rate, h), t1, used, t2, rate, h)
    assert stepped == pytest.approx(direct, rel=1e-9, abs=1e-300)
    assert 0.0 < direct <= w or (direct == 0.0 and w * math.exp(-rate * t2) < 1e-300)


def test_recently_used_edges_decay_less():
    fresh = decayed_weight(0.5, t=100, used=100, now=110, rate=0.01, h=20.0)
    stale = decayed_weight(0.5, t=100, used=0, now=110, rate=0.01, h=20.0)
    assert stale < fresh < 0.5


def test_solid_edges_do_not_decay():
    assert decayed_weight(0.4, t=0, used=0, now=10_000, rate=0.1, h=5.0, solid=True) == 0.4


@given(st.lists(st.tuples(weights, st.integers(0, 500), st.integers(0, 500), st.booleans()),
                min_size=1, max_size=30), st.integers(0, 2000))
def test_vectorised_decay_matches_scalar(edges, now):
    w = np.array([e[0] for e in edges])
    used = np.array([min(e[1], e[2]) for e in edges])
    t = np.array([max(e[1], e[2]) for e in edges])
    solid = np.array([e[3] for e in edges])
    now = max(now, int(t.max()))
    vec = decayed_weights(w, t, used, now, 0.01, 20.0, solid)
    scalar = [decayed_weight(*args, now, 0.01, 20.0, s) for *args, s in zip(
        w.tolist(), t.tolist(), used.tolist(), solid.tolist(), strict=True)]
    np.testing.assert_allclose(vec, scalar, rtol=1e-12)


@given(w=weights, rate=st.floats(0.0, 1.0))
def test_hebbian_update_is_bounded_and_monotone(w, rate):
    new = hebbian_update(w, rate)
    assert w <= new <= 1.0


@given(w=weights, reward=st.floats(-5.0, 5.0), rate=st.floats(0.0, 1.0))
def test_reward_update_keeps_weights_in_unit_interval(w, reward, rate):
    new = reward_update(w, reward, rate)
    assert 0.0 < new <= 1.0
    if reward > 0:
        assert new >= w
    elif reward < 0:
        assert new <= w


def test_importance_grows_with_use_and_connectivity():
    kw = dict(w_strength=0.3, w_degree=0.1, w_use=0.3, w_core=0.1, w_base=0.2, core_k=3)
    base = node_importance(np.array([0.5]), np.array([1]), np.array([0]), np.array([1]),
                           np.array([0.5]), **kw)
    used = node_importance(np.array([0.5]), np.array([1]), np.array([10]), np.array([1]),
                           np.array([0.5]), **kw)
    hub = node_importance(np.array([5.0]), np.array([20]), np.array([0]), np.array([3]),
                          np.array([0.5]), **kw)
    assert used[0] > base[0] and hub[0] > base[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)),
                                    max_size=120), st.integers(1, 5))
def test_capped_core_numbers_match_networkx(n, pairs, kmax):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u, v) for u, v in pairs if u < n and v < n and u != v)
    rows = np.array([u for u, _ in g.edges()], dtype=np.int64)
    cols = np.array([v for _, v in g.edges()], dtype=np.int64)
    expected = nx.core_number(g)
    got = capped_core_numbers(n, rows, cols, kmax)
    assert got.tolist() == [min(expected[i], kmax) for i in range(n)]


@given(st.lists(st.floats(-1.0, 1.0), max_size=12), st.floats(0.01, 10.0))
def test_attention_weights_in_unit_interval_and_ordered(cos, temperature):
    w = attention_weights(cos, temperature, min_weight=0.05)
    assert w.shape == (len(cos),)
    assert ((w == 0) | ((w >= 0.05) & (w <= 1.0))).all()
    if cos:
        order = np.argsort(-np.asarray(cos), kind="stable")
        assert (np.diff(w[order]) <= 1e-12).all()  # weight follows similarity
        assert w.max() == pytest.approx(max(0.0, max(cos))) or w.max() == 0.0


def test_select_anchors_trades_relevance_for_coverage():
    rel = np.array([1.0, 0.98, 0.97, 0.6])
    sim = np.eye(4)
    sim[0, 1] = sim[1, 0] = sim[0, 2] = sim[2, 0] = sim[1, 2] = sim[2, 1] = 0.99
    assert select_anchors(rel, sim, 2, lam=1.0) == [0, 1]  # plain top-n
    assert select_anchors(rel, sim, 2, lam=0.5) == [0, 3]  # covers the far cluster
    assert select_anchors(rel, sim, 10, lam=0.5) == [0, 3, 1, 2]
    assert select_anchors(np.zeros(0), np.zeros((0, 0)), 3, lam=0.5) == []


def test_consolidation_rule():
    kw = dict(use_weight=0.3, surprise_weight=0.5, importance_weight=0.2, use_saturation=3)
    novel = consolidation_score(0, surprise(0.1), 0.5, **kw)
    known = consolidation_score(0, surprise(0.99), 0.5, **kw)
    used = consolidation_score(5, surprise(0.5), 0.5, **kw)
    assert novel > known and used > known
    assert consolidation_decision(novel, surprise(0.1), threshold=0.45,
                                  redundancy=0.05) == "store"
    assert consolidation_decision(known, surprise(0.99), threshold=0.45,
                                  redundancy=0.05) == "redundant"
    assert consolidation_decision(0.2, 0.3, threshold=0.45, redundancy=0.05) == "drop"
    assert surprise(None) == 1.0 and surprise(-0.5) == 1.0 and surprise(1.2) == 0.0


@pytest.mark.parametrize("reward", [-1, -1.0, -0.25, 0, 0.5, 1, 1.0, np.float32(0.5), np.int64(1)])
def test_check_reward_passes_rewards_in_the_unit_interval(reward):
    assert check_reward(reward) == float(reward) and type(check_reward(reward)) is float
    assert check_reward(None) is None


@pytest.mark.parametrize("reward", [1e6, -2, 1.0000001, -1.5, math.nan, math.inf, -math.inf,
                                    True, "1", np.array([0.5])])
def test_a_reward_outside_the_unit_interval_is_an_error_not_clipped(reward):
    with pytest.raises(MagsError, match=r"reward must be None or a finite number in \[-1, 1\]"):
        check_reward(reward)
    mem = LiquidMemory(embedder=HashingEmbedder(dim=32), clock=lambda: 0.0)
    mem.observe_many(["the glarb eats carrots", "the zorp eats stones"])
    mem.recall("glarb carrots zorp", 5)
    before = capture(mem)
    with pytest.raises(MagsError, match="reward must be"):
        mem.step(reward)
    after = capture(mem)  # nothing happened: no step, no reward on the kept paths
    assert (after.counters, after.edges, after.tally) == (before.counters, before.edges,
                                                          before.tally)
    assert after.last_paths == before.last_paths and mem.step(1.0)["step"] == 1
