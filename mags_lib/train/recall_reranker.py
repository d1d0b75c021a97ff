"""Train and judge recall's learned reranker (`memory/rerank.py`) on conversations with gold
evidence: which of the first `pool` ranked turns does a question rest on?

    groups = {"locomo": evidence_groups(locomo_convs, embedder),
              "persona": evidence_groups(persona_convs, embedder)}
    reranker = fit_reranker(groups["locomo"] + groups["persona"], weights=[1.0] * .. + [3.0] * ..)
    recall_at_k(groups["locomo"], reranker)          # share of evidence in the top 10
    study, final = cross_fitted(locomo_by_conversation, persona_train, {"dev": persona_dev})

Every turn is written verbatim into a fresh `LiquidMemory` (`memory.DIALOGUE_MEMORY`, episodic,
source = its turn id), as `evaluation.evidence_recall` does; a question's rows are the features
of its first `pool` hits and whether each hit's sources hold an evidence id. The reranker is a
one-hidden-layer perceptron fitted by scikit-learn (`MLPClassifier`, L2 `alpha`), exported to
NumPy weights: no scikit-learn at recall time, no pickle on disk. Judged the way it would be
used: leave one conversation out (`cross_fitted`), never on the questions it was fitted on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mags_lib.memory.rerank import FEATURES, Reranker


@dataclass
class EvidenceGroup:
    """One question: the features of its pool, the sources of each hit, the gold evidence."""

    conversation: str
    category: int
    evidence: tuple[str, ...]
    sources: list[list[str]]
    x: np.ndarray
    y: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        gold = set(self.evidence)
        self.y = np.array([int(bool(gold & set(s))) for s in self.sources], dtype=np.int64)


def evidence_groups(conversations: Sequence[Any], embedder: Any, pool: int = 50,
                    config: dict[str, Any] | None = None,
                    dated: bool = False) -> list[EvidenceGroup]:
    """One `EvidenceGroup` per question with evidence of every conversation. `dated`: each turn
    written as the agents read it, its session's day first ("[8 May 2023] Ana: ...",
    `Dialogue.stream`), not as `evaluation.evidence_recall` writes it (no day)."""
    from mags_lib.conversations.types import turn_text
    from mags_lib.memory import DIALOGUE_MEMORY, LiquidMemory, MemoryConfig
    from mags_lib.memory.rerank import pool_features

    settings = {**DIALOGUE_MEMORY, **(config or {}), "reranker": ""}
    out = []
    for conv in conversations:
        mem = LiquidMemory(config=MemoryConfig.from_dict(settings), embedder=embedder)
        mem.observe_many([{"text": turn_text(t, dated=dated), "source": t.dia_id,
                           "block": "episodic"}
                          for t in conv.turns()])
        for qa in conv.qa:
            if not qa.evidence:
                continue
            hits, x = pool_features(mem, qa.asked(), pool)
            out.append(EvidenceGroup(conv.sample_id, qa.category, tuple(qa.evidence),
                                     [[str(s) for s in h.sources] for h in hits], x))
    return out


def fit_reranker(groups: Sequence[EvidenceGroup], weights: Sequence[float] | None = None, *,
                 hidden: int = 16, alpha: float = 1e-3, seed: int = 0,
                 meta: dict[str, Any] | None = None) -> Reranker:
    """A `Reranker` fitted on every row of `groups` (`weights`: one per group, for its rows)."""
    from sklearn.neural_network import MLPClassifier

    groups = [g for g in groups if len(g.y)]
    x = np.concatenate([g.x for g in groups])
    y = np.concatenate([g.y for g in groups])
    if len(set(y.tolist())) < 2:
        raise ValueError("the rows hold one class only: no evidence among the pools, or only "
                         "evidence; give questions whose evidence is sometimes ranked")
    w = np.concatenate([np.full(len(g.y), 1.0 if weights is None else float(wt))
                        for g, wt in zip(groups, weights if weights is not None
                                         else [1.0] * len(groups), strict=True)])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    mlp = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=alpha, max_iter=500,
                        random_state=seed)
    mlp.fit((x - mean) / scale, y, sample_weight=w)
    return Reranker(mean, scale, mlp.coefs_[0].T, mlp.intercepts_[0], mlp.coefs_[1][:, 0],
                    float(mlp.intercepts_[1][0]),
                    {"hidden": hidden, "alpha": alpha, "seed": seed, "rows": int(len(y)),
                     "positives": int(y.sum()), "features": list(FEATURES), **(meta or {})})


def recall_at_k(groups: Sequence[EvidenceGroup], reranker: Any = None,
                k: int = 10) -> list[float]:
    """Per question, the share of its evidence among the sources of the top k hits: the pool's
    own order, or the reranker's (best first, ties by pool order)."""
    out = []
    for g in groups:
        order = (np.arange(len(g.y)) if reranker is None or not len(g.y)
                 else np.argsort(-reranker.probabilities(g.x), kind="stable"))
        found = {s for i in order[:k] for s in g.sources[i]}
        out.append(len(found & set(g.evidence)) / len(set(g.evidence)))
    return out


