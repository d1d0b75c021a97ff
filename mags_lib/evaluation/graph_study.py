"""The memory's life over a long game, without the LLM in the way (notebook 05).

Each MAGS variant (the full memory and its ablations, `agents.ABLATIONS`) plays long senseless
games whose rules drift, with `RuleReaderLLM` as the decision maker: a stand-in that reads the
recalled rules perfectly, so a wrong decision is a memory failure, never the 135M model's. After
every turn the graph is measured (`graph_stats`): nodes and edges by kind, valid and superseded
facts, solid edges, churn, mean edge weight, the composite objective J; at decision turns also
whether recall returned the current version of the governing rule (hit) or a superseded one
(stale).

    cfg = GraphStudyConfig(smoke=True)
    study = run_graph_study(cfg)            # study.traces[variant][seed] -> list of per-turn dicts
    study.summary["mags_scripted"]["recall_hit_rate"]

`study.memories[variant]` is that variant's memory after its first seed's game (to draw, query,
save). `snapshot_every` keeps networkx copies of the graph for `mags_lib.widgets.replay`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from statistics import mean, pstdev
from typing import Any

from mags_lib.game import GameConfig


def _default_game() -> GameConfig:
    return GameConfig(episode_length=1000)


@dataclass
class GraphStudyConfig:
    variants: list[str] = field(default_factory=lambda: [
        "mags_scripted", "mags_scripted_no_hebbian", "mags_scripted_no_decay",
        "mags_scripted_flat", "mags_scripted_no_contradiction"],
        metadata={"help": "memory variants by agent name (agents.ABLATIONS): the scripted "
                  "writer (ground-truth rules), so every error is a memory error"})
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2], metadata={
        "help": "game seeds; every variant plays the same games"})
    game: GameConfig = field(default_factory=_default_game, metadata={
        "help": "the senseless game (long: far beyond a small model's context window)"})
    k: int = field(default=3, metadata={"help": "memory lines recalled per decision"})
    embedder: str = field(default="embedded", metadata={
        "help": "'embedded' (all-MiniLM-L6-v2) or 'hashing' (fast fake)"})
    memory: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "MemoryConfig overrides for every variant (ablations add their own)"})
    snapshot_every: int = field(default=100, metadata={
        "help": "keep a copy of the first seed's 'mags_scripted' graph every N turns (0 = never)"})
    smoke: bool = field(default=False, metadata={"help": "shrink sizes (seeds, episode length)"})

    def resolved(self) -> GraphStudyConfig:
        if not self.smoke:
            return self
        return replace(self, seeds=self.seeds[:1],
                       game=replace(self.game, episode_length=min(self.game.episode_length, 150)),
                       snapshot_every=min(self.snapshot_every or 25, 25))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def graph_stats(memory: Any) -> dict[str, Any]:
    """Counts of one LiquidMemory's graph now (pure read)."""
    g = memory.graph
    nodes = g.nodes
    valid = [n for n in nodes if nodes[n]["valid_to"] is None]
    blocks = Counter(nodes[n]["block"] for n in valid)
    kinds = Counter(d.get("kind", "?") for _, _, d in g.edges(data=True))
    weights = [memory.edge_weight(u, v) for u, v in g.edges()]
    m = memory.metrics()
    return {"nodes": g.number_of_nodes(), "valid_nodes": len(valid),
            "superseded_nodes": g.number_of_nodes() - len(valid),
            "episodic": blocks.get("episodic", 0), "semantic": blocks.get("semantic", 0),
            "edges": g.number_of_edges(), "edge_kinds": dict(kinds),
            "solid_edges": sum(bool(d.get("solid")) for _, _, d in g.edges(data=True)),
            "mean_weight": mean(weights) if weights else None,
            "churn": m.get("churn"), "objective": m.get("J")}


@dataclass
class GraphStudy:
    config: GraphStudyConfig
    traces: dict[str, dict[int, list[dict[str, Any]]]]
    changes: dict[int, list[int]]
    snapshots: list[tuple[int, Any]]
    memories: dict[str, Any]
    summary: dict[str, Any]
    seconds: float


