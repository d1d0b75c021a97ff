"""More agents on notebook 10's TextWorld games, without replaying the notebook's.

    python tools/textworld_agents.py mags_prompted [--out results/10_textworld/extra.json]
    python tools/textworld_agents.py bare oracle --seeds 0 1 2 3 4 5 --out .../validity.json

Runs `run_textworld_eval` with notebook 10's defaults (kinds, levels 5 and 10, seeds 0-2, 30
steps, the base model deciding at temperature 0.7) for the named agents only, prints the pooled
rows and saves the games (the same record as notebook 10's `metrics.json`). The games are the
same generated games, and a sampled decision of turn t uses seed t, so the rows compare with the
notebook's game by game.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from mags_lib.evaluation.textworld_eval import (
        TextWorldEvalConfig,
        run_textworld_eval,
        textworld_markdown,
    )
    from mags_lib.paths import results_dir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="+")
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help="tw-make seeds (default notebook 10's: 0 1 2)")
    ap.add_argument("--temperature", type=float, default=None,
                    help="decision temperature (default notebook 10's: 0.7)")
    ap.add_argument("--out", default=None, help="default results/10_textworld/extra.json")
    args = ap.parse_args()
    given = {"seeds": args.seeds, "temperature": args.temperature}
    cfg = TextWorldEvalConfig(agents=args.agents,  # validated like notebook 10's config
                              **{k: v for k, v in given.items() if v is not None})
    result = run_textworld_eval(cfg)
    print(textworld_markdown(result["rows"]))
    out = Path(args.out) if args.out else results_dir("10_textworld") / "extra.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
