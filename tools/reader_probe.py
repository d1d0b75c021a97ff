"""Probe the reader (the open-answer model) alone on the development personas' current-fact rows.

Does the reader lose current facts because the question is worded in a way training never
showed, or because it picks the wrong line? Each current-fact answer row of notebook 01's val
split (the development personas; never a test row) is answered as written, then again with one
change:

- `phrasing`: the question reworded into a *training* wording of the same attribute and person
  (`persona_phrases` training part plus `persona_train_phrases`), the lines as they were;
- `person`: the question as written, the lines cut to those naming the person asked about
  (all of them where none does).

    python tools/reader_probe.py                                  # the deployed reader, both
    python tools/reader_probe.py --model other/answer-grpo-q8_0.gguf --variants phrasing
    python tools/reader_probe.py --rows 5                          # a few rows, seconds

Scored as notebook 12 scores a current question (`qa_metrics.persona_flags`: the current value
named and no stale one). Prints a JSON object: per variant the 2 x 2 table of (as written right,
variant right), and the rows that changed with both answers. The journal's entry "2026-12-06
(fifth session)" holds a run.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

VARIANTS = ("phrasing", "person")
_NAME = re.compile(r"\b([A-Z][a-z]+)(?:'s)?\b")


def asked_about(observation: str) -> tuple[str, str, bool]:
    """(asker, person asked about, whether the asker asks about themself) of "Asker: question".

    >>> asked_about("Tomas: What is Hugo's job these days?")
    ('Tomas', 'Hugo', False)
    >>> asked_about("Lena: Which car do I own these days?")
    ('Lena', 'Lena', True)
    """
    asker, _, question = observation.partition(": ")
    names = [n for n in _NAME.findall(question)[1:] if n != asker]  # the first word is capital
    return (asker, names[0], False) if names else (asker, asker, True)


def training_question(observation: str, answer: str, rng: random.Random) -> str | None:
    """`observation` reworded into a training wording of the attribute whose values include
    `answer`, about the same person (None where no attribute or form fits)."""
    from mags_lib.conversations import persona_phrases as P
    from mags_lib.conversations.persona_train_phrases import clause_extra

    asker, who, own = asked_about(observation)
    attrs = [a for a in P.ATTRIBUTES if answer in a.values]
    if not attrs:
        return None
    form = attrs[0].self_form if own else attrs[0].other_form
    if form is None:
        return None
    bank = P.split_of(form.ask_current, "train") + clause_extra(
        attrs[0].name, "self" if own else "other", "ask_current")
    return f"{asker}: {rng.choice(bank).format(name=who)}"


def main() -> None:
    from mags_lib import paths
    from mags_lib.agents.open_answer import answer_open
    from mags_lib.conversations.types import QA
    from mags_lib.evaluation.qa_metrics import persona_flags
    from mags_lib.llm import LLMConfig, load_llm

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(paths.GGUF_DIR / "answer-grpo-q8_0.gguf"),
                    help="the reader's .gguf")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--rows", type=int, default=None, help="the first N rows only")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    path = Path(paths.SYNTH_DATA_DIR) / "answer" / "val.jsonl"
    rows = [json.loads(x) for x in path.open() if x.strip()]
    rows = [r for r in rows if r["gold"].get("source") == "persona"
            and r["gold"].get("kind") == "current" and r["gold"].get("answerable")]
    rows = rows[: args.rows] if args.rows else rows
    llm = load_llm(LLMConfig(model=args.model, n_threads=args.threads))

    def right(lines: list[str], question: str, gold: dict) -> tuple[bool, str]:
        answer, _ = answer_open(llm, lines, question)
        qa = QA(question, gold["answer"], (), 4, kind="current", stale=tuple(gold["stale"]))
        return persona_flags(qa, answer)["current_accuracy"], answer

    as_written = [right(r["gold"]["lines"], r["gold"]["observation"], r["gold"]) for r in rows]
    out: dict = {"model": args.model, "rows": len(rows), "data": str(path)}
    for variant in args.variants:
        table, changed, skipped = Counter(), [], 0
        for r, (ok0, a0) in zip(rows, as_written, strict=True):
            g = r["gold"]
            question, lines = g["observation"], g["lines"]
            if variant == "phrasing":
                question = training_question(g["observation"], g["answer"],
                                             random.Random(g["observation"]))
            else:
                who = asked_about(g["observation"])[1]
                lines = [ln for ln in g["lines"] if who in ln] or g["lines"]
            if question is None:
                skipped += 1
                continue
            ok1, a1 = right(lines, question, g)
            table[f"as written {'right' if ok0 else 'wrong'}, "
                  f"{variant} {'right' if ok1 else 'wrong'}"] += 1
            if ok0 != ok1:
                changed.append({"question": g["observation"], "answer": a0,
                                "variant_question": question, "variant_answer": a1,
                                "gold": g["answer"]})
        out[variant] = {"table": dict(sorted(table.items())), "skipped": skipped,
                        "right_as_written": sum(v for k, v in table.items()
                                                if k.startswith("as written right")),
                        "right_in_variant": sum(v for k, v in table.items()
                                                if k.endswith(f"{variant} right")),
                        "changed": changed}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
