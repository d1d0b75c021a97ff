"""Does the ask reward's hashing embedder pay differently from the MiniLM that play recalls with?

    python tools/ask_reward_embedders.py [models/gguf/ask-grpo-q8_0.gguf] [--rows 160]

The ask model answers notebook 01's val rows greedily (no grammar, as notebook 02 judges it);
each output is scored by `recall_reward` (any query finds the gold fact in the top k) and
`recall_precision_reward` (the share of queries that do) with the hashing embedder (the
training reward's) and with all-MiniLM-L6-v2 (play's), at k = 1 (training) and k = 3 (the lines
an agent shows). Prints the rates and, at k = 1, on how many rows the two disagree and which
way. The gold completions are scored as a check that both memories find the gold fact.
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    from mags_lib.llm import LLMConfig, load_llm
    from mags_lib.objectives.rewards import recall_precision_reward, recall_reward
    from mags_lib.paths import GGUF_DIR, SYNTH_DATA_DIR

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf", nargs="?", default=str(GGUF_DIR / "ask-grpo-q8_0.gguf"))
    ap.add_argument("--rows", type=int, default=160)
    args = ap.parse_args()
    with open(SYNTH_DATA_DIR / "ask" / "val.jsonl") as f:
        rows = [json.loads(line) for line in f][: args.rows]
    llm = load_llm(LLMConfig(model=args.gguf, n_ctx=2048, cache=False))
    outputs = {"model": [llm.chat(r["prompt"], max_tokens=64, temperature=0.0, seed=0).text
                         for r in rows],
               "gold": [r["completion"][0]["content"] for r in rows]}
    golds = [r["gold"] for r in rows]
    out: dict = {"rows": len(rows), "model": args.gguf}
    for name, texts in outputs.items():
        for embedder in ("hashing", "embedded"):
            for k in (1, 3):
                hit = [x for x in recall_reward(texts, gold=golds, k=k, embedder=embedder)
                       if x is not None]
                prec = [x for x in recall_precision_reward(texts, gold=golds, k=k,
                                                           embedder=embedder) if x is not None]
                out[f"{name}/{embedder}/k{k}"] = {"hit": round(sum(hit) / len(hit), 3),
                                                  "precision": round(sum(prec) / len(prec), 3),
                                                  "n": len(hit)}
    h = recall_reward(outputs["model"], gold=golds, k=1, embedder="hashing")
    e = recall_reward(outputs["model"], gold=golds, k=1, embedder="embedded")
    pairs = [(a, b) for a, b in zip(h, e, strict=True) if a is not None]
    out["k1_rows"] = {"both": sum(a and b for a, b in pairs),
                      "hashing_only": sum(a and not b for a, b in pairs),
                      "minilm_only": sum(b and not a for a, b in pairs),
                      "neither": sum(not a and not b for a, b in pairs)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
