"""Judge the write and ask models alone on persona turns, prompted and decoded as in play.

    python tools/persona_roles.py --split dev            # notebook 12's six development personas
    python tools/persona_roles.py --split test           # notebook 13's six test personas (once)
    python tools/persona_roles.py --split dev --write other/write-grpo-q8_0.gguf

The same judgement notebooks 12 and 13 print under "The write and ask models alone" (op
accuracy, the op confusion matrix gold -> chosen, facts dropped, the ask model's hit@3), without
playing the conversations: a quick check of a new write model on the development personas
before any loop is run. `--split test` scores the test personas: run it once per frozen model,
never while choosing. The report goes to results/scratch_persona_roles/<split>.json.
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "fresh", "test"), default="dev",
                    help="'fresh': the second development split (persona_fresh_phrases)")
    ap.add_argument("--personas", type=int, default=6, help="conversations judged (notebooks: 6)")
    ap.add_argument("--write", default="auto", help="'auto' (notebook 04's) or a .gguf")
    ap.add_argument("--ask", default="auto", help="'auto' (notebook 04's) or a .gguf")
    args = ap.parse_args()

    from mags_lib.evaluation.conversation_study import model_ids, role_models
    from mags_lib.evaluation.role_judge import judge_roles, judged_text
    from mags_lib.manifest import write_json
    from mags_lib.paths import results_dir
    from mags_lib.synth.conversation_rows import persona_judge_rows

    roles, why = role_models({"ask": args.ask, "write": args.write})
    if not roles:
        raise SystemExit(why)
    judged = judge_roles(roles, persona_judge_rows(args.split, args.personas))
    print(judged_text(judged))
    out = results_dir("scratch_persona_roles") / f"{args.split}.json"
    write_json(out, {"split": args.split, "personas": args.personas,
                     "models": model_ids(roles["write"], roles), "judged": judged})
    print("saved", out)
    print(json.dumps({"write_op_accuracy": judged["write"]["op_accuracy"],
                      "ask_hit": judged["ask"]["hit"]}))


if __name__ == "__main__":
    main()
