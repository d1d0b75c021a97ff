"""Evidence recall on LoCoMo: raw turns in a `LiquidMemory` (MiniLM) against flat BM25.

    python tools/locomo_evidence_recall.py OUT.json                 # the training conversations
    python tools/locomo_evidence_recall.py OUT.json --split test    # once a configuration is frozen
    python tools/locomo_evidence_recall.py OUT.json --learn         # recall learns as it goes

Prints recall@5 / @10 overall and per category with 95% intervals (bootstrap over
conversations) for each retriever, and writes them with every question's row to OUT.json.
LoCoMo is read from $MAGS_LOCOMO, data/external/ or the shared copy (`--data` overrides).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON file for the summaries and the rows")
    ap.add_argument("--split", choices=["train", "test", "all"], default="train")
    ap.add_argument("--data", default=None, help="locomo10.json (default: locomo_path())")
    ap.add_argument("--retrievers", nargs="+", default=["memory", "bm25"])
    ap.add_argument("--learn", action="store_true", help="recall learns from every question")
    args = ap.parse_args()
    from mags_lib.conversations.locomo import SPLITS, load_locomo
    from mags_lib.embed import default_embedder
    from mags_lib.evaluation.evidence_recall import conversation_rows, summarize

    ids = None if args.split == "all" else SPLITS[args.split]
    convs = load_locomo(args.data, ids=ids)
    embedder = default_embedder() if "memory" in args.retrievers else None
    report = {"split": args.split, "learn": args.learn, "retrievers": {}}
    for name in args.retrievers:
        t0 = time.perf_counter()
        rows = [r for c in convs for r in conversation_rows(c, retriever=name,
                                                            embedder=embedder, learn=args.learn)]
        summary = summarize(rows)
        summary["seconds"] = round(time.perf_counter() - t0, 1)
        report["retrievers"][name] = {"summary": summary, "rows": rows}
        print(name, json.dumps(summary, indent=1))
    Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
