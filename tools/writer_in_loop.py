"""Compare write models in the closed loop on notebook 01's val games (training phrasings).

    python tools/writer_in_loop.py models/gguf/write-grpo-q8_0.gguf other/write-grpo-q8_0.gguf
    python tools/writer_in_loop.py models/gguf/write-grpo-q8_0.gguf --agents mags mags_working

Each write model plays `--agents` (default `mags`; the trained ask model, notebook 04's answer
model) on the first `--games` val seeds of notebook 01's split, varied surface, *training*
phrasings: games no model was trained on and that notebook 06 does not evaluate on, so a recipe
can be chosen here without the evaluation games. Prints accuracy and the rule sentences stored per game; games go to
results/scratch_writer_in_loop/<n>/. The journal's 2026-11-26 comparison (0.841 against 0.873)
was this run with the op-weighted and the plain writer; `--agents mags mags_working` gave the
working-memory comparison.
"""

from __future__ import annotations

import argparse

from mags_lib.evaluation import EvalConfig, run_eval
from mags_lib.evaluation.answer_model import decision_llm_settings
from mags_lib.game import GameConfig
from mags_lib.llm import LLMConfig
from mags_lib.synth import SynthConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("write_models", nargs="+", help="write model .gguf files")
    ap.add_argument("--games", type=int, default=3, help="val seeds played per model")
    ap.add_argument("--turns", type=int, default=200, help="turns per game")
    ap.add_argument("--agents", nargs="+", default=["mags"],
                    help="closed-loop agents to play with each write model (registry names)")
    args = ap.parse_args()
    seeds = SynthConfig().resolved().split_seeds()["val"][: args.games]
    decision = decision_llm_settings("auto", "completion")
    for n, write in enumerate(args.write_models):
        cfg = EvalConfig(agents=list(args.agents), seeds=seeds,
                         game=GameConfig(episode_length=args.turns, surface="varied",
                                         phrasings="train"),
                         llm=LLMConfig(model=decision["model"], n_ctx=1024),
                         answer_tags=decision["answer_tags"], prompt_format="completion",
                         models={"ask": "auto", "write": write}, embedder="embedded", k=3,
                         output=f"scratch_writer_in_loop/{n}")
        result = run_eval(cfg)
        accs: dict[str, list[float]] = {}
        for g in result.games:
            d = g.decisions
            accs.setdefault(g.agent, []).append(sum(x["correct"] for x in d) / len(d))
            print(f"{write} {g.agent} seed {g.seed}: accuracy {accs[g.agent][-1]:.3f}, rule "
                  f"sentences stored {g.loop.get('rule_stores')} "
                  f"({g.loop.get('rule_stores_exact')} exact), ops "
                  f"{ {k: v for k, v in g.loop.items() if k.startswith('op_')} }")
        for agent, a in accs.items():
            print(f"{write} {agent}: mean accuracy {sum(a) / len(a):.3f} over {len(a)} games")


if __name__ == "__main__":
    main()
