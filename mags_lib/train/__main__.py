"""`python -m mags_lib.train --role ask [--smoke]`: train one role end to end, print JSON.

    python -m mags_lib.train --role ask --smoke --torch-threads 1     # seconds, on a CPU
    python -m mags_lib.train --role write --sft-steps 200 --grpo-steps 100 --out results/x

It calls `train_role(RoleTrainConfig(...))`, the same function notebooks 02 and 03 call, and
prints the report's metrics as JSON (the table, the targets, timings); `--out DIR` also saves the
table, curves and full report there.

Several GPUs (data-parallel, one process per GPU, via accelerate):

    accelerate launch --config_file configs/accelerate_multi_gpu.yaml \\
        -m mags_lib.train --role ask --no-unsloth

The TRL trainers shard each batch over the processes (`per_device_train_batch_size` is per GPU,
so the effective batch grows with the GPU count); saving, manifests and the judged evaluations
run on the main process only. Unsloth is single-GPU, hence `--no-unsloth` (PEFT + DDP).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace

from mags_lib.train.roles import ROLES, RoleTrainConfig


def _source_repeat(text: str) -> tuple[str, int]:
    source, _, n = text.partition("=")
    if not source or not n.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not SOURCE=N (e.g. game=2)")
    return source, int(n)


def build_config(args: argparse.Namespace) -> RoleTrainConfig:
    sizes = {k: v for k, v in (("eval_rows", args.eval_rows),
                                ("base_eval_rows", args.base_eval_rows)) if v is not None}
    cfg = RoleTrainConfig(role=args.role, smoke=args.smoke, seed=args.seed,
                          torch_threads=args.torch_threads, base_model=args.base_model,
                          data_dir=args.data_dir, models_dir=args.models_dir,
                          eval_test=not args.no_test,
                          source_repeats=dict(getattr(args, "source_repeats", None) or []),
                          sources=getattr(args, "sources", None),
                          **sizes)
    cfg = cfg.with_steps(args.sft_steps, args.grpo_steps)
    sft, grpo = cfg.sft, cfg.grpo
    if args.no_unsloth:
        sft, grpo = replace(sft, use_unsloth=False), replace(grpo, use_unsloth=False)
    return replace(cfg, sft=sft, grpo=grpo)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mags_lib.train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--role", choices=ROLES, required=True)
    ap.add_argument("--smoke", action="store_true", help="shrink every size (same code path)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sft-steps", type=int, default=None, help="default: the role's")
    ap.add_argument("--grpo-steps", type=int, default=None, help="default: the role's")
    ap.add_argument("--eval-rows", type=int, default=None,
                    help="val rows judged per task (default: RoleTrainConfig's)")
    ap.add_argument("--base-eval-rows", type=int, default=None,
                    help="of those, the first N judge the base model (default: all)")
    ap.add_argument("--no-test", action="store_true", help="skip judging the test split")
    ap.add_argument("--torch-threads", type=int, default=None)
    ap.add_argument("--base-model", default="embedded")
    ap.add_argument("--data-dir", default=None, help="default: data/synth/")
    ap.add_argument("--models-dir", default=None, help="default: models/")
    ap.add_argument("--source-repeats", nargs="*", type=_source_repeat, metavar="SOURCE=N",
                    help="train rows of SOURCE (game, persona, locomo) seen N times, e.g. game=2")
    ap.add_argument("--sources", nargs="+", default=None, metavar="SOURCE",
                    help="train and judge on these sources' rows only (game, persona, locomo); "
                         "default: all (the mixed models)")
    ap.add_argument("--no-unsloth", action="store_true", help="PEFT even on a CUDA GPU")
    ap.add_argument("--out", default=None, help="also save table, curves, report here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from mags_lib.train.common import is_main_process
    from mags_lib.train.stages import train_role

    report = train_role(build_config(args))
    if not is_main_process():
        return 0
    if args.out:
        report.save(args.out)
    print(json.dumps({"table": report.table(), **report.metrics()}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
