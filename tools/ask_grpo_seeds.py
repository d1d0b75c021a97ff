"""Spread of the ask model's GRPO stage over seeds, judged on more val rows than notebook 02.

    python tools/ask_grpo_seeds.py --seeds 1 2 --rows 160
    python tools/ask_grpo_seeds.py --seeds --split test     # judge the saved models on test
    python tools/ask_grpo_seeds.py --pooled                 # val + test together, from saved outputs

Judges notebook 02's models that exist (`models/ask-sft`, and `models/ask-grpo`, GRPO seed 0)
on the first `rows` rows of the split (val by default), then re-runs the ask role's GRPO stage from `models/ask-sft` with
each other seed (the role's default config; models go to `models/seeds/ask-grpo-seed<N>/`, out
of notebook 04's way: it exports each role's selected model from `models/`) and judges
it the same way (with `--seeds` and no seed, the saved `ask-grpo-seed<N>` models are judged
again instead, e.g. on the test split): `ask_hit_rates` at depths 1, 3, 5 (hit@k: some query of the block finds the
rule; query hit@k: the share of queries that do). Prints one JSON object and writes it to
`results/02_train_ask_model/grpo_seeds_<split>.json` (merged with what is there, so seeds can
be run in separate calls). Each seed mines its GRPO prompts from its own shuffle of the
training rows (`mags_lib.train.mining`). About 8 minutes a seed on 2 idle cores.

Each GRPO model is also compared with `ask-sft` on the same rows at depth 1, per query and per
block (`mags_lib.train.compare.paired_gain`: the gain and a 95% bootstrap interval that
resamples whole games, since rows of one game share rules; and the games where each is
ahead). The outputs are kept in `grpo_seeds_<split>_outputs.json`; `--rejudge` scores them
again without generating (after a change to the scoring). `--pooled` compares on both
splits' saved rows together (16 held-out games instead of 8: tighter intervals, which matters
for the block rate, where SFT misses only a few rows of each split) and writes
`grpo_seeds_pooled.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from mags_lib.errors import MagsError
from mags_lib.paths import MODELS_DIR, results_dir
from mags_lib.tasks.rewards import format_reward
from mags_lib.train.compare import hits_to_pairs, paired_gain
from mags_lib.train.evaluate import ask_hit_rates, ask_row_hits, generate
from mags_lib.train.grpo import run_grpo
from mags_lib.train.roles import RoleTrainConfig
from mags_lib.train.stages import first_per_task, load_role_data

SEEDS_DIR = MODELS_DIR / "seeds"
"""GRPO models of other seeds; not a role's final model, so not in `models/` itself."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--rows", type=int, default=160, help="rows of the split judged")
    ap.add_argument("--split", choices=("val", "test"), default="val")
    ap.add_argument("--torch-threads", type=int, default=None)
    ap.add_argument("--rejudge", action="store_true",
                    help="score the saved outputs again; generate and train nothing")
    ap.add_argument("--pooled", action="store_true",
                    help="compare with ask-sft on val and test together, from both splits' "
                         "saved outputs; generate and train nothing")
    args = ap.parse_args()
    if not (MODELS_DIR / "ask-sft").is_dir():
        raise MagsError(f"{MODELS_DIR / 'ask-sft'} not found",
                        "run notebook 02 first (python -m mags_lib.pipeline --only 02)")
    cfg = RoleTrainConfig(role="ask", torch_threads=args.torch_threads)
    _, grpo_cfg = cfg.stages()
    params = grpo_cfg.reward_params["recall_reward"]
    rows, _ = load_role_data(cfg)
    if args.pooled:
        return pooled(rows, params)
    val = first_per_task(rows[args.split], args.rows)
    prompts = [r["prompt"] for r in val]
    path = results_dir("02_train_ask_model") / f"grpo_seeds_{args.split}.json"
    out, outputs = _saved(path, len(val)), _saved(_outputs_path(path), len(val))
    out.update({"rows": len(val), "split": args.split, "reward_params": params,
                "grpo": dataclasses.asdict(grpo_cfg)})
    outputs["rows"] = len(val)
    models, texts_of = out.setdefault("models", {}), outputs.setdefault("texts", {})
    if args.rejudge:
        for name, texts in texts_of.items():
            models[name] = {**models.get(name, {}), **judged(texts, val, params)}
    else:
        saved = [] if args.seeds else sorted(SEEDS_DIR.glob("ask-grpo-seed*"))
        for model_dir in (MODELS_DIR / "ask-sft", MODELS_DIR / "ask-grpo", *saved):
            if model_dir.is_dir():
                name = model_dir.name
                texts_of[name] = generate(str(model_dir), prompts, cfg.eval_max_tokens)
                models[name] = judged(texts_of[name], val, params)
        for seed in args.seeds:
            _, stage = RoleTrainConfig(role="ask", seed=seed,
                                       torch_threads=args.torch_threads).stages()
            stage = dataclasses.replace(stage,
                                        output_dir=str(SEEDS_DIR / f"ask-grpo-seed{seed}"))
            t0 = time.perf_counter()
            result = run_grpo(stage, rows["train"], [], MODELS_DIR / "ask-sft")  # judged below
            name = f"ask-grpo-seed{seed}"
            texts_of[name] = generate((result.model, result.tokenizer), prompts,
                                      cfg.eval_max_tokens)
            models[name] = {**judged(texts_of[name], val, params),
                            "train_s": time.perf_counter() - t0,
                            "mining": result.metrics.get("mining")}
    if "ask-sft" in texts_of:
        out["vs_sft"] = {name: against(texts_of["ask-sft"], texts, val, params)
                         for name, texts in texts_of.items() if name != "ask-sft"}
    _outputs_path(path).write_text(json.dumps(outputs))
    path.write_text(json.dumps(out, indent=2))
    print(json.dumps({k: v for k, v in out.items() if k != "grpo"}, indent=2))
    print(markdown(json.loads(path.read_text())))  # keys as strings, as saved


