"""Would a cross-encoder trained here lift recall's evidence ranking on LoCoMo? A study.

    python tools/cross_encoder_study.py OUT.json             # the five training conversations
    python tools/cross_encoder_study.py OUT.json --smoke     # two conversations, tiny training

The shipped reranker (`memory/rerank.py`) scores a turn from shallow features (the rule's
score, cosine, word overlap, its neighbours' scores); richer shallow features added nothing
(`tools/reranker_feature_study.py`, 2026-12-06). What it lacks is the meaning of the question
against the turn's words, read together: a cross-encoder. None ships offline, so this study
trains one here from the embedded all-MiniLM-L6-v2's weights (a new one-logit head;
sentence-transformers' `CrossEncoderTrainer`, binary cross-entropy) on (question, turn) pairs:
each question's evidence turns against `--negatives` turns drawn from its pool of `--pool`
hits, as ranked by `memory.DIALOGUE_MEMORY` without a reranker.

Judged as the shipped reranker was judged, leaving one LoCoMo training conversation out: a
cross-encoder trained on the other four scores the held-out one's pools, and recall@10 of its
evidence is read (1) ranked by the cross-encoder alone and (2) by the shipped reranker's
perceptron on `FEATURES` plus three cross-encoder columns (the turn's score, the turn before's,
the turn after's), cross-fitted by conversation with the training personas always in
(`train.recall_reranker.cross_fitted`). Every conversation's cross-encoder columns come from the
cross-encoder that never saw it (stacking on out-of-fold scores), and the personas' from one
trained on LoCoMo alone, so no column is read in sample. The development personas are scored by
the cross-encoder trained on all five conversations. No test split is read; nothing is shipped.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np


def main() -> None:
    """Parse the arguments, run the study; a `MagsError` ends it with its cause and fix."""
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
    ap.add_argument("--negatives", type=int, default=8,
                    help="turns drawn from a question's pool as its negatives")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--train-personas", type=int, default=12)
    ap.add_argument("--dev-personas", type=int, default=6)
    ap.add_argument("--persona-weight", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true",
                    help="two LoCoMo training conversations, 3 / 2 personas, 64 pairs a fold")
    return ap.parse_args()


def study(args: argparse.Namespace) -> None:
    """Build the pools, train a cross-encoder per fold, score, judge both rankings."""
    from mags_lib.evaluation.conversation_study import study_embedder
    from mags_lib.train.recall_reranker import recall_at_k

    sys_path_tools()
    from reranker_feature_study import study_tasks

    locomo, persona = study_tasks(args)
    t0 = time.perf_counter()
    embedder = study_embedder("minilm")
    convs = {c.sample_id: pools(c, embedder, args.pool)
             for c in locomo.episodes("train", 2 if args.smoke else None)}
    train_p = [q for c in persona.episodes("train", args.train_personas)
               for q in pools(c, embedder, args.pool)]
    dev_p = [q for c in persona.episodes("dev", args.dev_personas)
             for q in pools(c, embedder, args.pool)]
    print(f"pools built: {sum(map(len, convs.values()))} LoCoMo questions, "
          f"{len(train_p)} / {len(dev_p)} persona questions "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    report: dict = {"args": vars(args), "folds": {}}
    for name in convs:
        t = time.perf_counter()
        model = train_cross_encoder([q for n, qs in convs.items() if n != name for q in qs], args)
        for q in convs[name]:
            q["ce"] = ce_columns(model, q, args.batch)
        report["folds"][name] = {"seconds": round(time.perf_counter() - t, 1)}
        print(f"fold {name}: {report['folds'][name]['seconds']} s", flush=True)
    t = time.perf_counter()
    model = train_cross_encoder([q for qs in convs.values() for q in qs], args)
    for q in (*train_p, *dev_p):
        q["ce"] = ce_columns(model, q, args.batch)
    report["all_fit_seconds"] = round(time.perf_counter() - t, 1)
    every = [q for qs in convs.values() for q in qs]
    plain = groups(every, False)
    report["questions"] = len(every)
    report["current_recall@10"] = float(np.mean(recall_at_k(plain, None, 10)))
    report["ce_alone_recall@10"] = float(np.mean(recall_at_k(groups(every, True, only_ce=True),
                                                             _First(), 10)))
    report["ce_alone_by_conversation@10"] = {
        n: float(np.mean(recall_at_k(groups(qs, True, only_ce=True), _First(), 10)))
        for n, qs in convs.items()}
    report["ce_alone_dev_personas@5"] = float(np.mean(recall_at_k(
        groups(dev_p, True, only_ce=True), _First(), 5)))
    for label, with_ce in (("mlp", False), ("mlp+ce", True)):
        report[label] = cross_fit(convs, train_p, dev_p, with_ce, args.persona_weight)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"LoCoMo training conversations, held out: recall@10 as ranked "
          f"{report['current_recall@10']:.3f}; cross-encoder alone "
          f"{report['ce_alone_recall@10']:.3f}; shipped perceptron "
          f"{report['mlp']['held_out@10']:.3f}; perceptron + cross-encoder "
          f"{report['mlp+ce']['held_out@10']:.3f}")
    print(f"development personas @5: cross-encoder alone {report['ce_alone_dev_personas@5']:.3f}"
          f"; perceptron {report['mlp']['dev_personas@5']:.3f}; + cross-encoder "
          f"{report['mlp+ce']['dev_personas@5']:.3f}")
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


def pools(conv, embedder, pool: int) -> list[dict]:
    """Per question with evidence: its text, its first `pool` hits (the shipped `FEATURES`,
    sources, positions in the conversation), every turn's text and the gold evidence."""
    from mags_lib.conversations.types import turn_text
    from mags_lib.memory import DIALOGUE_MEMORY, LiquidMemory, MemoryConfig
    from mags_lib.memory.rerank import pool_features

    mem = LiquidMemory(config=MemoryConfig.from_dict({**DIALOGUE_MEMORY, "reranker": ""}),
                       embedder=embedder)
    turns = list(conv.turns())
    ids = mem.observe_many([{"text": turn_text(t), "source": t.dia_id, "block": "episodic"}
                            for t in turns])
    texts = [mem.node(n)["text"] for n in ids]
    at = {n: i for i, n in enumerate(ids)}
    by_id = {t.dia_id: i for i, t in enumerate(turns)}
    out = []
    for qa in conv.qa:
        if not qa.evidence:
            continue
        hits, x = pool_features(mem, qa.asked(), pool)
        out.append({"conversation": conv.sample_id, "category": qa.category,
                    "question": qa.asked(), "evidence": tuple(qa.evidence),
                    "gold_at": sorted({by_id[e] for e in qa.evidence if e in by_id}),
                    "sources": [[str(s) for s in h.sources] for h in hits],
                    "at": [at[h.node_id] for h in hits], "x": x, "texts": texts})
    return out


