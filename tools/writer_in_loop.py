"""Compare write models in the closed loop on notebook 01's val games (training phrasings).

    python tools/writer_in_loop.py models/gguf/write-grpo-q8_0.gguf other/write-grpo-q8_0.gguf
    python tools/writer_in_loop.py models/gguf/write-grpo-q8_0.gguf --agents mags mags_working
    python tools/writer_in_loop.py a.gguf b.gguf --evaluation   # notebook 06's games instead

Each write model plays `--agents` (default `mags`; the trained ask model, notebook 04's answer
model) on the first `--games` val seeds of notebook 01's split, varied surface, *training*
phrasings: games no model was trained on and that notebook 06 does not evaluate on, so a recipe
can be chosen here without the evaluation games (`mags_lib.evaluation.write_models`, which
notebook 08 uses on the evaluation games). Prints the table; games go to
results/scratch_writer_in_loop/<n>/. The journal's 2026-11-26 comparison (0.841 against 0.873)
was this run with the op-weighted and the plain writer; `--agents mags mags_working` gave the
working-memory comparison.
"""

from __future__ import annotations

import argparse
import json

from mags_lib.evaluation.write_models import WriterLoopConfig, markdown, play_writers
from mags_lib.synth import SynthConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("write_models", nargs="+", help="write model .gguf files")
    ap.add_argument("--games", type=int, default=3, help="seeds played per model")
    ap.add_argument("--turns", type=int, default=200, help="turns per game")
    ap.add_argument("--agents", nargs="+", default=["mags"],
                    help="closed-loop agents to play with each write model (registry names)")
    ap.add_argument("--evaluation", action="store_true",
                    help="notebook 06's games (seeds 0.., held-out phrasings), not val games")
    ap.add_argument("--loop", nargs="*", default=[], metavar="KEY=JSON",
                    help="LoopConfig overrides, e.g. grounding_words=true")
    args = ap.parse_args()
    if args.evaluation:
        cfg = WriterLoopConfig(seeds=list(range(args.games)), phrasings="heldout")
    else:
        seeds = SynthConfig().resolved().split_seeds()["val"][: args.games]
        cfg = WriterLoopConfig(seeds=seeds, phrasings="train")
    cfg.turns, cfg.agents, cfg.output = args.turns, list(args.agents), "scratch_writer_in_loop"
    cfg.loop = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.loop)}
    writers = {str(n): path for n, path in enumerate(args.write_models)}
    print(markdown(play_writers(writers, cfg)))


if __name__ == "__main__":
    main()
