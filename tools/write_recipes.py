"""Variants of the write model's training recipe, trained and judged as notebook 03 judges them.

    python tools/write_recipes.py --out DIR --runs recipe:0 op10x360:0        # here, on a CPU
    python tools/write_recipes.py --base-model SmolLM2-135M-Instruct.Q4_1.gguf --out DIR  # a GPU
    python tools/write_recipes.py --smoke --out /tmp/write_recipes   # the same path, seconds

Made for the device machine (issue 20, item 5: the recipe on a GPU), and runs on any device.
For each run (`--runs VARIANT:SEED ...`, in priority order): `train_role` (the function notebooks
02-03 call: base judged, SFT, GRPO, val and test judged), then the write rows of notebook 03 in
the **held-out** phrasings (`heldout_write_rows`, 20 per gold op), judged for SFT and SFT+GRPO
by generating and parsing. Variants:
- `recipe`: the write role exactly as the CPU default (`ROLE_RECIPES["write"]`: since
  2026-11-27 the op token weighted 10x for 240 SFT steps); on a GPU this runs the CUDA backend
  choice and GRPO's rollouts there;
- `plain120`: the default until 2026-11-27, TRL's plain token mean (decision weight 1) for 120
  SFT steps, under which the op is the seed's prior;
- `op10x360`: the op token weighted 10x (`sft_loss.py`) for 360 SFT steps (2 epochs of the write
  rows), past notebook 03's CPU budget;
- `op10x120`: the same at 120 steps, to tell the steps from the numerics (bf16 on a GPU) apart.

Writes DIR/write_recipes.json after every run (a command cut short keeps what finished): the
environment (torch, the device, which backend `choose_backend` picks and why, whether Unsloth
and vLLM are there), per stage the wall time, seconds a step and peak CUDA memory, the op x op
confusion matrices and 12 raw held-out outputs; and, for the first `--adapters` runs, each
stage's LoRA adapter in bf16 (DIR/<variant>-s<seed>-<stage>.safetensors, ~10 MB), so a model
trained on a GPU can be rebuilt on a CPU (`train/adapters.py`, `tools/rebuild_from_adapters.py`).
`--budget-s` skips a run that would not finish in time. The base model is judged on
`--base-eval-rows` rows in the first run only. The journal's entry "2026-11-26 (late night)"
holds the runs on the device machine (an H200) and here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import time
import warnings
from dataclasses import replace
from pathlib import Path

VARIANTS: dict[str, dict] = {
    "recipe": {"sft_steps": None, "decision_weight": None},  # None: the role's recipe
    "plain120": {"sft_steps": 120, "decision_weight": 1.0},
    "op10x360": {"sft_steps": 360, "decision_weight": 10.0},
    "op10x120": {"sft_steps": 120, "decision_weight": 10.0},
}
HELDOUT_PER_OP = 20  # as notebook 03
SAMPLES = 12


def environment() -> dict:
    """What the GPU path sees: torch, the device, the backend `load_trainable` will choose."""
    import torch

    from mags_lib.train.backend import choose_backend

    cuda = torch.cuda.is_available()
    unsloth = importlib.util.find_spec("unsloth") is not None
    env = {"torch": torch.__version__, "cuda": cuda,
           "device": torch.cuda.get_device_name(0) if cuda else "cpu",
           "bf16": bool(cuda and torch.cuda.is_bf16_supported()),
           "unsloth_installed": unsloth,
           "vllm_installed": importlib.util.find_spec("vllm") is not None,
           "backend_auto": choose_backend("auto", cuda, unsloth)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env["backend_asked_unsloth"] = choose_backend(True, cuda, unsloth)
    env["backend_asked_unsloth_warning"] = [str(w.message) for w in caught]
    for name in ("transformers", "trl", "peft", "datasets", "accelerate"):
        env[name] = __import__(name).__version__
    return env


def stage_facts(model_dir: Path) -> dict:
    """Backend, dtype, steps and seconds a step from a stage's manifest."""
    m = json.loads((model_dir / "manifest.json").read_text())
    metrics = m.get("metrics", {})
    return {"backend": m.get("backend"), "wall_s": m.get("wall_s"),
            "steps": metrics.get("steps"), "train_seconds": metrics.get("train_seconds"),
            "seconds_per_step": metrics.get("seconds_per_step"),
            "train_loss": metrics.get("train_loss"), "mining": metrics.get("mining")}


def heldout_judgement(model_dir: Path, rows: list[dict], max_tokens: int) -> dict:
    from mags_lib.train.evaluate import generate_and_score

    judged = generate_and_score(str(model_dir), rows, "write", max_tokens=max_tokens,
                                n_samples=SAMPLES)
    return {k: judged.get(k) for k in ("n", "adherence", "accuracy", "op_accuracy",
                                       "op_balanced", "op_confusion", "op_dropped", "fact_exact",
                                       "seconds", "samples")}


