"""Does the write model's op follow the memory it is shown? A counterfactual probe.

    python tools/op_memory_probe.py OUT.json                          # notebook 04's writer
    python tools/op_memory_probe.py OUT.json --write W.gguf --sets persona-fresh

Each persona write row, prompted as in play (`synth.conversation_rows.persona_judge_rows`), is
scored as it is and again with the memory changed so that another op is right
(`conversation_rows.judge_memory_twin`, the same change `SynthConfig.memory_twin_share` trains
on):

- `update->add`: an update with its old fact left out of the memory; add is right;
- `none->add`: a repeat (nothing to store) with the fact it repeats left out; add is right;
- `add->update`: an add shown beside an older value of the same attribute and person; update is
  right.

The op is the best-scored opening of the reply begun `<engram>\\n` (`agents.loop.op_scores`,
margin 0). Per kind the report gives `right_as_shown`, `right_changed` and `moved` (rows whose op
differs between the two memories). A writer that reads the memory moves on most rows; one that
picks the op from the turn's words alone moves on none (the deployed writer moved on 0-2 of about
230 rows per set, 2026-12-07). No test split is read; rows without such a twin (small talk,
several facts) are left out.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from typing import Any

from mags_lib.synth.conversation_rows import PERSONA_JUDGE_SETS

KINDS = ("update->add", "none->add", "add->update")


def probe(llm: Any, rows: list[dict], rng: random.Random, limit: int = 3,
          examples: int = 40) -> dict:
    """Score each row of `rows` (judge rows) as shown and with its memory twin; the table per
    kind, the cells (kind, op as shown, op changed) and up to `examples` rows."""
    from mags_lib.agents.loop import op_scores
    from mags_lib.agents.role_prompts import play_write_messages
    from mags_lib.synth.conversation_rows import judge_memory_twin

    cells: Counter = Counter()
    shown: list[dict] = []
    for r in rows:
        made = judge_memory_twin(r["gold"], rng, limit)
        if made is None:
            continue
        memory, _, _, kind = made
        kind = kind.removeprefix("memory:")
        s1 = op_scores(llm, r["prompt"])
        s2 = op_scores(llm, play_write_messages(r["gold"]["observation"], memory))
        o1, o2 = max(s1, key=s1.get), max(s2, key=s2.get)
        cells[(kind, o1, o2)] += 1
        if len(shown) < examples:
            shown.append({"kind": kind, "observation": r["gold"]["observation"],
                          "memory": r["gold"]["memory_shown"], "changed": memory,
                          "op": o1, "op_changed": o2})
    table = {}
    for (kind, o1, o2), n in sorted(cells.items()):
        gold, want = kind.split("->")
        t = table.setdefault(kind, {"n": 0, "right_as_shown": 0, "right_changed": 0, "moved": 0})
        t["n"] += n
        t["right_as_shown"] += n * (o1 == gold)
        t["right_changed"] += n * (o2 == want)
        t["moved"] += n * (o1 != o2)
    return {"table": table, "cells": {" | ".join(k): v for k, v in sorted(cells.items())},
            "examples": shown}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="JSON report path")
    ap.add_argument("--write", default="auto", help="'auto' (notebook 04's) or a .gguf")
    ap.add_argument("--sets", nargs="+", default=list(PERSONA_JUDGE_SETS),
                    choices=list(PERSONA_JUDGE_SETS))
    ap.add_argument("--offset", type=int, default=6, help="first new development persona")
    ap.add_argument("--personas", type=int, default=12, help="new development personas")
    ap.add_argument("--fresh", type=int, default=12, help="personas of the fresh split")
    ap.add_argument("--limit", type=int, default=3,
                    help="memory lines an add->update twin keeps (SynthConfig.write_context)")
    args = ap.parse_args()

    from mags_lib.evaluation.conversation_study import model_ids, role_models
    from mags_lib.manifest import write_json
    from mags_lib.synth.conversation_rows import persona_judge_set

    roles, why = role_models({"write": args.write}, needed=("write",))
    if not roles:
        raise SystemExit(why)
    llm = roles["write"]
    out: dict = {"models": model_ids(llm, roles), "args": vars(args), "sets": {}}
    for name in args.sets:
        t0 = time.perf_counter()
        rows = persona_judge_set(name, args.fresh, args.personas, args.offset)
        got = probe(llm, rows, random.Random(f"probe:{name}"), args.limit)
        out["sets"][name] = {"seconds": round(time.perf_counter() - t0, 1), **got}
        print(name, json.dumps(got["table"]), f"{time.perf_counter() - t0:.0f} s", flush=True)
    write_json(args.out, out)
    print("saved", args.out)


if __name__ == "__main__":
    main()