def trace_game(variant: str, seed: int, cfg: GraphStudyConfig, embedder: Any,
               snapshots: list | None = None) -> tuple[list[dict[str, Any]], list[int], Any]:
    """One game of `variant`: per-turn graph stats, the turns where a rule changed, and the
    LiquidMemory as the game left it."""
    from mags_lib.agents import make_agent
    from mags_lib.evaluation.records import rule_flags
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game import SenselessGame
    from mags_lib.game.rule_reader import RuleReaderLLM

    env = SenselessGame(replace(cfg.game, seed=seed))
    agent = make_agent(variant, RuleReaderLLM(), k=cfg.k, embedder=embedder,
                       memory=dict(cfg.memory), env=env)
    rows: list[dict[str, Any]] = []

    def on_turn(agent: Any, truth: Any, decision: Any, correct: bool | None) -> None:
        row = {"turn": truth.turn, "kind": truth.kind, **graph_stats(agent.memory)}
        if decision is not None:
            hit, stale = rule_flags([r["text"] for r in decision.recalled], truth.rule_key,
                                    truth.correct_action, truth.old_value)
            row.update(decision=True, correct=bool(correct), hit=hit, stale=stale,
                       answerable=truth.answerable, rule=truth.rule_text,
                       query=truth.gold_queries[0] if truth.gold_queries else None)
        rows.append(row)
        every = cfg.snapshot_every
        if snapshots is not None and every and truth.turn % every == 0:
            snapshots.append((truth.turn, agent.memory.to_networkx(valid_only=False).copy()))

    record = run_game(agent, env, seed, name=variant, on_turn=on_turn)
    return rows, [turn for turn, _ in record.changes], agent.memory


def summarize_trace(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Decision accuracy, recall hit / stale rates and final graph size of one trace."""
    decisions = [r for r in rows if r.get("decision")]
    last = rows[-1] if rows else {}

    def share(key: str) -> float | None:
        return mean(float(r[key]) for r in decisions) if decisions else None

    return {"accuracy": share("correct"), "recall_hit_rate": share("hit"),
            "stale_recall_rate": share("stale"), "decisions": len(decisions),
            "final_nodes": last.get("nodes"), "final_edges": last.get("edges"),
            "final_solid_edges": last.get("solid_edges"),
            "max_nodes": max((r["nodes"] for r in rows), default=None),
            "mean_churn": mean(r["churn"] for r in rows if r.get("churn") is not None)
            if rows else None}


def summarize_variant(per_seed: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-seed summaries and their mean and standard deviation."""
    seeds = {s: summarize_trace(rows) for s, rows in per_seed.items()}
    out: dict[str, Any] = {"per_seed": seeds}
    for key in ("accuracy", "recall_hit_rate", "stale_recall_rate", "final_nodes", "final_edges",
                "mean_churn"):
        values = [v[key] for v in seeds.values() if v[key] is not None]
        out[key] = mean(values) if values else None
        out[f"{key}_std"] = pstdev(values) if len(values) > 1 else 0.0
    return out


def run_graph_study(cfg: GraphStudyConfig, embedder: Any | None = None) -> GraphStudy:
    """Every variant on every seed; see the module docstring."""
    from mags_lib.agents import MemoEmbedder
    from mags_lib.evaluation.runner import _embedder

    t0 = time.perf_counter()
    cfg = cfg.resolved()
    embedder = embedder or MemoEmbedder(_embedder(cfg.embedder))
    traces: dict[str, dict[int, list[dict[str, Any]]]] = {}
    changes: dict[int, list[int]] = {}
    snapshots: list[tuple[int, Any]] = []
    memories: dict[str, Any] = {}
    from mags_lib.progress import progress

    for variant in progress(cfg.variants, "memory variants"):
        traces[variant] = {}
        for i, seed in enumerate(cfg.seeds):
            keep = snapshots if (variant == cfg.variants[0] and i == 0) else None
            rows, changes[seed], memory = trace_game(variant, seed, cfg, embedder, keep)
            traces[variant][seed] = rows
            memories.setdefault(variant, memory)
    summary = {v: summarize_variant(per_seed) for v, per_seed in traces.items()}
    return GraphStudy(cfg, traces, changes, snapshots, memories, summary,
                         round(time.perf_counter() - t0, 2))