def pooled(rows: dict[str, list[dict]], params: dict) -> None:
    """Each saved model against ask-sft on the val and test rows judged so far, together."""
    path = results_dir("02_train_ask_model") / "grpo_seeds_pooled.json"
    texts_of: dict[str, list[str]] = {}
    judged_rows: list[dict] = []
    for split in ("val", "test"):
        saved = _outputs_path(path.with_name(f"grpo_seeds_{split}.json"))
        try:
            outputs = json.loads(saved.read_text())
        except (OSError, ValueError) as e:
            raise MagsError(f"cannot read {saved}: {e}",
                            f"judge the {split} split first: python tools/ask_grpo_seeds.py "
                            f"--seeds --rows 300 --split {split}") from e
        judged_rows += first_per_task(rows[split], outputs["rows"])
        for name, texts in outputs["texts"].items():
            texts_of.setdefault(name, []).extend(texts)
    missing = [n for n, t in texts_of.items() if len(t) != len(judged_rows)]
    missing += [] if "ask-sft" in texts_of else ["ask-sft"]
    if missing:
        raise MagsError(f"the saved outputs do not cover both splits for {', '.join(missing)}",
                        "judge every model on both splits: --seeds --split val, then test")
    vs_sft = {name: against(texts_of["ask-sft"], texts, judged_rows, params)
              for name, texts in texts_of.items() if name != "ask-sft"}
    grpo = [name for name in texts_of if name != "ask-sft"]
    if len(grpo) > 1:  # the recipe over its seeds: each seed's rows paired with SFT's, games kept whole
        vs_sft[f"all {len(grpo)} GRPO seeds"] = against(
            texts_of["ask-sft"] * len(grpo), [t for name in grpo for t in texts_of[name]],
            judged_rows * len(grpo), params)
    out = {"rows": len(judged_rows), "split": "val+test", "reward_params": params,
           "models": {name: judged(texts, judged_rows, params) for name, texts in texts_of.items()},
           "vs_sft": vs_sft}
    path.write_text(json.dumps(out, indent=2))
    print(markdown(json.loads(path.read_text())))


def judged(texts: list[str], rows: list[dict], params: dict) -> dict:
    """Hit rates (`ask_hit_rates`) and adherence (the share of outputs that parse completely)."""
    fmt = format_reward(texts, task=["ask"] * len(texts))
    return {**ask_hit_rates(texts, rows, params),
            "adherence": sum(f == 1.0 for f in fmt) / max(1, len(fmt))}


def _outputs_path(path):
    return path.with_name(path.stem + "_outputs.json")


def _saved(path, rows: int) -> dict:
    """What an earlier call wrote for the same number of rows, else nothing."""
    try:
        out = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return out if out.get("rows") == rows else {}


def against(sft: list[str], texts: list[str], rows: list[dict], params: dict) -> dict:
    """`texts` against the SFT model's outputs on the same rows at depth 1, per query and per
    block: `paired_gain` with whole games resampled."""
    games = [r.get("game_seed") for r in rows]
    hits_a, hits_b = ask_row_hits(sft, rows, params, 1), ask_row_hits(texts, rows, params, 1)
    return {unit: paired_gain(hits_to_pairs(hits_a, unit == "per_query"),
                              hits_to_pairs(hits_b, unit == "per_query"), groups=games)
            for unit in ("per_query", "per_block")}


def markdown(out: dict) -> str:
    """The judged models as a markdown table (the README's seed table)."""
    lines = [f"| ask model, {out['rows']} {out['split']} rows | hit@1 | per query @1 | hit@3 "
             "| queries / row | adherence |", "|---|---|---|---|---|---|"]
    for name, h in out["models"].items():
        hit, per_query = h["hit_at"], h["query_hit_at"]
        adherence = f"{h['adherence']:.3f}" if "adherence" in h else "-"
        lines.append(f"| {name} | {hit['1']:.3f} | {per_query['1']:.3f} | {hit['3']:.3f} "
                     f"| {h['queries_per_row']:.2f} | {adherence} |")
    if out.get("vs_sft"):
        lines += ["", f"| against ask-sft, {out['rows']} {out['split']} rows, depth 1 "
                  "| per query: gain [95% CI, games resampled] | games ahead / behind "
                  "| per block: gain [95% CI] | rows ahead / behind |", "|---|---|---|---|---|"]
        for name, g in out["vs_sft"].items():
            q, b = g["per_query"], g["per_block"]
            lines.append(f"| {name} | {q['gain']:+.3f} [{q['ci'][0]:+.3f}, {q['ci'][1]:+.3f}] "
                         f"| {q['groups_b_ahead']} / {q['groups_b_behind']} of {q['groups']} "
                         f"| {b['gain']:+.3f} [{b['ci'][0]:+.3f}, {b['ci'][1]:+.3f}] "
                         f"| {b['rows_b_ahead']} / {b['rows_b_behind']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
