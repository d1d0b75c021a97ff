"""The order probe on one answer model: notebook 01's answer rows (val and test, completion
format) scored in every rotation of their options (`evaluation/answer_order.py`).

    python tools/answer_order_probe.py models/gguf/answer-grpo-q8_0.gguf OUT.json  # llama.cpp
    python tools/answer_order_probe.py models/answer-grpo OUT.json          # transformers (slow)

Prints the summary (accuracy by the right item's place, order-consistent rows, how often a row
without its rule gets the last-named option, the debiased accuracy) and writes it with every
record to OUT.json. On this CPU: ~8 minutes through transformers for 292 rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="a .gguf file (llama.cpp) or a checkpoint folder (transformers)")
    ap.add_argument("out", help="JSON file for the summary and the records")
    ap.add_argument("--data-dir", default=None, help="default: data/synth/ (notebook 01)")
    ap.add_argument("--splits", nargs="+", default=["val", "test"])
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    from mags_lib.evaluation.answer_order import order_probe
    from mags_lib.llm import load_llm
    from mags_lib.objectives.data import load_jsonl
    from mags_lib.paths import SYNTH_DATA_DIR

    data = Path(args.data_dir) if args.data_dir else SYNTH_DATA_DIR
    rows = [r for s in args.splits for r in load_jsonl(data / "answer" / f"{s}.jsonl",
                                                       task="answer")[0]]
    backend = "llamacpp" if args.model.endswith(".gguf") else "transformers"
    llm = load_llm(model=args.model, backend=backend, n_threads=args.threads)
    probe = order_probe(llm, rows)
    Path(args.out).write_text(json.dumps(probe.to_dict(), indent=1))
    keys = ("rows", "decisions", "accuracy", "by_place", "consistent", "no_rule_last_named",
            "no_rule_last_named_chance", "first_minus_last", "debiased", "skipped_rows", "seconds")
    print(json.dumps({k: probe.summary[k] for k in keys}, indent=1))


if __name__ == "__main__":
    main()
