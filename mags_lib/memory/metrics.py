"""Per-step tallies, graph counts and the composite objective J of the memory.

A *step* is one turn: the caller recalls (ask), answers, writes (engram) and then calls
`LiquidMemory.step(reward)`. Every step leaves a `StepTally`; `metrics()` averages the last
`metrics_window` of them:

    J = task_term - objective_lambda * recalls_per_query
                  - objective_mu * engrams_per_turn
                  - objective_nu * churn_per_step

task_term is the mean reward of the steps that had one (0 if none); recalls_per_query the mean
number of recall / connect calls per step (one query per turn); engrams_per_turn the mean number
of writes (added, merged, superseded, forgotten) per step; churn the number of edges added,
removed or explicitly reweighted (Hebbian, reward, solidified) in a step. Passive decay is not
churn: it is applied lazily and changes no stored value.

>>> objective(1.0, 2.0, 1.0, 100.0, lam=0.05, mu=0.05, nu=0.001)
0.75
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx


@dataclass
class StepTally:
    """What happened during one step (turn)."""

    recalls: int = 0
    engrams: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    edges_changed: int = 0
    nodes_removed: int = 0
    reward: float | None = None

    @property
    def churn(self) -> int:
        return self.edges_added + self.edges_removed + self.edges_changed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepTally:
        return cls(**data)


def objective(task_term: float, recalls_per_query: float, engrams_per_turn: float,
              churn: float, *, lam: float, mu: float, nu: float) -> float:
    """J = task_term - lam * recalls_per_query - mu * engrams_per_turn - nu * churn."""
    return task_term - lam * recalls_per_query - mu * engrams_per_turn - nu * churn


def summarise(history: Iterable[StepTally], *, lam: float, mu: float, nu: float) -> dict[str, Any]:
    """Window means of a sequence of step tallies, and J over them."""
    steps = list(history)
    n = max(len(steps), 1)
    rewards = [s.reward for s in steps if s.reward is not None]
    task = sum(rewards) / len(rewards) if rewards else 0.0
    rpq = sum(s.recalls for s in steps) / n
    ept = sum(s.engrams for s in steps) / n
    churn_mean = sum(s.churn for s in steps) / n
    return {
        "window_steps": len(steps),
        "task_term": task,
        "recalls_per_query": rpq,
        "engrams_per_turn": ept,
        "churn": steps[-1].churn if steps else 0,
        "churn_per_step": churn_mean,
        "J": objective(task, rpq, ept, churn_mean, lam=lam, mu=mu, nu=nu),
    }


def graph_counts(graph: nx.Graph) -> dict[str, Any]:
    """Node counts by block and validity, edge counts by kind, solid counts."""
    blocks: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    solid_nodes = 0
    for _, data in graph.nodes(data=True):
        blocks[data["block"]] += 1
        if data["valid_to"] is not None:
            invalid[data["block"]] += 1
        solid_nodes += bool(data["solid"])
    kinds: Counter[str] = Counter()
    solid_edges = 0
    for _, _, data in graph.edges(data=True):
        kinds[data["kind"]] += 1
        solid_edges += bool(data["solid"])
    return {
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "nodes_by_block": dict(sorted(blocks.items())),
        "invalid_by_block": dict(sorted(invalid.items())),
        "edges_by_kind": dict(sorted(kinds.items())),
        "solid_nodes": solid_nodes,
        "solid_edges": solid_edges,
    }
