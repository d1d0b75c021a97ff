"""What a write checkpoint puts on its op token: P(empty block), P(add), P(update) by gold op.

    python tools/op_token_probs.py models/write-sft [--rows 60] [--heldout 10]

One forward pass per row on the prompt plus `<engram>\\n`, read at the next token (`</` of an
empty block, `add`, `update`), averaged per gold op, on the first `--rows` val rows and on
`--heldout` rows per op in the held-out phrasings (as notebook 03 builds them). A model whose
rows all look alike has not learnt the op, whatever its loss (journal 2026-11-26).
"""

from __future__ import annotations

import argparse
import collections
import json

from mags_lib.paths import SYNTH_DATA_DIR


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mags_lib.synth import SynthConfig
    from mags_lib.synth.chains import heldout_write_rows

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", help="a write model's checkpoint directory")
    ap.add_argument("--rows", type=int, default=60, help="val rows read")
    ap.add_argument("--heldout", type=int, default=10, help="held-out rows per gold op")
    args = ap.parse_args()
    tok = AutoTokenizer.from_pretrained(args.checkpoint)
    model = AutoModelForCausalLM.from_pretrained(args.checkpoint).eval()
    ops = {op: tok(text, add_special_tokens=False)["input_ids"][0]
           for op, text in (("none", "</engram>"), ("add", "add"), ("update", "update"))}
    with open(SYNTH_DATA_DIR / "write" / "val.jsonl") as f:
        val = [json.loads(line) for line in f][: args.rows]
    cfg = SynthConfig().resolved()
    heldout = heldout_write_rows(cfg.split_seeds()["test"], cfg, args.heldout, 0)
    for label, rows in (("val", val), ("held-out", heldout)):
        by_gold = collections.defaultdict(list)
        for r in rows:
            text = tok.apply_chat_template(r["prompt"], tokenize=False,
                                           add_generation_prompt=True) + "<engram>\n"
            with torch.no_grad():
                logits = model(tok(text, return_tensors="pt")["input_ids"]).logits[0, -1]
            p = torch.softmax(logits, -1)
            by_gold[r["gold"]["op"]].append({op: p[i].item() for op, i in ops.items()})
        for gold, probs in sorted(by_gold.items()):
            mean = {op: round(sum(x[op] for x in probs) / len(probs), 3) for op in ops}
            right = sum(max(x, key=x.get) == gold for x in probs)
            print(f"{label} gold {gold}: n {len(probs)}, P {mean}, argmax right {right}")


if __name__ == "__main__":
    main()
