"""Would recall's reranker gain from more features, a larger pool or boosted trees? A study.

    python tools/reranker_feature_study.py OUT.json               # pool 50, every feature set
    python tools/reranker_feature_study.py OUT.json --pool 100 --gbm
    python tools/reranker_feature_study.py OUT.json --smoke       # two conversations, small sets

The shipped reranker (`memory/rerank.py`, `FEATURES`) reads a node's score, rank, cosine and
word overlap with the question and its neighbours' scores. This study adds candidate features
computed from the same memory and judges each set the way the shipped one was judged
(`tools/train_recall_reranker.py`): every LoCoMo training conversation's raw turns in a fresh
`LiquidMemory` (`memory.DIALOGUE_MEMORY`, no reranker), the first `--pool` hits of each question
with gold evidence, a one-hidden-layer perceptron (scikit-learn, the shipped hyper-parameters)
fitted on the other four conversations and the training personas (rows weighted
`--persona-weight`), recall@10 of the held-out conversation's evidence; the development personas
judged by the fit on all. The base set reproduces `results/recall_reranker/dev.json`'s pooled
number. Candidate features (each turn's neighbours are the turns before and after it):

    next_cos    cosine of the question to the turn after (the reply that may hold the answer)
    next_ov     idf-weighted share of the question's words in the turn after
    prev_ov     the same for the turn before
    idf_ov      the same for the turn itself (BM25-like, where `overlap` counts words alike)
    win_cos     the largest cosine over the two turns before, the turn and the two after
    spk_named   the turn's speaker is named in the question
    other_named the question names a speaker, and not this turn's
    top10_cos   the turn is among the 10 nearest turns by cosine alone

`--gbm` adds scikit-learn's histogram gradient boosting on the base and on every feature. No
test split is read; nothing is shipped. Studied 2026-12-06 (seventh session, docs/journal.md).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

EXTRA = ("next_cos", "next_ov", "prev_ov", "idf_ov", "win_cos", "spk_named", "other_named",
         "top10_cos")
SETS = {"base": (), "+next_cos": ("next_cos",), "+neighbour overlap": ("next_ov", "prev_ov"),
        "+idf_ov": ("idf_ov",), "+win_cos": ("win_cos",),
        "+speaker": ("spk_named", "other_named"), "+all": EXTRA}


def main() -> None:
    """Parse the arguments, run the study; a `MagsError` (LoCoMo unreadable, no embedder)
    ends it with its cause and fix, without a traceback."""
    from mags_lib.errors import MagsError

    args = arguments()
    try:
        study(args)
    except MagsError as exc:
        raise SystemExit(f"error: {exc}") from None


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON file for the study")
    ap.add_argument("--pool", type=int, default=50)
    ap.add_argument("--train-personas", type=int, default=12)
    ap.add_argument("--dev-personas", type=int, default=6)
    ap.add_argument("--persona-weight", type=float, default=3.0)
    ap.add_argument("--gbm", action="store_true", help="also boosted trees (base and +all)")
    ap.add_argument("--smoke", action="store_true",
                    help="two LoCoMo training conversations, 3 / 2 personas, base and +all")
    return ap.parse_args()


def study(args: argparse.Namespace) -> None:
    """Build the pools, cross-fit every feature set (and learner), print and save the table."""
    from mags_lib.evaluation.conversation_study import study_embedder
    from mags_lib.train.recall_reranker import recall_at_k

    locomo, persona = study_tasks(args)
    embedder = study_embedder("minilm")
    convs = {c.sample_id: pools([c], embedder, args.pool)
             for c in locomo.episodes("train", 2 if args.smoke else None)}
    train = pools(persona.episodes("train", args.train_personas), embedder, args.pool)
    dev = pools(persona.episodes("dev", args.dev_personas), embedder, args.pool)
    every = groups([g for gs in convs.values() for g in gs], [])
    report = {"args": vars(args), "questions": len(every),
              "current_recall@10": float(np.mean(recall_at_k(every, None, 10))),
              "pool_ceiling": float(np.mean(recall_at_k(every, None, 10**9))), "sets": {}}
    sets = {k: SETS[k] for k in ("base", "+all")} if args.smoke else SETS
    learners = ["mlp", "gbm"] if args.gbm else ["mlp"]
    print(f"pool {args.pool}: {len(every)} questions, recall@10 as ranked "
          f"{report['current_recall@10']:.3f}, every evidence turn in the pool "
          f"{report['pool_ceiling']:.3f}")
    print("| features | learner | LoCoMo held out @10 | " + " | ".join(convs)
          + " | dev personas @5 | @10 |")
    print("|---|---|---|" + "---|" * len(convs) + "---|---|")
    for learner in learners:
        for name, extra in sets.items():
            if learner == "gbm" and name not in ("base", "+all"):
                continue
            cols = [EXTRA.index(e) for e in extra]
            r = cross_fit(convs, train, dev, cols, learner, args.persona_weight)
            report["sets"][f"{name} ({learner})"] = r
            print(f"| {name} | {learner} | {r['held_out@10']:.3f} | "
                  + " | ".join(f"{r['by_conversation'][c]:.3f}" for c in convs)
                  + f" | {r['dev_personas@5']:.3f} | {r['dev_personas@10']:.3f} |", flush=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


def study_tasks(args: argparse.Namespace):
    """The LoCoMo and persona tasks of a reranker study (exits naming the fix where LoCoMo is
    not here); `--smoke` shrinks the persona sets to 3 / 2."""
    from mags_lib.tasks.registry import get_task

    locomo, persona = get_task("locomo"), get_task("persona")
    if not locomo.available():
        raise SystemExit(f"LoCoMo is not here: {locomo.missing_message()} "
                         "(set MAGS_LOCOMO or run `make data`)")
    if args.smoke:
        args.train_personas, args.dev_personas = 3, 2
    return locomo, persona


def pools(conversations, embedder, pool: int) -> list[dict]:
    """Per question with evidence: its first `pool` hits' sources, the shipped `FEATURES` and
    the `EXTRA` features, and the gold evidence."""
    from mags_lib.conversations.types import turn_text
    from mags_lib.memory import DIALOGUE_MEMORY, LiquidMemory, MemoryConfig
    from mags_lib.memory.lexical import content_terms
    from mags_lib.memory.rerank import pool_features

    out = []
    for conv in conversations:
        mem = LiquidMemory(config=MemoryConfig.from_dict({**DIALOGUE_MEMORY, "reranker": ""}),
                           embedder=embedder)
        turns = list(conv.turns())
        ids = mem.observe_many([{"text": turn_text(t), "source": t.dia_id,
                                 "block": "episodic"} for t in turns])
        texts = [mem.node(n)["text"] for n in ids]
        at = {n: i for i, n in enumerate(ids)}
        speakers = [t.split(":", 1)[0].strip().lower() for t in texts]
        terms = [set(content_terms(t, stem=True)) for t in texts]
        df: dict[str, int] = {}
        for ts in terms:
            for t in ts:
                df[t] = df.get(t, 0) + 1
        vectors = np.asarray(mem.vectors(ids), dtype=np.float64)  # unit length
        for qa in conv.qa:
            if not qa.evidence:
                continue
            question = qa.asked()
            hits, x = pool_features(mem, question, pool)
            qv = np.asarray(embedder.encode([question])[0], dtype=np.float64)
            cos = vectors @ (qv / max(np.linalg.norm(qv), 1e-12))
            tenth = np.sort(cos)[-min(10, len(cos))]
            qt = set(content_terms(question, stem=True))
            idf = {t: math.log(1 + (len(ids) - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))
                   for t in qt}
            total = sum(idf.values()) or 1.0
            named = {s for s in set(speakers) if s and s in question.lower()}
            q = {"cos": cos, "terms": qt, "idf": idf, "total": total, "named": named,
                 "tenth": tenth}
            extra = [extra_row(at[h.node_id], q, terms, speakers) for h in hits]
            out.append({"conversation": conv.sample_id, "category": qa.category,
                        "evidence": tuple(qa.evidence),
                        "sources": [[str(s) for s in h.sources] for h in hits], "x": x,
                        "extra": np.asarray(extra, dtype=np.float64).reshape(-1, len(EXTRA))})
    return out


def extra_row(i: int, q: dict, terms: list[set], speakers: list[str]) -> list[float]:
    """`EXTRA` for the turn at position `i` of the conversation, for question `q` (its cosine
    to every turn, its stemmed words with their idf, the speakers it names)."""
    n = len(terms)

    def cos(j: int) -> float:
        return float(q["cos"][j]) if 0 <= j < n else 0.0

    def overlap(j: int) -> float:
        if not 0 <= j < n:
            return 0.0
        return sum(q["idf"][t] for t in q["terms"] & terms[j]) / q["total"]

    return [cos(i + 1), overlap(i + 1), overlap(i - 1), overlap(i),
            max(cos(j) for j in range(i - 2, i + 3) if 0 <= j < n),
            float(speakers[i] in q["named"]),
            float(bool(q["named"]) and speakers[i] not in q["named"]),
            float(q["cos"][i] >= q["tenth"])]


def groups(rows: list[dict], cols: list[int]) -> list:
    """`train.recall_reranker.EvidenceGroup`s whose features are the shipped ones plus the
    `EXTRA` columns `cols`."""
    from mags_lib.train.recall_reranker import EvidenceGroup

    return [EvidenceGroup(r["conversation"], r["category"], r["evidence"], r["sources"],
                          np.hstack([r["x"], r["extra"][:, cols]]) if cols else r["x"])
            for r in rows]


class Scorer:
    """A fitted scikit-learn classifier behind the `probabilities(x)` that
    `recall_reranker.recall_at_k` reads (a `Reranker` takes the shipped features only)."""

    def __init__(self, model, mean: np.ndarray | None = None, scale: np.ndarray | None = None):
        self.model, self.mean, self.scale = model, mean, scale

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = x if self.mean is None else (x - self.mean) / self.scale
        return self.model.predict_proba(z)[:, 1]


def fitter(learner: str):
    """`cross_fitted`'s fitter: the shipped reranker's MLP settings (`fit_reranker`), or
    histogram gradient boosting, on features of any width."""
    def fit(train: list, weights: list[float]) -> Scorer:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.neural_network import MLPClassifier

        x = np.concatenate([g.x for g in train])
        y = np.concatenate([g.y for g in train])
        w = np.concatenate([np.full(len(g.y), wt) for g, wt in zip(train, weights,
                                                                    strict=True)])
        if learner == "gbm":
            model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05,
                                                   max_leaf_nodes=15, random_state=0)
            return Scorer(model.fit(x, y, sample_weight=w))
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale < 1e-9] = 1.0
        mlp = MLPClassifier(hidden_layer_sizes=(16,), alpha=1e-3, max_iter=500, random_state=0)
        return Scorer(mlp.fit((x - mean) / scale, y, sample_weight=w), mean, scale)
    return fit


def cross_fit(convs: dict, train: list[dict], dev: list[dict], cols: list[int], learner: str,
              persona_weight: float) -> dict:
    """`recall_reranker.cross_fitted` (leave one conversation out, the training personas always
    in, the development personas by the fit on all) on these features and this learner."""
    from mags_lib.train.recall_reranker import cross_fitted

    result, _ = cross_fitted({n: groups(rows, cols) for n, rows in convs.items()},
                             groups(train, cols), {"dev": groups(dev, cols)},
                             always_weight=persona_weight, fitter=fitter(learner))
    by = result["by_source"]
    return {"held_out@10": result["held_out_pooled"]["reranked_recall@10"],
            "by_conversation": {n: by[n]["reranked_recall@10"] for n in convs},
            "dev_personas@5": by["dev"]["reranked_recall@5"],
            "dev_personas@10": by["dev"]["reranked_recall@10"]}


if __name__ == "__main__":
    main()
