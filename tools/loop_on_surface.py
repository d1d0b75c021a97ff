"""Play closed-loop agents with notebook 06's settings on one surface, outside notebook 06.

    python tools/loop_on_surface.py --surface fixed --agents mags_verbatim
    python tools/loop_on_surface.py --surface varied --agents mags mags_verbatim --seeds 0 1 2

The configuration is notebook 06's (the trained answer model as decision LLM, completion
prompts, notebook 04's ask and write models, MiniLM, k = 3, 200 turns, held-out phrasings,
seeds 0-2), only the agent list and the surface are chosen here; games go to
results/scratch_loop_on_surface/<surface>/ (resumable). Prints each agent's pooled accuracy,
after-drift accuracy, stale recall rate and what the loop stored. Written for a check of
`mags_verbatim`: whether on the fixed surface, where every version of a rule shares one template,
the detector pairs raw sentences too. Run 2026-11-26 19:40 (94 s, seeds 0-2): it does not
(accuracy 0.810, after drift 0.606, stale recall 0.732, against `mags` 0.910 / 0.901 / 0.000).
"""
from __future__ import annotations

import argparse
import json

from mags_lib.evaluation import EvalConfig, run_eval
from mags_lib.evaluation.answer_model import decision_llm_settings
from mags_lib.game import GameConfig
from mags_lib.llm import LLMConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--surface", default="fixed", choices=["fixed", "varied"])
    ap.add_argument("--agents", nargs="+", default=["mags_verbatim"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--turns", type=int, default=200)
    args = ap.parse_args()
    decision = decision_llm_settings("auto", "completion")
    cfg = EvalConfig(
        agents=args.agents, seeds=args.seeds,
        game=GameConfig(episode_length=args.turns, surface=args.surface, phrasings="heldout"),
        llm=LLMConfig(model=decision["model"], n_ctx=1024), answer_tags=decision["answer_tags"],
        prompt_format="completion", models={"ask": "auto", "write": "auto"},
        embedder="embedded", k=3, output=f"scratch_loop_on_surface/{args.surface}",
        verbose=False)
    result = run_eval(cfg)
    for agent, a in result.summary["agents"].items():
        games = [g for g in result.games if g.agent == agent]
        stored = [{k: g.loop.get(k) for k in ("nodes_added", "nodes_superseded", "rule_stores")}
                  for g in games]
        print(json.dumps({"agent": agent, "accuracy": a.get("accuracy"),
                          "after_drift": (a.get("after_drift") or {}).get("accuracy"),
                          "stale_recall_rate": a.get("stale_recall_rate"),
                          "per_game": [round(g.accuracy, 3) for g in games],
                          "stored": stored}))


if __name__ == "__main__":
    main()