def pairs(questions: list[dict], negatives: int, seed: int) -> tuple[list, list, list]:
    """(question, turn, label) rows: every evidence turn (in the pool or not) as a positive,
    `negatives` pool turns that are not evidence as negatives, drawn with `seed`."""
    rng = random.Random(seed)
    qs, ps, ys = [], [], []
    for q in questions:
        gold = set(q["gold_at"])
        negs = [i for i in q["at"] if i not in gold]
        for i in sorted(gold):
            qs.append(q["question"]), ps.append(q["texts"][i]), ys.append(1.0)
        for i in rng.sample(negs, min(negatives, len(negs))):
            qs.append(q["question"]), ps.append(q["texts"][i]), ys.append(0.0)
    return qs, ps, ys


def train_cross_encoder(questions: list[dict], args: argparse.Namespace):
    """A cross-encoder from the embedded MiniLM's weights, trained on `pairs(questions)`."""
    import logging

    import torch
    from datasets import Dataset
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers.utils import logging as hf_logging

    from mags_lib.models import embedded_embedder_dir

    hf_logging.set_verbosity_error()
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    torch.manual_seed(args.seed)
    qs, ps, ys = pairs(questions, args.negatives, args.seed)
    if args.smoke:
        qs, ps, ys = qs[:64], ps[:64], ys[:64]
    model = CrossEncoder(str(embedded_embedder_dir()), num_labels=1,
                         max_length=args.max_length, device="cpu")
    data = Dataset.from_dict({"query": qs, "passage": ps, "label": ys}).shuffle(seed=args.seed)
    targs = CrossEncoderTrainingArguments(
        output_dir="/tmp/cross_encoder_study", num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch, learning_rate=args.lr, warmup_steps=0.1,
        save_strategy="no", report_to="none", logging_steps=10**6, use_cpu=True,
        seed=args.seed, disable_tqdm=True)
    CrossEncoderTrainer(model=model, args=targs, train_dataset=data,
                        loss=BinaryCrossEntropyLoss(model)).train()
    return model


