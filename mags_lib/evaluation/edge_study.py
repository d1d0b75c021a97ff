"""Initial edges: the learned attention scorer against the similarity rule (notebook 09).

1. `collect_edge_examples`: the scripted writer (**upper bound, game structure given**) plays
   *training* seeds of a regime with a `RecordingEdgeScorer` (edges by the similarity rule, every
   candidate pool recorded). A decision needs a set of facts: the governing rule's current
   version and, when it names a creature by its alias, the alias statement (read from the
   game's ground truth: supervision for training, never shown to an agent). A candidate edge
   (new node, candidate) is labelled 1 when a later decision needed both nodes, else 0.
2. `mags_lib.train.edge_scorer.fit_edge_scorer` fits `AttentionEdgeScorer` on those examples.
3. `compare_edge_scorers`: the same agent with the learned scorer and with the similarity rule
   play *held-out* seeds of each regime, paired by decision (`mechanisms.paired_effect`,
   effect = learned minus similarity).

    examples, stats = collect_edge_examples("multi_hop", seeds=[100, 101, 102])
    params, report = fit_edge_scorer(examples)
    rows = compare_edge_scorers(AttentionEdgeScorer(params), ["multi_hop", "present"], [0, 1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _node_of(memory: Any, text: str) -> int | None:
    for node, data in memory.graph.nodes(data=True):
        if data["valid_to"] is None and data["text"] == text:
            return node
    return None


def collect_edge_examples(regime: str, seeds: list[int], *, embedder: Any | None = None,
                          k: int = 3, smoke: bool = False
                          ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Examples (arrays `new`, `cand`, `features`, `label`) from training games; see the module
    docstring. Returns them and counts (games, decisions, decisions needing two facts)."""
    from mags_lib.agents import MemoEmbedder
    from mags_lib.evaluation.mechanisms import warm_embedder
    from mags_lib.evaluation.regimes import regime_game
    from mags_lib.evaluation.runner import _embedder

    embedder = embedder or MemoEmbedder(_embedder("embedded"))
    new, cand, feats, label = [], [], [], []
    stats = {"games": 0, "decisions": 0, "two_fact_decisions": 0}
    for seed in seeds:
        game = regime_game(regime, seed, smoke=smoke)
        warm_embedder(embedder, game)
        records, needed = _record_game(regime, game, embedder, k, stats)
        stats["games"] += 1
        for new_id, ids, features, vec, vecs in records:
            for j, other in enumerate(ids):
                new.append(vec)
                cand.append(vecs[j])
                feats.append(features[j])
                label.append(float((min(new_id, other), max(new_id, other)) in needed))
    dim = getattr(embedder, "dim", 0)
    examples = {"new": np.asarray(new, dtype=np.float32).reshape(-1, dim),
                "cand": np.asarray(cand, dtype=np.float32).reshape(-1, dim),
                "features": np.asarray(feats, dtype=np.float32).reshape(len(label), -1),
                "label": np.asarray(label, dtype=np.float32)}
    stats.update(examples=len(label), positives=int(sum(label)))
    return examples, stats


