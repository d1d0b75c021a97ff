"""Ask recorded decisions again, greedily and order-debiased, on the same memory lines.

    python tools/replay_decisions.py models/gguf/answer-grpo-q8_0.gguf OUT.json \
        "results/06_evaluate_game/varied/explain/*.jsonl"

Each explain record of an evaluation (`results/<run>/explain/<agent>_<seed>.jsonl`) holds the
question and the memory lines its agent showed the decision LLM. Both choices of
`agents/prompt.decide` are asked again on exactly those lines: one greedy answer, and the
order-debiased choice (`agents/option_order.py`). The decisions are paired, so McNemar's test
on the discordant pairs says whether the two differ. Prints, per agent (the explain folder's
parent and the file's agent name), the accuracy of each and split by where the right item stands
among the options, and writes one row per decision to OUT.json. The journal's entry
"2026-11-27 (day)" is this run. Records written before the options were kept (2026-11-27) get
their options from the question's "the a and the b" list.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import re
import time


def options_of(record: dict) -> list[str]:
    if record.get("options"):
        return list(record["options"])
    m = re.search(r"((?:the \w+, )*the \w+ and the \w+)", record["question"])
    if m is None:
        raise SystemExit(f"no options in {record['question']!r}: the record predates the "
                         "options field and does not list them as 'the a and the b'")
    return re.findall(r"the (\w+)", m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="the decision LLM (.gguf) that played the records")
    ap.add_argument("out", help="JSON file for the per-decision rows")
    ap.add_argument("explain", nargs="+", help="explain .jsonl files or glob patterns")
    ap.add_argument("--no-tags", action="store_true",
                    help="the decision LLM answers with the bare item (the base model)")
    args = ap.parse_args()

    from scipy.stats import binomtest

    from mags_lib.agents.prompt import decide
    from mags_lib.llm import LLMConfig, load_llm

    llm = load_llm(LLMConfig(model=args.model, n_ctx=1024))
    rows = []
    for pattern in args.explain:
        for path in sorted(glob.glob(pattern)):
            agent = path.split("/")[-3] + "/" + path.split("/")[-1].rsplit("_", 1)[0]
            with open(path) as f:
                records = [json.loads(line) for line in f if line.strip()]
            for r in records:
                opts, gold = options_of(r), r["correct_action"]
                lines = [x["text"] for x in r["recalled"]]
                row = {"agent": agent, "file": path, "turn": r["turn"],
                       "gold_first": opts.index(gold) == 0 if gold in opts else None,
                       "recorded_correct": r["correct"]}
                for name, debias in (("greedy", False), ("debiased", True)):
                    t0 = time.perf_counter()
                    choice = decide(llm, lines, r["question"], tuple(opts),
                                    answer_tags=not args.no_tags, debias_order=debias)
                    row[name] = choice.action == gold
                    row[name + "_s"] = time.perf_counter() - t0
                rows.append(row)
    with open(args.out, "w") as f:
        json.dump(rows, f)
    by = collections.defaultdict(list)
    for row in rows:
        by[row["agent"]].append(row)
    for agent, rs in by.items():
        only_g = sum(r["greedy"] and not r["debiased"] for r in rs)
        only_d = sum(r["debiased"] and not r["greedy"] for r in rs)
        p = binomtest(only_d, only_g + only_d).pvalue if only_g + only_d else 1.0
        parts = [f"{agent}: n {len(rs)}",
                 f"greedy {sum(r['greedy'] for r in rs) / len(rs):.3f}",
                 f"debiased {sum(r['debiased'] for r in rs) / len(rs):.3f}",
                 f"right only greedy / only debiased {only_g} / {only_d} (McNemar p {p:.2g})"]
        for where, first in (("first", True), ("later", False)):
            sub = [r for r in rs if r["gold_first"] is first]
            if sub:
                parts.append(f"right item {where}: {sum(r['greedy'] for r in sub) / len(sub):.3f}"
                             f" -> {sum(r['debiased'] for r in sub) / len(sub):.3f}")
        print("; ".join(parts))
    print(f"seconds a decision: greedy {sum(r['greedy_s'] for r in rows) / len(rows):.3f}, "
          f"debiased {sum(r['debiased_s'] for r in rows) / len(rows):.3f}")


if __name__ == "__main__":
    main()