def ce_columns(model, q: dict, batch: int) -> np.ndarray:
    """(pool, 3): the cross-encoder's logit for each hit's turn, the turn before, the turn
    after (0 where there is none)."""
    n = len(q["texts"])
    need = sorted({j for i in q["at"] for j in (i - 1, i, i + 1) if 0 <= j < n})
    if not need:
        return np.zeros((0, 3))
    logits = model.predict([(q["question"], q["texts"][j]) for j in need], batch_size=batch,
                           activation_fn=None, show_progress_bar=False)
    score = dict(zip(need, np.asarray(logits, dtype=np.float64).reshape(-1).tolist(),
                     strict=True))
    return np.asarray([[score.get(i, 0.0), score.get(i - 1, 0.0), score.get(i + 1, 0.0)]
                       for i in q["at"]], dtype=np.float64).reshape(-1, 3)


class _First:
    """Ranks by the first column: `recall_at_k`'s reranker for the cross-encoder alone."""

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return x[:, 0]


def groups(rows: list[dict], with_ce: bool, only_ce: bool = False) -> list:
    """`EvidenceGroup`s on the shipped features, with the cross-encoder's columns after them
    (`with_ce`), or on those columns alone (`only_ce`)."""
    from mags_lib.train.recall_reranker import EvidenceGroup

    def x(r: dict) -> np.ndarray:
        if only_ce:
            return r["ce"]
        return np.hstack([r["x"], r["ce"]]) if with_ce else r["x"]

    return [EvidenceGroup(r["conversation"], r["category"], r["evidence"], r["sources"], x(r))
            for r in rows]


def cross_fit(convs: dict, train: list[dict], dev: list[dict], with_ce: bool,
              persona_weight: float) -> dict:
    """The shipped perceptron's settings, cross-fitted by conversation (personas always in),
    on the shipped features with or without the cross-encoder's columns."""
    from mags_lib.train.recall_reranker import cross_fitted

    sys_path_tools()
    from reranker_feature_study import fitter

    result, _ = cross_fitted({n: groups(rows, with_ce) for n, rows in convs.items()},
                             groups(train, with_ce), {"dev": groups(dev, with_ce)},
                             always_weight=persona_weight, fitter=fitter("mlp"))
    by = result["by_source"]
    return {"held_out@10": result["held_out_pooled"]["reranked_recall@10"],
            "held_out@5": result["held_out_pooled"]["reranked_recall@5"],
            "by_conversation": {n: by[n]["reranked_recall@10"] for n in convs},
            "dev_personas@5": by["dev"]["reranked_recall@5"],
            "dev_personas@10": by["dev"]["reranked_recall@10"],
            "per_question@10": {n: result["per_question"][n]["reranked_recall@10"]
                                for n in convs}}


def sys_path_tools() -> None:
    import sys

    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)


if __name__ == "__main__":
    main()
