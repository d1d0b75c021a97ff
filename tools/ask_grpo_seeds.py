"""Spread of the ask model's GRPO stage over seeds, judged on more val rows than notebook 02.

    python tools/ask_grpo_seeds.py --seeds 1 2 --rows 160
    python tools/ask_grpo_seeds.py --seeds --split test     # judge the saved models on test

Judges notebook 02's models that exist (`models/ask-sft`, and `models/ask-grpo`, GRPO seed 0)
on the first `rows` rows of the split (val by default), then re-runs the ask role's GRPO stage from `models/ask-sft` with
each other seed (the role's default config; models go to `models/ask-grpo-seed<N>/`) and judges
it the same way (with `--seeds` and no seed, the saved `ask-grpo-seed<N>` models are judged
again instead, e.g. on the test split): `ask_hit_rates` at depths 1, 3, 5 (hit@k: some query of the block finds the
rule; query hit@k: the share of queries that do). Prints one JSON object and writes it to
`results/02_train_ask_model/grpo_seeds_<split>.json` (merged with what is there, so seeds can
be run in separate calls). Each seed mines its GRPO prompts from its own shuffle of the
training rows (`mags_lib.train.mining`). About 8 minutes a seed on 2 idle cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from mags_lib.errors import MagsError
from mags_lib.paths import MODELS_DIR, results_dir
from mags_lib.train.evaluate import ask_hit_rates, generate
from mags_lib.train.grpo import run_grpo
from mags_lib.train.rewards import format_reward
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--rows", type=int, default=160, help="rows of the split judged")
    ap.add_argument("--split", choices=("val", "test"), default="val")
    ap.add_argument("--torch-threads", type=int, default=None)
    args = ap.parse_args()
    if not (MODELS_DIR / "ask-sft").is_dir():
        raise MagsError(f"{MODELS_DIR / 'ask-sft'} not found",
                        "run notebook 02 first (python -m mags_lib.pipeline --only 02)")
    cfg = RoleTrainConfig(role="ask", torch_threads=args.torch_threads)
    _, grpo_cfg = cfg.stages()
    params = grpo_cfg.reward_params["recall_reward"]
    rows, _ = load_role_data(cfg)
    val = first_per_task(rows[args.split], args.rows)
    prompts = [r["prompt"] for r in val]
    path = results_dir("02_train_ask_model") / f"grpo_seeds_{args.split}.json"
    try:
        out = json.loads(path.read_text())
        if out.get("rows") != len(val):
            out = {}
    except (OSError, ValueError):
        out = {}
    out.update({"rows": len(val), "split": args.split, "reward_params": params,
                "grpo": dataclasses.asdict(grpo_cfg)})
    models = out.setdefault("models", {})
    saved = [] if args.seeds else sorted(p.name for p in MODELS_DIR.glob("ask-grpo-seed*"))
    for name in ("ask-sft", "ask-grpo", *saved):
        if (MODELS_DIR / name).is_dir():
            texts = generate(str(MODELS_DIR / name), prompts, cfg.eval_max_tokens)
            models[name] = judged(texts, val, params)
    for seed in args.seeds:
        _, stage = RoleTrainConfig(role="ask", seed=seed, torch_threads=args.torch_threads).stages()
        stage = dataclasses.replace(stage, output_dir=str(MODELS_DIR / f"ask-grpo-seed{seed}"))
        t0 = time.perf_counter()
        result = run_grpo(stage, rows["train"], [], MODELS_DIR / "ask-sft")  # judged below
        texts = generate((result.model, result.tokenizer), prompts, cfg.eval_max_tokens)
        models[f"ask-grpo-seed{seed}"] = {**judged(texts, val, params),
                                          "train_s": time.perf_counter() - t0,
                                          "mining": result.metrics.get("mining")}
    path.write_text(json.dumps(out, indent=2))
    print(json.dumps({k: v for k, v in out.items() if k != "grpo"}, indent=2))
    print(markdown(json.loads(path.read_text())))  # keys as strings, as saved


def judged(texts: list[str], rows: list[dict], params: dict) -> dict:
    """Hit rates (`ask_hit_rates`) and adherence (the share of outputs that parse completely)."""
    fmt = format_reward(texts, task=["ask"] * len(texts))
    return {**ask_hit_rates(texts, rows, params),
            "adherence": sum(f == 1.0 for f in fmt) / max(1, len(fmt))}


def markdown(out: dict) -> str:
    """The judged models as a markdown table (the README's seed table)."""
    lines = [f"| ask model, {out['rows']} {out['split']} rows | hit@1 | per query @1 | hit@3 "
             "| queries / row | adherence |", "|---|---|---|---|---|---|"]
    for name, h in out["models"].items():
        hit, per_query = h["hit_at"], h["query_hit_at"]
        adherence = f"{h['adherence']:.3f}" if "adherence" in h else "-"
        lines.append(f"| {name} | {hit['1']:.3f} | {per_query['1']:.3f} | {hit['3']:.3f} "
                     f"| {h['queries_per_row']:.2f} | {adherence} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
