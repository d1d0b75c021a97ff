"""Held-out chat prompts for checking an exported model against its source checkpoint.

    prompts = heldout_prompts(n=8)          # test/val rows of data/synth/, else built-in ones

Prompts come from the held-out splits written by notebook 01 (`<task>/test.jsonl`, then
`val.jsonl`), one task after another so every task is represented; when there is no data yet,
a fixed built-in set in the style of the game (memory facts, recall, answers) is used instead.
"""

from __future__ import annotations

import json
from itertools import chain, zip_longest
from pathlib import Path

_SYSTEM = ("You are an agent in a text game with a memory. Facts you know: the red door opens "
           "with the brass key; the guard sleeps at night; mushrooms near the well are poison.")
BUILTIN_PROMPTS: list[list[dict[str, str]]] = [
    [{"role": "user", "content": q}] for q in (
        "What is the capital of France? Answer in one sentence.",
        "Name three colours of the rainbow.",
        "Write one sentence about a cat that finds a key.",
        "If a rule says red means stop, what should you do at a red light?",
        "Summarise in one line: the door was locked, so Ana used the brass key.",
        "Give a short tip for remembering facts.",
        "What is 12 plus 7?",
        "List two things you might find in a kitchen.",
    )
] + [
    [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": q}] for q in (
        "How do I open the red door?",
        "Is it safe to eat the mushrooms near the well?",
        "When is the best time to pass the guard?",
        "Which fact in your memory is about the well?",
    )
]


def _jsonl_prompts(path: Path) -> list[list[dict[str, str]]]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            prompt = json.loads(line).get("prompt")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(prompt, list) and prompt and all(
                isinstance(m, dict) and {"role", "content"} <= set(m) for m in prompt):
            out.append([{"role": m["role"], "content": str(m["content"])} for m in prompt])
    return out


def heldout_prompts(n: int, data_dir: str | Path | None = None) -> list[list[dict[str, str]]]:
    """Up to `n` chat prompts: held-out rows interleaved across tasks, or the built-in set."""
    per_task = []
    if data_dir is not None and Path(data_dir).is_dir():
        for task_dir in sorted(p for p in Path(data_dir).iterdir() if p.is_dir()):
            split = next((task_dir / f for f in ("test.jsonl", "val.jsonl")
                          if (task_dir / f).is_file()), None)
            if split is not None:
                per_task.append(_jsonl_prompts(split))
    mixed = [p for p in chain.from_iterable(zip_longest(*per_task)) if p is not None]
    return (mixed or BUILTIN_PROMPTS)[:n]
