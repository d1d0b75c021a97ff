"""Sweep memory recall settings on raw conversation turns; name the one a rule would adopt.

    python tools/recall_settings_sweep.py OUT.json                      # development splits
    python tools/recall_settings_sweep.py OUT.json --only current stem  # some settings
    python tools/recall_settings_sweep.py OUT.json --split test --only current stem

Every turn of each conversation is written verbatim into a fresh `LiquidMemory` with
`memory.DIALOGUE_MEMORY` plus one setting's overrides (`--settings`, a JSON file of name ->
`MemoryConfig` overrides; keys starting with "_" are comments), and every question with gold
evidence is recalled (`evaluation.evidence_recall.settings_sweep`). Development: LoCoMo's five
training conversations and the six development personas; test: LoCoMo's five test
conversations and the test personas, for a setting already chosen. Prints a markdown table and
the choice (highest mean recall@10 among settings that lose at most --max-loss on any source;
adopted only if it gains --min-gain), and writes everything to OUT.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / "configs/sweeps/recall_settings_2026-11-30.json"


def main() -> None:
    from mags_lib.errors import MagsError

    try:
        run()
    except MagsError as exc:
        raise SystemExit(f"error: {exc}") from None


def run() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON file for the sweep")
    ap.add_argument("--settings", default=str(DEFAULT), help="JSON file: name -> overrides")
    ap.add_argument("--only", nargs="+", default=None, help="these settings ('current' always)")
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--personas", type=int, default=6, help="development personas")
    ap.add_argument("--max-loss", type=float, default=0.01)
    ap.add_argument("--min-gain", type=float, default=0.02)
    args = ap.parse_args()
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.conversation_study import study_embedder
    from mags_lib.evaluation.evidence_recall import settings_markdown, settings_sweep
    from mags_lib.tasks.registry import get_task

    path = Path(args.settings)
    try:
        loaded = json.loads(path.read_text())
        if not isinstance(loaded, dict) or not all(
                isinstance(v, dict) for k, v in loaded.items() if not k.startswith("_")):
            raise ValueError("not a JSON object of name -> object")
        settings = {k: v for k, v in loaded.items() if not k.startswith("_")}
    except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise MagsError(f"cannot read the settings file {path}: {exc}",
                        "pass --settings with a JSON object of name -> MemoryConfig overrides"
                        ) from exc
    if args.only:
        unknown = sorted(set(args.only) - set(settings) - {"current"})
        if unknown:
            raise MagsError(f"unknown settings {unknown} (not in {path})",
                            f"use some of {sorted(settings)}")
        settings = {k: v for k, v in settings.items() if k in args.only}
    locomo, persona = get_task("locomo"), get_task("persona")
    if not locomo.available():
        raise MagsError(locomo.missing_message(), "set MAGS_LOCOMO or run `make data`")
    if args.split == "dev":
        sources = {"LoCoMo train": locomo.episodes("train", None),
                   "persona dev": persona.episodes("dev", args.personas)}
    else:
        sources = {"LoCoMo test": locomo.episodes("test", None),
                   "persona test": persona.episodes("test", None)}
    sweep = settings_sweep(sources, study_embedder("minilm"), settings,
                           max_loss=args.max_loss, min_gain=args.min_gain)
    print(settings_markdown(sweep))
    print(f"\nchosen: {sweep['best']} (mean recall@10 {sweep['gain']:+.4f} against current); "
          f"adopt: {sweep['adopt']}")
    Path(args.out).write_text(json.dumps({"split": args.split, **sweep}, indent=1))


if __name__ == "__main__":
    main()
