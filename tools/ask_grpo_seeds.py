"""Spread of the ask model's GRPO stage over seeds, judged on more val rows than notebook 02.

    python tools/ask_grpo_seeds.py --seeds 1 2 --rows 80

Judges `models/ask-sft` and `models/ask-grpo` (notebook 02's models, GRPO seed 0) on the first
`rows` val rows, then re-runs the ask role's GRPO stage from `models/ask-sft` with each other
seed (the role's default config; models go to `models/ask-grpo-seed<N>/`) and judges it the
same way: `ask_hit_rates` at depths 1, 3, 5. Prints one JSON object and writes it to
`results/02_train_ask_model/grpo_seeds.json`. About 7 minutes a seed on 2 idle cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from mags_lib.paths import MODELS_DIR, results_dir
from mags_lib.train.evaluate import ask_hit_rates, generate
from mags_lib.train.grpo import run_grpo
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--rows", type=int, default=80, help="val rows judged")
    args = ap.parse_args()
    cfg = RoleTrainConfig(role="ask")
    _, grpo_cfg = cfg.stages()
    params = grpo_cfg.reward_params["recall_reward"]
    rows, _ = load_role_data(cfg)
    val = first_per_task(rows["val"], args.rows)
    prompts = [r["prompt"] for r in val]
    out: dict = {"rows": len(val), "reward_params": params, "models": {}}
    for name in ("ask-sft", "ask-grpo"):
        texts = generate(str(MODELS_DIR / name), prompts, cfg.eval_max_tokens)
        out["models"][name] = ask_hit_rates(texts, val, params)
    for seed in args.seeds:
        _, stage = RoleTrainConfig(role="ask", seed=seed).stages()
        stage = dataclasses.replace(stage, output_dir=str(MODELS_DIR / f"ask-grpo-seed{seed}"))
        result = run_grpo(stage, rows["train"], val[: cfg.eval_rows], MODELS_DIR / "ask-sft")
        texts = generate((result.model, result.tokenizer), prompts, cfg.eval_max_tokens)
        out["models"][f"ask-grpo-seed{seed}"] = ask_hit_rates(texts, val, params)
    path = results_dir("02_train_ask_model") / "grpo_seeds.json"
    path.write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