def _record_game(regime: str, game: Any, embedder: Any, k: int, stats: dict[str, int]
                 ) -> tuple[list[Any], set[tuple[int, int]]]:
    """One training game: the recorded candidate pools and the node pairs decisions needed."""
    from mags_lib.agents import make_agent
    from mags_lib.evaluation.regimes import regime_memory
    from mags_lib.evaluation.runner import run_game
    from mags_lib.game import SenselessGame
    from mags_lib.game.rule_reader import RuleReaderLLM
    from mags_lib.game.senseless import DECIDE_PATTERN
    from mags_lib.memory.edge_scorer import RecordingEdgeScorer

    env = SenselessGame(game)
    recorder = RecordingEdgeScorer()
    agent = make_agent("mags_scripted", RuleReaderLLM(), k=k, env=env, embedder=embedder,
                       memory=regime_memory(regime), edge_scorer=recorder)
    needed: set[tuple[int, int]] = set()

    def on_turn(agent: Any, truth: Any, decision: Any, correct: bool | None) -> None:
        if decision is None or truth is None or not truth.rule_text:
            return
        stats["decisions"] += 1
        facts = [_node_of(agent.memory, truth.rule_text)]
        asked = DECIDE_PATTERN.search(env.episode.observations[truth.turn].text)
        creature = truth.rule_key.split("|")[0]
        world = env.episode.world
        if creature in world.aliases and asked and asked["creature"] != creature:
            facts.append(_node_of(agent.memory, world.alias_text(creature)))
        facts = [f for f in facts if f is not None]
        if len(facts) == 2:
            stats["two_fact_decisions"] += 1
            needed.add((min(facts), max(facts)))

    run_game(agent, env, game.seed, name="mags_scripted", on_turn=on_turn)
    return recorder.records, needed


def compare_edge_scorers(scorer: Any, regimes: list[str], seeds: list[int], *,
                         embedder: Any | None = None, k: int = 3,
                         smoke: bool = False) -> list[dict[str, Any]]:
    """Per regime: the scripted agent with `scorer` minus with the similarity rule, paired by
    decision on the same held-out episodes (`mechanisms.paired_effect` fields)."""
    from mags_lib.agents import MemoEmbedder, make_agent
    from mags_lib.evaluation.mechanisms import paired_effect, warm_embedder
    from mags_lib.evaluation.regimes import regime_game, regime_memory
    from mags_lib.evaluation.runner import _embedder, run_game
    from mags_lib.game import SenselessGame
    from mags_lib.game.rule_reader import RuleReaderLLM

    embedder = embedder or MemoEmbedder(_embedder("embedded"))
    rows = []
    for regime in regimes:
        played: dict[str, dict[int, list[list[int]]]] = {"learned": {}, "similarity": {}}
        edges: dict[str, list[int]] = {"learned": [], "similarity": []}
        for seed in seeds:
            game = regime_game(regime, seed, smoke=smoke)
            warm_embedder(embedder, game)
            for name, chosen in (("learned", scorer), ("similarity", None)):
                env = SenselessGame(game)
                agent = make_agent("mags_scripted", RuleReaderLLM(), k=k, env=env,
                                   embedder=embedder, memory=regime_memory(regime),
                                   edge_scorer=chosen)
                record = run_game(agent, env, seed, name=f"mags_scripted+{name}")
                played[name][seed] = [[d["turn"], int(d["correct"])] for d in record.decisions]
                edges[name].append(agent.memory.graph.number_of_edges())
        row = paired_effect(played["learned"], played["similarity"])
        row.update(regime=regime, learned_edges=float(np.mean(edges["learned"])),
                   similarity_edges=float(np.mean(edges["similarity"])))
        rows.append(row)
    return rows


def classify_report(scorer: Any, examples: dict[str, np.ndarray]) -> dict[str, Any]:
    """How well the learned scorer and the cosine alone rank held-out candidate edges by
    whether they were needed (ROC AUC), and the learned scorer's precision / recall at 0.5."""
    from sklearn.metrics import roc_auc_score

    y = examples["label"]
    if len(y) == 0 or y.min() == y.max():
        return {"examples": int(len(y)), "positives": int(y.sum()) if len(y) else 0}
    logits = np.concatenate([scorer.logits(n, c[None, :], f[None, :])
                             for n, c, f in zip(examples["new"], examples["cand"],
                                                examples["features"], strict=True)])
    pred = logits > 0
    tp = int((pred & (y == 1)).sum())
    return {"examples": int(len(y)), "positives": int(y.sum()),
            "auc_learned": float(roc_auc_score(y, logits)),
            "auc_cosine": float(roc_auc_score(y, examples["features"][:, 0])),
            "precision": tp / max(1, int(pred.sum())), "recall": tp / int(y.sum())}
