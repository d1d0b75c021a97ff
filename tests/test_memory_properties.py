"""Invariants of LiquidMemory under random sequences of operations (hypothesis state machine):
weights in (0, 1], no dangling edges, solid edges never pruned, superseded facts never returned
as current, rollback and save / load restore the exact state."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from mags_lib.actions.types import EngramAdd, EngramUpdate, Forget, Link, RecallQuery
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.memory import LiquidMemory, MemoryConfig
from mags_lib.memory.state import capture

SUBJECTS = ["glarb", "zorp", "vorl"]
ADJECTIVES = ["purple", "blue", "tiny"]
VERBS = ["eats", "fears", "likes"]
OBJECTS = ["carrots", "stones", "rain", "fire"]

facts = st.builds(lambda a, s, v, o, neg: f"The {a} {s} {'never ' if neg else ''}{v} {o}.",
                  st.sampled_from(ADJECTIVES), st.sampled_from(SUBJECTS),
                  st.sampled_from(VERBS), st.sampled_from(OBJECTS), st.booleans())
episodes = st.builds(lambda n, s, v, o: f"turn {n}: the {s} {v} {o}", st.integers(0, 30),
                     st.sampled_from(SUBJECTS), st.sampled_from(VERBS), st.sampled_from(OBJECTS))
queries = st.builds(lambda s, o: f"what does the {s} do with {o}", st.sampled_from(SUBJECTS),
                    st.sampled_from(OBJECTS))


def state_of(mem: LiquidMemory) -> dict:
    s = capture(mem)
    order = np.argsort(s.ids)
    return {"config": s.config, "counters": s.counters, "keys": s.keys,
            "nodes": sorted(s.nodes, key=lambda d: d["id"]),
            "edges": {frozenset((e["source"], e["target"])): {
                k: v for k, v in e.items() if k not in ("source", "target")} for e in s.edges},
            "working": s.working, "last_paths": s.last_paths, "tally": s.tally,
            "history": s.history, "ids": s.ids[order].tolist(),
            "vectors": s.vectors[order].tobytes()}


def answers(mem: LiquidMemory) -> list:
    return [[(h.node_id, h.score, h.path, h.valid) for h in mem.recall(q, 5, learn=False)]
            for q in ("glarb carrots", "what does the zorp fear", "turn 3")]


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.snapshots: dict[int, tuple[dict, set]] = {}
        self.solid: set[frozenset] = set()

    @initialize(keep_history=st.booleans())
    def create(self, keep_history):
        self.mem = LiquidMemory(
            MemoryConfig().replaced(
                maintenance_every=3, max_nodes=14, decay_rate=0.05, isolated_grace=4,
                inactive_after=8, working_capacity=3, working_ttl=2, solidify_threshold=0.7,
                hebbian_min_score=0.1, hebbian_rate=0.3, max_degree=6, max_snapshots=3,
                keep_history=keep_history),
            embedder=HashingEmbedder(dim=64), clock=lambda: 0.0)

    @rule(text=facts, key=st.none() | st.sampled_from(["k1", "k2"]))
    def observe_fact(self, text, key):
        self.mem.observe(text, block="semantic", key=key, source="test")

    @rule(texts=st.lists(st.one_of(facts, episodes), min_size=1, max_size=5))
    def observe_many(self, texts):
        self.mem.observe_many([{"text": t, "block": "episodic" if t.startswith("turn")
                                else "semantic"} for t in texts])

    @rule(text=episodes)
    def perceive(self, text):
        self.mem.perceive(text, importance=0.6)

    @rule(query=queries)
    def recall(self, query):
        for hit in self.mem.recall(query, k=5):
            assert hit.valid and self.mem.is_valid(hit.node_id)
            assert hit.path[-1] == hit.node_id

    @rule(query=queries)
    def recall_history(self, query):
        for hit in self.mem.recall(query, k=5, include_invalid=True):
            assert hit.valid == self.mem.is_valid(hit.node_id)

    @rule(reward=st.none() | st.floats(-1.0, 1.0))
    def step(self, reward):
        self.mem.step(reward)

    @rule(reward=st.floats(allow_nan=True).filter(lambda r: not -1.0 <= r <= 1.0))
    def step_with_a_bad_reward(self, reward):
        before = state_of(self.mem)
        with pytest.raises(MagsError):
            self.mem.step(reward)
        assert state_of(self.mem) == before

    @rule(query=st.text(st.characters(categories=["P", "S", "Z", "Cc"]), max_size=6),
          other=queries)
    def recall_without_content(self, query, other):
        before = state_of(self.mem)
        assert self.mem.recall(query, k=5) == [] and self.mem.recall_context(query, 5) == []
        assert self.mem.connect(query, other) == []
        assert state_of(self.mem) == before

    @rule(text=facts, other=facts, kind=st.integers(0, 3))
    def apply(self, text, other, kind):
        action = [EngramAdd("semantic", text), EngramUpdate("semantic", text),
                  Forget(text), Link(text, other)][kind]
        self.mem.apply([action, RecallQuery(other)])

    @rule()
    def snapshot(self):
        self.snapshots[self.mem.snapshot()] = (state_of(self.mem), set(self.solid))

    @precondition(lambda self: self.snapshots)
    @rule(data=st.data())
    def rollback(self, data):
        kept = sorted(set(self.snapshots) & set(self.mem._snapshots))
        if not kept:
            return
        snap = data.draw(st.sampled_from(kept))
        self.mem.rollback(snap)
        expected, solid = self.snapshots[snap]
        assert state_of(self.mem) == expected
        self.solid = set(solid)

    @rule()
    def save_and_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.mem.save(f"{tmp}/mem")
            loaded = LiquidMemory.load(f"{tmp}/mem", embedder=HashingEmbedder(dim=64))
        assert state_of(loaded) == state_of(self.mem)
        assert answers(loaded) == answers(self.mem)

    @invariant()
    def weights_in_unit_interval_and_no_dangling_edges(self):
        mem = self.mem
        for u, v, d in mem.graph.edges(data=True):
            assert u in mem.graph and v in mem.graph and u != v
            assert 0.0 < d["weight"] <= 1.0 and 0.0 < mem.edge_weight(u, v) <= 1.0
        nodes = set(mem.graph)
        if mem.index is not None:
            assert set(mem.index.ids().tolist()) == nodes
        assert len(mem.lexical) == len(nodes)
        assert all(n in nodes for n in mem._keys.values())

    @invariant()
    def solid_edges_are_never_pruned(self):
        graph = self.mem.graph
        for pair in self.solid:
            u, v = tuple(pair)
            assert graph.has_edge(u, v) and graph.edges[u, v]["solid"]
        self.solid |= {frozenset((u, v)) for u, v, d in graph.edges(data=True) if d["solid"]}

    @invariant()
    def superseded_facts_are_invalid(self):
        for _, d in self.mem.graph.nodes(data=True):
            if d["superseded_by"] is not None:
                assert d["valid_to"] is not None


MemoryMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_memory_machine = MemoryMachine.TestCase
