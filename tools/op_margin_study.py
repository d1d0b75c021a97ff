"""How the write model's op choice moves when an empty block gets a head start: a margin study.

    python tools/op_margin_study.py OUT.json                       # development rows only
    python tools/op_margin_study.py OUT.json --margins 0 0.5 1 2

Every write row is prompted and decoded as in play (`evaluation.role_judge`): the greedy reply
gives the op the model chooses now. The same prompt with the reply begun `<engram>\\n` is
scored for the three ways a block goes on (`</engram>`: nothing stored, `add`, `update`). With a
margin m the op becomes "none" wherever log P(none) + m >= max(log P(add), log P(update)), and
stays the greedy one elsewhere; m = 0 differs from the greedy ops only where the greedy op is not
the best-scored opening (0-3 rows in 204-408 on the personas, 2026-12-07). The report gives the greedy
ops' and each margin's op accuracy, balanced accuracy, facts dropped and confusion (gold ->
chosen; `objectives.write_metrics.op_confusion`), and beside them the **effect** of each greedy
reply: what a memory holding the prompt's lines does with it (`evaluation.op_effect`: a repeat
written as an add is merged, so nothing; an add that the memory's detector pairs with a held
fact retires it, so an update; an update with nothing to replace is stored as an add or retires
the closest fact), and the facts it retired, right (a gold update's old fact) or wrong. The
effect table is not the model's op accuracy; it says which op errors cost something in play.
On:

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

SETS = ("persona-fresh", "persona-dev-new", "persona-dev-nb12", "locomo-dev")
EMPTY = "<engram>\n</engram>"


def table(rows: list[dict], margin: float | None) -> dict:
    """`objectives.write_metrics.op_confusion` of `rows` ({"gold": op, "reply": the greedy
    reply, "scores": {op: log P}}) with each reply kept, or made an empty block where storing
    nothing wins at `margin` (`agents.loop.none_wins`); None: the greedy replies as they are
    (margin 0 differs from them where the greedy op is not the best-scored opening)."""
    from mags_lib.agents.loop import none_wins
    from mags_lib.objectives.write_metrics import op_confusion

    texts = [r["reply"] if margin is None or not none_wins(r["scores"], margin) else EMPTY
             for r in rows]
    ops = op_confusion(texts, [{"op": r["gold"]} for r in rows])
    return {"margin": margin, "n": len(rows), "op_accuracy": ops["accuracy"],
            "balanced": ops["balanced"], "dropped": ops["dropped"],
            "confusion": {g: c for g, c in ops["confusion"].items() if c}}


def same_fact(old: str, new: str) -> bool:
    """Whether two persona fact texts state the same attribute of the same person
    (`persona_phrases.fact_topic`; False where either is not a gold fact's wording)."""
    from mags_lib.conversations.persona_phrases import fact_topic

    topic = fact_topic(old)
    return topic is not None and topic == fact_topic(new)


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
    ap.add_argument("--memory", default=None,
                    help="JSON of MemoryConfig overrides for the effect table only (the memory "
                         "that carries the replies out), e.g. '{\"update_shared_words\": 1}'")
    args = ap.parse_args()
    overrides = None
    if args.memory:
        from mags_lib.configs import overridden
        from mags_lib.memory import MemoryConfig

        overrides = overridden({}, "--memory", args.memory, MemoryConfig.from_dict,
                               "MemoryConfig fields")

    from mags_lib.agents.loop import ENGRAM_CLOSE, closed, op_scores
    from mags_lib.evaluation.conversation_study import model_ids, role_models
    from mags_lib.evaluation.op_effect import effect_table
    from mags_lib.manifest import write_json
    from mags_lib.objectives.completions import chosen_op
    from mags_lib.synth.conversation_rows import locomo_judge_rows, persona_judge_set

    roles, why = role_models({"write": args.write}, needed=("write",))
    if not roles:
        raise SystemExit(why)
    llm = roles["write"]
    sets = {name: (locomo_judge_rows("dev", None, args.locomo_turns) if name == "locomo-dev"
                   else persona_judge_set(name, args.fresh, args.personas, args.offset))
            for name in args.sets}
    out: dict = {"models": model_ids(llm, roles), "args": vars(args), "sets": {}}
    for name, rows in sets.items():
        t0 = time.perf_counter()
        scored = []
        for r in rows:
            reply = closed(llm.chat(r["prompt"], max_tokens=96, temperature=0.0, seed=0,
                                    stop=[ENGRAM_CLOSE]), ENGRAM_CLOSE)
            scored.append({"gold": r["gold"]["op"], "reply": reply,
                           "scores": op_scores(llm, r["prompt"]),
                           "observation": r["gold"].get("observation"),
                           "shown": r["gold"].get("memory_shown") or []})
        facts = [next((o["text"] for o in r["gold"].get("ops") or []
                       if o.get("op") in ("add", "update")), None) for r in rows]
        effect = effect_table([s["reply"] for s in scored], [s["shown"] for s in scored],
                              [s["gold"] for s in scored], gold_facts=facts,
                              same_fact=same_fact if name.startswith("persona") else None,
                              memory=overrides)
        for s, e, gone in zip(scored, effect.pop("effects"), effect.pop("retired"),
                              strict=True):
            s["effect"], s["retired"] = e, gone
        agree = sum(max(s["scores"], key=s["scores"].get) == chosen_op(s["reply"])
                    for s in scored)
        out["sets"][name] = {"n": len(scored), "seconds": round(time.perf_counter() - t0, 1),
                             "greedy_is_argmax": agree, "greedy": table(scored, None),
                             "tables": [table(scored, m) for m in args.margins],
                             "effect": {k: effect.get(k) for k in (
                                 "n", "accuracy", "balanced", "dropped", "retirements")}
                             | {"confusion": {g: c for g, c in effect["confusion"].items()
                                              if c}},
                             "rows": scored}
        print(name, len(scored), "rows; greedy op = argmax of the scores on", agree)
        g = out["sets"][name]["greedy"]
        print(f"  greedy  acc {g['op_accuracy']:.3f} bal {g['balanced']:.3f} "
              f"{json.dumps(g['confusion'])}")
        for t in out["sets"][name]["tables"]:
            print(f"  m={t['margin']:<5} acc {t['op_accuracy']:.3f} bal {t['balanced']:.3f} "
                  f"{json.dumps(t['confusion'])}")
        e = out["sets"][name]["effect"]
        print(f"  effect  acc {e['accuracy']:.3f} bal {e['balanced']:.3f} "
              f"{json.dumps(e['confusion'])}; facts retired {e['retirements']} (the greedy "
              "replies as the memory carries them out: not the model's op accuracy)")
    write_json(args.out, out)
    print("saved", args.out)


if __name__ == "__main__":
    main()
