"""`python -m mags_lib.llm --demo`: a chat reply and a grammar-constrained recall action.

Prints both with their latency, from the embedded SmolLM2-135M-Instruct unless `--model` names
another model. The cache is off here so that the latency is real.
"""

from __future__ import annotations

import argparse
import json
import sys

from mags_lib.errors import MagsError

RECALL_SYSTEM = (
    "You are the ask model of a memory system. Before answering, emit a <recall> block with "
    "one to three `query:` lines that would retrieve the rules needed to answer."
)


def demo(model: str, backend: str, max_tokens: int) -> dict:
    from mags_lib.actions import grammar_for, parse_actions
    from mags_lib.llm import LLMConfig, load_llm

    llm = load_llm(LLMConfig(model=model, backend=backend, cache=False))
    chat = llm.chat([{"role": "user", "content": "In one sentence, what is a knowledge graph?"}],
                    max_tokens=max_tokens, temperature=0.0, seed=0)
    question = "It is a rainy turn. The purple glarb sees a stone and a carrot. What does it eat?"
    recall = llm.chat([{"role": "system", "content": RECALL_SYSTEM},
                       {"role": "user", "content": question}],
                      grammar=grammar_for("recall"), max_tokens=96, temperature=0.0, seed=0)
    parsed = parse_actions(recall.text, kind="recall")
    return {
        "model": llm.name,
        "chat": {"text": chat.text.strip(), "seconds": round(chat.seconds, 3), "usage": chat.usage},
        "recall": {"text": recall.text.strip(), "seconds": round(recall.seconds, 3),
                   "parsed": [repr(a) for a in parsed.actions], "complete": parsed.complete},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mags_lib.llm", description=__doc__)
    ap.add_argument("--demo", action="store_true", help="run the demo (the default action)")
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    try:
        out = demo(args.model, args.backend, args.max_tokens)
    except MagsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"model: {out['model']}")
        print(f"chat   ({out['chat']['seconds']:.2f} s): {out['chat']['text']}")
        print(f"recall ({out['recall']['seconds']:.2f} s, grammar-constrained):")
        print("  " + out["recall"]["text"].replace("\n", "\n  "))
        print(f"  parsed: {out['recall']['parsed']} complete={out['recall']['complete']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
