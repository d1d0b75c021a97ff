"""`python -m mags_lib bank BANK.json`: score a bank of phrasings as notebook 13 scores the
game's test bank, or (`--writer`) judge the write model alone on it, frame by frame.

    python -m mags_lib bank --example mine.json     # the training bank as a file to edit
    python -m mags_lib bank mine.json --smoke       # one short game: does the bank play?
    python -m mags_lib bank mine.json               # 3 seeds x 200 turns, the two targets
    python -m mags_lib bank mine.json --writer      # where the write model loses it
    python -m mags_lib bank mine.json --writer --write-model other.gguf   # another writer
    python -m mags_lib bank mine.json --agents mags --write-model other.gguf  # it, in play

The scoring is `evaluation.game_bank` (what it plays and writes), the frames
`evaluation.bank_writer`; results go to `results/game_bank/<bank name>/` (`writer.json` for the deployed write model,
`writer-<file>.json` for any other, which the README never reads). Games played with another
write model go to `results/game_bank/<bank name>/play-<file>/`, which the README never reads
either.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _judge_writer(args: argparse.Namespace) -> int:
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.bank_writer import (
        frames_markdown,
        is_deployed,
        judge_bank_writer,
        load_write_model,
        report_name,
        write_model_path,
    )
    from mags_lib.game.phrasing import bank
    from mags_lib.manifest import write_json
    from mags_lib.paths import results_dir
    from mags_lib.synth import SynthConfig
    from mags_lib.synth.chains import heldout_write_rows

    try:
        cfg = SynthConfig().resolved()  # the synthesis test seeds: no dataset holds their games
        rows = heldout_write_rows(cfg.split_seeds()["test"], cfg, args.per_op, 0,
                                  phrasings=args.bank)
        path = write_model_path(args.write_model)
        report = judge_bank_writer(args.bank, rows, load_write_model(path))
    except MagsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    deployed = is_deployed(path)
    report = {**report, "model_file": path.name, "deployed": deployed}
    out = results_dir(f"game_bank/{bank(args.bank).key}") / report_name(path, deployed)
    write_json(out, report)
    print(frames_markdown(report))
    print(json.dumps({"results": str(out)}))
    return 0


def _play_models(args: argparse.Namespace) -> tuple[dict[str, str] | None, Path | None]:
    """The loop's models and the results folder of a played bank: notebook 04's and the
    bank's own folder, or, with `--write-model` naming another file, that write model and
    `results/game_bank/<bank>/play-<file>/` (SMOKE: `<bank>_smoke/play-<file>/`)."""
    from mags_lib.evaluation.bank_writer import is_deployed, report_name, write_model_path
    from mags_lib.game.phrasing import bank
    from mags_lib.paths import results_dir

    if args.write_model == "auto":
        return None, None
    path = write_model_path(args.write_model)
    if is_deployed(path):
        return None, None
    folder = f"game_bank/{bank(args.bank).key}{'_smoke' if args.smoke else ''}"
    play = "play-" + report_name(path, False).removeprefix("writer-").removesuffix(".json")
    return {"ask": "auto", "write": str(path)}, results_dir(folder) / play


def main(argv: list[str] | None = None) -> int:
    from mags_lib.errors import MagsError
    from mags_lib.evaluation import game_bank

    ap = argparse.ArgumentParser(prog="python -m mags_lib bank", description=__doc__.split(
        "\n\n")[0].replace("`", ""))
    ap.add_argument("bank", help="a JSON bank of phrasings (or a built-in set: train, heldout, "
                                 "test)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--turns", type=int, default=200, help="turns a game")
    ap.add_argument("--agents", nargs="+", default=list(game_bank.GAME_AGENTS))
    ap.add_argument("--smoke", action="store_true", help="one short game, to check the bank")
    ap.add_argument("--fresh", action="store_true", help="replay games played before")
    ap.add_argument("--writer", action="store_true",
                    help="judge the write model alone on the bank's write turns, by frame "
                         "(no game played)")
    ap.add_argument("--per-op", type=int, default=20,
                    help="--writer: turns drawn per gold op (add / update / none)")
    ap.add_argument("--write-model", default="auto",
                    help="'auto' (notebook 04's write model) or a .gguf: the model judged "
                         "(--writer) or the one `mags` plays with (its games then go to "
                         "results/game_bank/<bank>/play-<file>/, never to the README)")
    ap.add_argument("--example", action="store_true",
                    help="write the training bank as JSON to BANK (a model to edit) and stop")
    args = ap.parse_args(argv)
    if args.example:
        from mags_lib.atomic import write_text
        from mags_lib.game.phrasing import bank_json

        path = Path(args.bank)
        if path.exists():
            print(f"{path} exists; choose a new path for the example", file=sys.stderr)
            return 2
        write_text(path, bank_json("train", name=path.stem))
        print(f"wrote the training bank to {path}; edit its lists, then score it: "
              f"python -m mags_lib bank {path}")
        return 0
    if args.writer:
        return _judge_writer(args)
    try:
        models, out_dir = _play_models(args)
        metrics = game_bank.score_bank(args.bank, seeds=args.seeds, episode_length=args.turns,
                                       agents=args.agents, smoke=args.smoke,
                                       resume=not args.fresh, models=models, out_dir=out_dir)
    except MagsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(game_bank.report(metrics))
    print(json.dumps({"results": metrics["out_dir"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
