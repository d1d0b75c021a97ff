"""The write model alone on a bank of phrasings, frame by frame: where a bank's score is lost.

A bank's closed-loop score (`game_bank`) says how much `mags` loses on new words, not where.
This judges the write model by itself on the bank's write turns, prompted and decoded as in
play (`role_judge.judge_write`: op accuracy, the op confusion matrix, raw outputs), and splits
the result by *frame*: the template of the bank that produced each turn ("The crow corrects
itself: {rule}", a feedback sentence, a distractor), so that a frame the writer does not read
stands out.

    python -m mags_lib bank BANK.json --writer                  # the CLI (apps/bank_cli.py)
    rows = heldout_write_rows(test_seeds, synth_cfg, 20, 0, phrasings="bank.json")
    report = judge_bank_writer("bank.json", rows, write_llm)    # the same, in Python
    print(frames_markdown(report))

The command's turns are `synth.chains.heldout_write_rows` on the synthesis test seeds, drawn
20 per gold op (add / update / none); the bank never reaches a dataset.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from pathlib import Path
from typing import Any

Frames = tuple[tuple[str, "re.Pattern[str]"], ...]


def _pattern(template: str) -> re.Pattern[str]:
    """`template` as a regular expression: its text literal, each field any text."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if name is not None:
            out.append("(.+?)")
    return re.compile("".join(out), re.S)


def bank_frames(phrasings: str) -> Frames:
    """(label, pattern) of each template of the bank that writes a turn the writer reads:
    announcements (by how: first, repeat, change, add), feedback and distractors."""
    from mags_lib.game.phrasing import bank

    b = bank(phrasings)
    frames = [(f"announce/{how}: {t}", t) for how, ts in b.announce.items() for t in ts]
    frames += [(f"feedback: {t}", t) for pair in b.feedback for t in pair]
    frames += [(f"distractor: {t}", t) for t in b.distractors]
    return tuple((label, _pattern(t)) for label, t in frames)


def frame_of(text: str, frames: Frames) -> str:
    """The label of the first of `frames` (`bank_frames`) that `text` is an instance of
    ('other' when none).

    >>> frames = (("change: The crow corrects itself: {rule}", _pattern("The crow corrects itself: {rule}")),)
    >>> frame_of("The crow corrects itself: the cat eats pears.", frames)
    'change: The crow corrects itself: {rule}'
    >>> frame_of("A crow lands.", frames)
    'other'
    """
    for label, pattern in frames:
        if pattern.fullmatch(text.strip()):
            return label
    return "other"


def judge_bank_writer(phrasings: str, rows: list[dict], write_llm: Any, *,
                      max_tokens: int = 96) -> dict[str, Any]:
    """`role_judge.judge_write` on `rows`, write rows of the bank `phrasings` (as
    `heldout_write_rows` builds them), with `frames`: per template, the turns, their gold ops,
    the op accuracy and the errors (gold -> chosen). Worst frames first."""
    from mags_lib.evaluation.role_judge import judge_write
    from mags_lib.game.phrasing import bank_id

    report = judge_write(write_llm, rows, max_tokens=max_tokens, per_row=True)
    frames_of = bank_frames(phrasings)
    by_frame: dict[str, list[dict[str, str]]] = {}
    for row, op in zip(rows, report["ops"], strict=True):
        by_frame.setdefault(frame_of(row["gold"]["observation"], frames_of), []).append(op)
    frames = []
    for label, ops in by_frame.items():
        right = sum(o["gold"] == o["chosen"] for o in ops)
        errors = Counter(f"{o['gold']} -> {o['chosen']}" for o in ops if o["gold"] != o["chosen"])
        frames.append({"frame": label, "n": len(ops), "accuracy": right / len(ops),
                       "gold_ops": dict(Counter(o["gold"] for o in ops)),
                       "errors": dict(errors)})
    frames.sort(key=lambda f: (f["accuracy"], -f["n"]))
    return {"bank": bank_id(phrasings), "source": str(phrasings), "model": getattr(write_llm, "name", type(write_llm).__name__),
            **report, "frames": frames}


def write_model_path(spec: str = "auto") -> Path:
    """The write model's GGUF: 'auto' is notebook 04's (as the closed loop loads it), else a
    .gguf path; a clear error where there is none."""
    from mags_lib.checkpoints import final_model_name
    from mags_lib.errors import MagsError
    from mags_lib.evaluation.answer_model import find_gguf

    path = find_gguf(final_model_name("write")) if spec == "auto" else Path(spec)
    if path is None or not path.is_file():
        where = "models/gguf/write-*.gguf" if spec == "auto" else spec
        raise MagsError(f"no write model to judge: {where} not found",
                        "run notebooks 03 and 04 (make reproduce) or name a .gguf with "
                        "--write-model")
    return path


def is_deployed(path: Path) -> bool:
    """Whether `path` is the write model the closed loop loads (notebook 04's selected GGUF)."""
    from mags_lib.checkpoints import final_model_name
    from mags_lib.evaluation.answer_model import find_gguf

    deployed = find_gguf(final_model_name("write"))
    return deployed is not None and Path(path).resolve() == deployed.resolve()


def report_name(path: Path, deployed: bool) -> str:
    """The report's file in the bank's results folder: `writer.json` for the deployed write
    model (the one the README's bank line reads), `writer-<file stem>.json` for any other,
    so judging another model never replaces the deployed model's report.

    >>> report_name(Path("models/gguf/write-grpo-q8_0.gguf"), True)
    'writer.json'
    >>> report_name(Path("/tmp/my writer.gguf"), False)
    'writer-my_writer.json'
    """
    if deployed:
        return "writer.json"
    return "writer-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(path).stem) + ".json"


def write_model(spec: str = "auto") -> Any:
    """The write model to judge, found (`write_model_path`) and loaded as play loads it."""
    return load_write_model(write_model_path(spec))


def load_write_model(path: Path) -> Any:
    """A write model's GGUF at `path` (found by `write_model_path`), loaded as play loads it."""
    from mags_lib.llm import LLMConfig, load_llm

    return load_llm(LLMConfig(model=str(path), n_ctx=1024))


def frames_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: op accuracy and confusion, then one row per frame."""
    import json

    who = report.get("model_file") or report["model"]
    role = "" if report.get("deployed", True) else " (not the deployed write model)"
    out = [f"Write model `{who}`{role} alone on bank `{report['bank']}`: {report['n']} "
           f"turns, op accuracy {report['op_accuracy']:.3f}, parsed {report['parsed']:.3f}",
           "", "op confusion (gold -> chosen): " + json.dumps(report["op_confusion"]), "",
           "| frame | turns | gold ops | op accuracy | errors (gold -> chosen) |",
           "|---|---|---|---|---|"]
    for f in report["frames"]:
        gold = ", ".join(f"{k} {v}" for k, v in sorted(f["gold_ops"].items()))
        errors = ", ".join(f"{k}: {v}" for k, v in f["errors"].items()) or "–"
        frame = f["frame"].replace("|", "\\|")
        out.append(f"| {frame} | {f['n']} | {gold} | {f['accuracy']:.3f} | {errors} |")
    return "\n".join(out)