def cross_fitted(held_out: dict[str, list[EvidenceGroup]], always: list[EvidenceGroup],
                 judged: dict[str, list[EvidenceGroup]], *, always_weight: float = 3.0,
                 ks: Sequence[int] = (5, 10), on_fold: Any = None, fitter: Any = None,
                 **fit: Any) -> tuple[dict[str, Any], Reranker]:
    """Leave one conversation out: for each of `held_out` (name -> its questions), a reranker
    fitted on the others and `always` (rows weighted `always_weight`) judges it; `judged`
    (name -> questions never fitted on) is judged by the reranker fitted on all of `held_out`
    and `always`, which is returned beside the study (the one to ship). recall@k per question,
    before ('current') and after ('reranked'). `on_fold(name, reranker)`, where given, receives
    each held-out conversation's reranker (one that never saw it), so that a later check on that
    conversation can read it out of sample. `fitter(groups, weights, **fit)` replaces
    `fit_reranker` for a study of other features or learners (anything with
    `probabilities(x)`; `tools/reranker_feature_study.py`)."""
    def fitted(names: list[str]) -> Reranker:
        train = [g for n in names for g in held_out[n]] + list(always)
        weights = [1.0] * (len(train) - len(always)) + [always_weight] * len(always)
        return (fitter or fit_reranker)(train, weights, **fit)

    rows: dict[str, dict[str, Any]] = {}
    for name in held_out:
        model = fitted([n for n in held_out if n != name])
        rows[name] = _judge(held_out[name], model, ks)
        if on_fold is not None:
            on_fold(name, model)
    model = fitted(list(held_out))
    for name, groups in judged.items():
        rows[name] = _judge(groups, model, ks)
    pooled = [g for n in held_out for g in held_out[n]]
    summary = {"questions": len(pooled)}
    for k in ks:
        for which in ("current", "reranked"):
            values = [v for n in held_out for v in rows[n][f"{which}_recall@{k}"]]
            summary[f"{which}_recall@{k}"] = float(np.mean(values)) if values else float("nan")
    return {"by_source": {n: {"questions": r["questions"]} | {
                key: float(np.mean(v)) if v else float("nan")
                for key, v in r.items() if "recall@" in key} for n, r in rows.items()},
            "held_out_pooled": summary, "per_question": rows, "always_weight": always_weight,
            "fit": {k: v for k, v in fit.items() if k != "meta"}}, model


def _judge(groups: list[EvidenceGroup], model: Reranker, ks: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(groups), "conversation": [g.conversation for g in groups],
                           "category": [g.category for g in groups]}
    for k in ks:
        out[f"current_recall@{k}"] = recall_at_k(groups, None, k)
        out[f"reranked_recall@{k}"] = recall_at_k(groups, model, k)
    return out