def run_one(name: str, seed: int, args: argparse.Namespace, out: Path,
            heldout_rows: list[dict], base_rows: int, adapters: bool) -> dict:
    from mags_lib.train.roles import RoleTrainConfig
    from mags_lib.train.stages import train_role

    spec = VARIANTS[name]
    cfg = RoleTrainConfig(role="write", smoke=args.smoke, seed=seed,
                          base_model=args.base_model, data_dir=args.data_dir,
                          models_dir=str(Path(args.models_dir) / f"{name}-s{seed}"),
                          base_eval_rows=base_rows).with_steps(spec["sft_steps"])
    if spec["decision_weight"] is not None:
        cfg.sft = replace(cfg.sft, decision_token_weight=spec["decision_weight"])
    t0 = time.perf_counter()
    report = train_role(cfg)
    result = {"variant": name, "seed": seed, "sft_steps": cfg.sft.max_steps,
              "decision_weight": cfg.sft.decision_token_weight,
              "train_role_s": time.perf_counter() - t0,
              "table": report.table(), "selected": report.selected, "stages": {},
              "heldout": {}, "adapters": {}}
    for stage in ("sft", "grpo"):
        d = cfg.model_dir(stage)
        rec = report.stages[stage]
        result["stages"][stage] = {**stage_facts(d), "peak_cuda_mb": rec.peak_cuda_mb,
                                   "peak_rss_mb": rec.peak_rss_mb,
                                   "val_write": {k: v for k, v in rec.generation.get(
                                       "write", {}).items() if k != "samples"}}
        result["heldout"][stage] = heldout_judgement(d, heldout_rows, cfg.eval_max_tokens)
        if adapters:
            from mags_lib.train.adapters import save_adapter_bf16

            result["adapters"][stage] = save_adapter_bf16(
                d / "adapter", out / f"{name}-s{seed}-{stage}.safetensors")
    result["wall_s"] = time.perf_counter() - t0
    return result


def recipe_parser(doc: str, models_dir: str, runs: list[str], variants: dict
                  ) -> argparse.ArgumentParser:
    """The arguments every recipe runner takes: base model, data, models, output, runs, smoke."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--base-model", default="embedded")
    ap.add_argument("--data-dir", default=None, help="default: data/synth/ (notebook 01)")
    ap.add_argument("--models-dir", default=models_dir)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", nargs="+", default=runs,
                    help=f"VARIANT:SEED, in priority order (variants: {', '.join(variants)})")
    ap.add_argument("--smoke", action="store_true", help="the same path at tiny sizes")
    return ap


def parse_runs(ap: argparse.ArgumentParser, specs: list[str], variants: dict
               ) -> list[tuple[str, int]]:
    """`--runs VARIANT:SEED ...` as (variant, seed) pairs; a bad one stops `ap` with the fix."""
    runs = []
    for r in specs:
        name, _, seed = r.partition(":")
        if name not in variants or not seed.isdigit():
            ap.error(f"--runs {r!r}: write VARIANT:SEED, e.g. {next(iter(variants))}:0, with a "
                     f"variant among {', '.join(variants)}")
        runs.append((name, int(seed)))
    return runs


def main() -> None:
    ap = recipe_parser(__doc__, "models/write_recipes", ["recipe:0", "op10x360:0"], VARIANTS)
    ap.add_argument("--adapters", type=int, default=2,
                    help="save the bf16 adapters of the first N runs")
    ap.add_argument("--base-eval-rows", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=None,
                    help="skip a run whose estimated time would overrun this")
    args = ap.parse_args()
    runs = parse_runs(ap, args.runs, VARIANTS)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from mags_lib.synth import SynthConfig
    from mags_lib.synth.chains import heldout_write_rows
    from mags_lib.train.roles import ROLE_RECIPES

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    summary = {"environment": environment(), "args": vars(args), "runs": {}, "skipped": []}
    synth_cfg = SynthConfig(smoke=args.smoke).resolved()
    heldout_rows = heldout_write_rows(synth_cfg.split_seeds()["test"], synth_cfg,
                                      3 if args.smoke else HELDOUT_PER_OP, 0)  # notebook 03's
    last: dict | None = None  # the last run's result
    for i, (name, seed) in enumerate(runs):
        steps = VARIANTS[name]["sft_steps"] or ROLE_RECIPES["write"].sft_steps
        if args.budget_s and last:
            # the last run's fixed part (judging, GRPO, loading) plus this run's SFT steps
            sft = last["stages"]["sft"]
            estimate = (last["wall_s"] - sft["train_seconds"]
                        + steps * sft["seconds_per_step"])
            if time.perf_counter() - t0 + estimate > args.budget_s:
                summary["skipped"].append({"run": f"{name}:{seed}", "estimate_s": estimate})
                continue
        result = run_one(name, seed, args, out, heldout_rows,
                         args.base_eval_rows if i == 0 else 1, i < args.adapters)
        summary["runs"][f"{name}:{seed}"] = result
        last = result
        summary["elapsed_s"] = time.perf_counter() - t0
        (out / "write_recipes.json").write_text(json.dumps(summary, indent=1, default=str))
    (out / "write_recipes.json").write_text(json.dumps(summary, indent=1, default=str))
    for key, r in summary["runs"].items():
        for stage, h in r["heldout"].items():
            print(key, stage, "held-out op accuracy", h["op_accuracy"], "F1", h["accuracy"],
                  "s/step", r["stages"][stage]["seconds_per_step"])


if __name__ == "__main__":
    main()
