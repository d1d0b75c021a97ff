"""Command line of the GGUF export; prints one JSON object on stdout.

    python -m mags_lib.export models/ask-grpo --quant q8_0 q4_k_m
    python -m mags_lib.export embedded --quant f16 --n-prompts 4      # the exporter's self-check
    python -m mags_lib.export models/ask-grpo --no-verify --out-dir /tmp/gguf
"""

from __future__ import annotations

import argparse
import json
import sys

from mags_lib.errors import MagsError
from mags_lib.export.config import QUANT_TYPES, ExportConfig


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mags_lib.export", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="+",
                   help="checkpoint dirs (config.json + safetensors) or 'embedded'")
    p.add_argument("--quant", nargs="+", default=["f16", "q8_0", "q4_k_m"],
                   choices=list(QUANT_TYPES), help="GGUF types to write")
    p.add_argument("--base-type", default="f16", choices=["f16", "f32"],
                   help="float file quantised from")
    p.add_argument("--reference", default="embedded",
                   help="GGUF whose tokenizer and hyper-parameters are copied")
    p.add_argument("--out-dir", default=None, help="default models/gguf/")
    p.add_argument("--no-verify", action="store_true",
                   help="skip the greedy comparison with the checkpoint")
    p.add_argument("--n-prompts", type=int, default=8, help="prompts for the comparison")
    p.add_argument("--max-tokens", type=int, default=48, help="greedy tokens per prompt")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default all)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from mags_lib.export.run import export_and_verify

    try:
        cfg = ExportConfig(models=args.models, quant_types=args.quant, base_type=args.base_type,
                           reference_gguf=args.reference, out_dir=args.out_dir,
                           verify=not args.no_verify, n_prompts=args.n_prompts,
                           max_tokens=args.max_tokens, n_threads=args.threads)
        result = export_and_verify(cfg)
    except MagsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
