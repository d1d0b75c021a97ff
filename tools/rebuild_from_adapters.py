"""Rebuild a model trained elsewhere (a GPU) from its LoRA adapters, here on a CPU.

    python tools/rebuild_from_adapters.py DIR/write_recipes.json op10x360:0 --out models/gpu/m
    python -m mags_lib.export models/gpu/m --quant q8_0 --out-dir models/gpu/gguf

`tools/write_recipes.py` brings back each stage's adapter (`<variant>-s<seed>-<stage>.safetensors`,
bf16, beside the JSON, which holds the adapters' configs). The SFT adapter is loaded onto the
base model (`torch_checkpoint`, the same dequantised GGUF the GPU trained from) and merged; the
GRPO adapter, trained on that merged SFT model, is loaded onto it and merged; the result is
saved as a transformers checkpoint that notebook 04's exporter and notebook 03's judging read.
Numerics differ slightly from the GPU's own merge (fp32 here, bf16 there; adapters rounded to
bf16 to travel), so judge the rebuilt model again rather than trusting the GPU's numbers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("summary", help="write_recipes.json (its adapters lie beside it)")
    ap.add_argument("run", help="VARIANT:SEED, as in the JSON's runs")
    ap.add_argument("--out", required=True, help="checkpoint directory to write")
    ap.add_argument("--base-model", default="embedded")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mags_lib.models import torch_checkpoint
    from mags_lib.train.adapters import merge_adapter

    summary_path = Path(args.summary)
    if not summary_path.is_file():
        raise SystemExit(f"{summary_path} not found: pass the JSON tools/write_recipes.py wrote")
    runs = json.loads(summary_path.read_text()).get("runs", {})
    if args.run not in runs:
        raise SystemExit(f"{summary_path} has no run {args.run!r}; it has {', '.join(runs)}")
    run = runs[args.run]
    if not run.get("adapters"):
        raise SystemExit(f"run {args.run} brought back no adapters (see --adapters of "
                         "tools/write_recipes.py)")
    variant, seed = args.run.split(":")
    base = torch_checkpoint(args.base_model)
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    for stage in ("sft", "grpo"):  # GRPO's adapter was trained on the merged SFT model
        adapter = summary_path.parent / f"{variant}-s{seed}-{stage}.safetensors"
        model = merge_adapter(model, adapter, run["adapters"][stage])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    (out / "rebuilt_from.json").write_text(json.dumps(
        {"summary": str(summary_path.resolve()), "run": args.run, "base": str(base),
         "environment": json.loads(summary_path.read_text())["environment"]}, indent=1))
    print(out)


if __name__ == "__main__":
    main()
