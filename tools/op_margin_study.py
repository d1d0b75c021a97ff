"""How the write model's op choice moves when an empty block gets a head start: a margin study.

    python tools/op_margin_study.py OUT.json                       # development rows only
    python tools/op_margin_study.py OUT.json --margins 0 0.5 1 2

Every write row is prompted and decoded as in play (`evaluation.role_judge`): the greedy reply
gives the op the model chooses now. The same prompt with the reply begun `<engram>\\n` is
scored for the three ways a block goes on (`</engram>`: nothing stored, `add`, `update`). With a
margin m the op becomes "none" wherever log P(none) + m >= max(log P(add), log P(update)), and
stays the greedy one elsewhere; m = 0 is (up to ties) the model as it is. For each margin the
report gives the op accuracy, the balanced accuracy and the confusion (gold -> chosen) on:

- `persona-fresh`: personas of the `fresh` split (`--fresh`), worded from
  `persona_fresh_phrases` only, which no model was steered by;
- `persona-dev-new`: development personas after notebook 12's six (`--offset`, `--personas`),
  which no dataset and no earlier choice read;
- `persona-dev-nb12`: notebook 12's six development personas (notebook 01's val rows too);
- `locomo-dev`: conv-43 (`--locomo-turns` of its turns sampled as notebook 14 samples; gold op
  `add` where the turn carries a session observation, a noisy gold).

No test split is read. The greedy replies and the scores come from the LLM cache where they
were made before.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

CONTINUATIONS = {"none": "</engram>", "add": "add", "update": "update"}
SETS = ("persona-fresh", "persona-dev-new", "persona-dev-nb12", "locomo-dev")


def with_margin(row: dict, margin: float) -> str:
    """The op of `row` ({"greedy": op, "scores": {op: log P}}) with `margin` given to none.

    >>> with_margin({"greedy": "add", "scores": {"none": -2.0, "add": -0.5, "update": -3}}, 1.0)
    'add'
    >>> with_margin({"greedy": "add", "scores": {"none": -2.0, "add": -0.5, "update": -3}}, 2.0)
    'none'
    """
    s = row["scores"]
    return "none" if s["none"] + margin >= max(s["add"], s["update"]) else row["greedy"]


def table(rows: list[dict], margin: float | None) -> dict:
    """Op accuracy, balanced accuracy and confusion of `rows` at `margin` (None: the greedy
    ops themselves; margin 0 differs from them where the greedy op is not the best scored)."""
    confusion: dict[str, Counter] = {}
    for r in rows:
        op = r["greedy"] if margin is None else with_margin(r, margin)
        confusion.setdefault(r["gold"], Counter())[op] += 1
    n = sum(sum(c.values()) for c in confusion.values())
    right = sum(c[g] for g, c in confusion.items())
    recalls = [c[g] / sum(c.values()) for g, c in confusion.items()]
    return {"margin": margin, "n": n, "op_accuracy": right / n if n else None,
            "balanced": sum(recalls) / len(recalls) if recalls else None,
            "confusion": {g: dict(sorted(c.items())) for g, c in sorted(confusion.items())}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON report path")
    ap.add_argument("--margins", type=float, nargs="+",
                    default=[0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
    ap.add_argument("--offset", type=int, default=6, help="first new development persona")
    ap.add_argument("--personas", type=int, default=12, help="new development personas")
    ap.add_argument("--fresh", type=int, default=12,
                    help="personas of the fresh development split (persona_fresh_phrases)")
    ap.add_argument("--locomo-turns", type=int, default=300, help="conv-43 turns sampled")
    ap.add_argument("--write", default="auto", help="'auto' (notebook 04's) or a .gguf")
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS),
                    help="which row sets to read (default: all)")
    args = ap.parse_args()

    from mags_lib.agents.loop import ENGRAM_CLOSE, closed
    from mags_lib.evaluation.conversation_study import model_ids, role_models
    from mags_lib.manifest import write_json
    from mags_lib.objectives.completions import chosen_op
    from mags_lib.synth.conversation_rows import locomo_judge_rows, persona_judge_rows

    roles, why = role_models({"write": args.write}, needed=("write",))
    if not roles:
        raise SystemExit(why)
    llm = roles["write"]
    makers = {"persona-fresh": lambda: persona_judge_rows("fresh", args.fresh)["write"],
              "persona-dev-new": lambda: persona_judge_rows("dev", args.personas,
                                                            offset=args.offset)["write"],
              "persona-dev-nb12": lambda: persona_judge_rows("dev", 6)["write"],
              "locomo-dev": lambda: locomo_judge_rows("dev", None, args.locomo_turns)}
    sets = {name: makers[name]() for name in args.sets}
    out: dict = {"models": model_ids(llm, roles), "args": vars(args), "sets": {}}
    for name, rows in sets.items():
        t0 = time.perf_counter()
        scored = []
        for r in rows:
            reply = llm.chat(r["prompt"], max_tokens=96, temperature=0.0, seed=0,
                             stop=[ENGRAM_CLOSE])
            prompt = llm.chat_prompt(r["prompt"]) + "<engram>\n"
            lp = llm.score(prompt, list(CONTINUATIONS.values()))
            scored.append({"gold": r["gold"]["op"], "greedy": chosen_op(closed(reply, ENGRAM_CLOSE)),
                           "scores": dict(zip(CONTINUATIONS, lp, strict=True)),
                           "observation": r["gold"].get("observation")})
        agree = sum(max(s["scores"], key=s["scores"].get) == s["greedy"] for s in scored)
        out["sets"][name] = {"n": len(scored), "seconds": round(time.perf_counter() - t0, 1),
                             "greedy_is_argmax": agree, "greedy": table(scored, None),
                             "tables": [table(scored, m) for m in args.margins],
                             "rows": scored}
        print(name, len(scored), "rows; greedy op = argmax of the scores on", agree)
        g = out["sets"][name]["greedy"]
        print(f"  greedy  acc {g['op_accuracy']:.3f} bal {g['balanced']:.3f} "
              f"{json.dumps(g['confusion'])}")
        for t in out["sets"][name]["tables"]:
            print(f"  m={t['margin']:<5} acc {t['op_accuracy']:.3f} bal {t['balanced']:.3f} "
                  f"{json.dumps(t['confusion'])}")
    write_json(args.out, out)
    print("saved", args.out)


if __name__ == "__main__":
    main()
