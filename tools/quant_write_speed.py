"""Seconds per write call and agreement of two GGUF quantisations of the write model.

    python tools/quant_write_speed.py [--a models/gguf/write-grpo-q8_0.gguf]
                                      [--b models/gguf/write-grpo-q4_k_m.gguf] [--per-op 10]

The closed loop's own write messages on notebook 01's first two val games in the *held-out*
phrasings (`heldout_write_rows`, `--per-op` rows per gold op), greedy, stopped at `</engram>`,
generation cache off, one warm-up call each. Prints seconds per call for each file and how many
outputs are identical. The journal's 2026-11-26 (morning) numbers (q8_0 0.85 s, q4_k_m 0.96 s,
17 of 30 identical) are this run's defaults.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    from mags_lib.llm import LLMConfig, load_llm
    from mags_lib.synth import SynthConfig
    from mags_lib.synth.chains import heldout_write_rows

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", default="models/gguf/write-grpo-q8_0.gguf", help="first .gguf")
    ap.add_argument("--b", default="models/gguf/write-grpo-q4_k_m.gguf", help="second .gguf")
    ap.add_argument("--per-op", type=int, default=10, help="rows per gold op")
    args = ap.parse_args()
    cfg = SynthConfig()
    rows = heldout_write_rows(cfg.split_seeds()["val"][:2], cfg, n_per_op=args.per_op)
    outputs = {}
    for path in (args.a, args.b):
        llm = load_llm(LLMConfig(model=path, n_ctx=1024, cache=False))
        kw = {"max_tokens": 96, "temperature": 0.0, "seed": 0, "stop": ["</engram>"]}
        llm.chat(rows[0]["prompt"], **kw)  # warm-up
        t0 = time.perf_counter()
        outputs[path] = [llm.chat(r["prompt"], **kw).text for r in rows]
        print(f"{path}: {(time.perf_counter() - t0) / len(rows):.3f} s per write call")
    same = sum(a == b for a, b in zip(outputs[args.a], outputs[args.b], strict=True))
    print(f"identical outputs: {same} of {len(rows)}")


if __name__ == "__main__":
    main()
