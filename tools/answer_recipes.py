"""Variants of the answer model's training recipe, judged by the order probe.

Does the choice follow the options' order? Each variant is trained as notebook 02 trains it and
judged by the order probe (`evaluation/answer_order.py`).

    python tools/answer_recipes.py --out DIR --runs recipe:0 twins:0     # here, on a CPU
    python tools/answer_recipes.py --base-model SmolLM2-135M-Instruct.Q4_1.gguf --out DIR \\
        --runs recipe:0 twins:0 recipe:1 twins:1          # a GPU (the probe scores there too)
    python tools/answer_recipes.py --smoke --out /tmp/answer_recipes   # the same path, seconds

For each run (`--runs VARIANT:SEED ...`): `train_role` for the answer role (the function notebook
02 calls: SFT, GRPO, val and test judged), then the order probe on the selected model, over the
completion-format answer rows of val and test (every rotation of each row's options, choices read
off the model's scores). Variants:
- `recipe`: the answer role as notebook 02 trained it until 2026-11-27: 30 SFT steps;
- `twins`: the same steps on notebook 01's training rows written once per rotation of the
  options (`chains.order_twins`, what `SynthConfig.answer_all_orders` writes);
- `recipe60`, `twins60`: both at 60 SFT steps (`recipe60` is `ROLE_RECIPES["answer"]` since),
  to tell the rows from the steps apart.

Writes DIR/answer_recipes.json after every run: per run the stage table, the selected stage and
the probe's summary (accuracy by the right item's place, order-consistent rows, the debiased
accuracy). The journal's entry "2026-11-27 (afternoon)" holds the runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from write_recipes import environment, parse_runs, recipe_parser  # noqa: E402  (tools/ is not a package)

VARIANTS: dict[str, dict] = {
    "recipe": {"sft_steps": 30, "twins": False},
    "twins": {"sft_steps": 30, "twins": True},
    "recipe60": {"sft_steps": 60, "twins": False},
    "twins60": {"sft_steps": 60, "twins": True},
}


def twins_data(data_dir: Path, out: Path) -> Path:
    """A data folder whose answer train rows come once per rotation of their options (val and
    test as they are, the other tasks linked); returns it."""
    from mags_lib.objectives.data import write_jsonl
    from mags_lib.synth.chains import order_twins

    (out / "answer").mkdir(parents=True, exist_ok=True)
    for task in ("ask", "write"):
        link = out / task
        if not link.exists() and (data_dir / task).exists():
            link.symlink_to((data_dir / task).resolve())
    for split in ("train", "val", "test"):
        rows = [json.loads(x) for x in (data_dir / "answer" / f"{split}.jsonl").open()
                if x.strip()]
        if split == "train":
            rows = [t for r in rows for t in order_twins(r)]
        write_jsonl(out / "answer" / f"{split}.jsonl", rows)
    return out


def probe_rows(data_dir: Path, smoke: bool) -> list[dict]:
    from mags_lib.objectives.data import load_jsonl

    rows = []
    for split in ("val", "test"):
        rows += load_jsonl(data_dir / "answer" / f"{split}.jsonl", task="answer")[0]
    return rows[:12] if smoke else rows


def run_one(name: str, seed: int, args: argparse.Namespace, data: dict[bool, Path],
            rows: list[dict]) -> dict:
    from mags_lib.evaluation.answer_order import order_probe
    from mags_lib.llm import load_llm
    from mags_lib.train.roles import RoleTrainConfig
    from mags_lib.train.stages import train_role

    spec = VARIANTS[name]
    cfg = RoleTrainConfig(role="answer", smoke=args.smoke, seed=seed, base_model=args.base_model,
                          data_dir=str(data[spec["twins"]]), base_eval_rows=1,
                          models_dir=str(Path(args.models_dir) / f"{name}-s{seed}"),
                          ).with_steps(spec["sft_steps"])
    t0 = time.perf_counter()
    report = train_role(cfg)
    result = {"variant": name, "seed": seed, "sft_steps": cfg.sft.max_steps,
              "twins": spec["twins"], "train_role_s": time.perf_counter() - t0,
              "table": report.table(), "selected": report.selected}
    model_dir = cfg.model_dir(report.selected["stage"])  # notebook 02's rule: best val accuracy
    llm = load_llm(model=str(model_dir), backend="transformers")
    probe = order_probe(llm, rows)
    result["probe"] = probe.summary
    result["model_dir"] = str(model_dir)
    result["wall_s"] = time.perf_counter() - t0
    return result


def main() -> None:
    ap = recipe_parser(__doc__, "models/answer_recipes", ["recipe:0", "twins:0"], VARIANTS)
    args = ap.parse_args()
    runs = parse_runs(ap, args.runs, VARIANTS)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from mags_lib.paths import SYNTH_DATA_DIR

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data_dir = Path(args.data_dir) if args.data_dir else SYNTH_DATA_DIR
    data = {False: data_dir, True: twins_data(data_dir, Path(args.models_dir) / "data_twins")}
    rows = probe_rows(data_dir, args.smoke)
    summary = {"environment": environment(), "args": vars(args), "runs": {}}
    t0 = time.perf_counter()
    for name, seed in runs:
        summary["runs"][f"{name}:{seed}"] = run_one(name, seed, args, data, rows)
        summary["elapsed_s"] = time.perf_counter() - t0
        (out / "answer_recipes.json").write_text(json.dumps(summary, indent=1, default=str))
    for key, r in summary["runs"].items():
        p = r["probe"]
        print(key, r["selected"]["stage"], "accuracy", p["accuracy"], "first", p["by_place"]["first"],
              "last", p["by_place"]["last"], "consistent", p["consistent"], "debiased",
              p["debiased"]["all"])


if __name__ == "__main__":
    main()
